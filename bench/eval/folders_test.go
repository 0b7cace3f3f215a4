package eval

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

// stopWords are the function words a paraphrase may share with its
// target: articles, pronouns, auxiliaries, prepositions, conjunctions,
// question words and contraction tails.
var stopWords = map[string]bool{}

func init() {
	for _, w := range strings.Fields(`a an the and or but if of to in on at by for from with without
		into out off up down over under about after before during while as than then so not no nor
		is are was were be been being am do does did done have has had having get gets got
		i me my mine myself we us our you your he him his she her it its they them their
		this that these those there here what which who whom whose when where why how
		can could may might must shall should will would any some all each every much many more most
		other another such only own same too very just s t m re ve ll d don doesn didn isn aren won`) {
		stopWords[w] = true
	}
}

// irregular maps irregular verb forms to their base, so that "took"
// counts as sharing a word with "take".
var irregular = map[string]string{
	"took": "take", "taken": "take", "broke": "break", "broken": "break", "sent": "send",
	"kept": "keep", "paid": "pay", "held": "hold", "made": "make", "went": "go", "gone": "go",
	"found": "find", "ran": "run", "woke": "wake", "woken": "wake", "bought": "buy", "left": "leave",
	"spent": "spend", "told": "tell", "drove": "drive", "driven": "drive", "gave": "give",
	"given": "give", "lost": "lose", "meant": "mean", "wrote": "write", "written": "write",
	"chose": "choose", "chosen": "choose", "met": "meet", "grew": "grow", "grown": "grow",
	"began": "begin", "begun": "begin", "brought": "bring", "caught": "catch", "sold": "sell",
}

// inflectionStems are the forms a word may be an inflection of: the word,
// its irregular base, and the word without each inflectional ending (with
// the y, e or doubled consonant it may have lost). Two words share when
// their stems meet; over-folding only makes the check stricter.
func inflectionStems(w string) []string {
	out := []string{w}
	if b, ok := irregular[w]; ok {
		out = append(out, b)
	}
	for _, suf := range []string{"s", "es", "ies", "d", "ed", "ied", "ing", "er", "ers", "est"} {
		stem, ok := strings.CutSuffix(w, suf)
		if !ok || utf8.RuneCountInString(stem) < 3 {
			continue
		}
		out = append(out, stem)
		switch suf {
		case "ies", "ied":
			out = append(out, stem+"y")
		case "ed", "ing", "er", "ers", "est":
			out = append(out, stem+"e")
			if n := len(stem); n >= 2 && stem[n-1] == stem[n-2] {
				out = append(out, stem[:n-1])
			}
		}
	}
	return out
}

var wordRun = regexp.MustCompile(`[\p{L}\p{N}]+`)

// contentWords are text's words, lower-cased, without stop words and
// single letters.
func contentWords(text string) []string {
	var out []string
	for _, w := range wordRun.FindAllString(strings.ToLower(text), -1) {
		if utf8.RuneCountInString(w) > 1 && !stopWords[w] {
			out = append(out, w)
		}
	}
	return out
}

// sharedWords are the content words of query that are, up to inflection,
// words of text.
func sharedWords(query, text string) []string {
	stems := map[string]bool{}
	for _, w := range contentWords(text) {
		for _, s := range inflectionStems(w) {
			stems[s] = true
		}
	}
	var shared []string
	for _, w := range contentWords(query) {
		if slices.ContainsFunc(inflectionStems(w), func(s string) bool { return stems[s] }) {
			shared = append(shared, w)
		}
	}
	return shared
}

// The fold counts the pairs as shared and leaves other words apart.
func TestSharedWordsFoldsInflections(t *testing.T) {
	for _, c := range []struct {
		query, text string
		want        []string
	}{
		{"printer", "Printers on each floor", []string{"printer"}},
		{"gift from a supplier", "Gifts from suppliers must be declared", []string{"gift", "supplier"}},
		{"Is it declared?", "you declare it", []string{"declared"}},
		{"carried over", "carry", []string{"carried"}},
		{"leaving early", "annual leave", []string{"leaving"}},
		{"who took it", "take the train", []string{"took"}},
		{"a longer stay", "how long", []string{"longer"}},
		{"What's the policy on presents from vendors?", "Gifts from suppliers worth more than 50 euros", nil},
		{"Is my salary continued while I'm ill?", "Sick days are paid in full", nil},
	} {
		if got := sharedWords(c.query, c.text); !slices.Equal(got, c.want) {
			t.Errorf("sharedWords(%q, %q) = %q, want %q", c.query, c.text, got, c.want)
		}
	}
}

// TestFolderSets checks the small-folder sets as the issue asks: 8 to 30
// files with a markdown table among them, at least 60 questions, each
// answer phrase verbatim (up to white space) in its target file, a third
// or more paraphrases that share no content word with their target, and
// 20 or more no-answer queries of their own.
func TestFolderSets(t *testing.T) {
	for _, s := range []struct {
		name string
		dir  string
		load func() ([]Question, error)
	}{
		{"handbook", HandbookDir, HandbookQuestions},
		{"opsnotes", OpsNotesDir, OpsNotesQuestions},
	} {
		dir := strings.TrimPrefix(s.dir, "bench/eval/")
		entries, err := os.ReadDir(dir)
		if err != nil {
			t.Fatal(err)
		}
		files := map[string]string{}
		table := false
		for _, e := range entries {
			b, err := os.ReadFile(filepath.Join(dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			files[e.Name()] = string(b)
			table = table || filepath.Ext(e.Name()) == ".md" && strings.Contains(string(b), "\n|---")
		}
		if len(files) < 8 || len(files) > 30 || !table {
			t.Errorf("%s: %d files, a markdown table %v; want 8 to 30 files and a table", s.name, len(files), table)
		}
		qs := mustLoad(t, s.load)
		paraphrases := 0
		for _, q := range qs {
			text, ok := files[q.Target]
			if !ok {
				t.Errorf("%s %s: target %s is not in %s", s.name, q.ID, q.Target, dir)
				continue
			}
			if !strings.Contains(strings.Join(strings.Fields(text), " "), q.Answer) {
				t.Errorf("%s %s: answer %q is not in %s", s.name, q.ID, q.Answer, q.Target)
			}
			if q.Kind != KindParaphrase {
				continue
			}
			paraphrases++
			if w := sharedWords(q.Query, text); len(w) > 0 {
				t.Errorf("%s %s: paraphrase %q shares %q with %s", s.name, q.ID, q.Query, w, q.Target)
			}
		}
		if len(qs) < 60 || 3*paraphrases < len(qs) {
			t.Errorf("%s: %d questions, %d paraphrases; want at least 60, a third paraphrases", s.name, len(qs), paraphrases)
		}
		nas, err := NoAnswers(s.name)
		if err != nil {
			t.Fatal(err)
		}
		own := 0
		for _, q := range nas {
			if q.Sets == s.name {
				own++
			}
		}
		if own < 20 {
			t.Errorf("%s: %d no-answer queries of its own; want at least 20", s.name, own)
		}
	}
}
