package eval

import (
	"bufio"
	"bytes"
	"embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"
)

// Question kinds. Identifier questions name a token that occurs in one
// document (an error code, a flag, a Go identifier); keyword questions are
// short keyword queries, some accented or CJK; paraphrase questions ask in
// other words for a fact stated in one document.
const (
	KindIdentifier = "identifier"
	KindKeyword    = "keyword"
	KindParaphrase = "paraphrase"
)

// Question is one line of a question file (questions.jsonl,
// questions-manpages.jsonl).
type Question struct {
	ID     string `json:"id"`
	Kind   string `json:"kind"`
	Query  string `json:"query"`
	Target string `json:"target"` // path relative to the corpus folder
	Answer string `json:"answer"` // a phrase in the target's extracted text

	// Targets are all the files judged relevant, for sets scored by
	// ScoreIR (SciFact); not in the question files.
	Targets []string `json:"-"`
}

//go:embed questions*.jsonl
var questionFiles embed.FS

// The committed question sets.
var (
	// Questions are the godoc corpus's.
	Questions = committedQuestions("questions.jsonl")
	// ManPageQuestions are the man pages'.
	ManPageQuestions = committedQuestions("questions-manpages.jsonl")
	// CrowdedQuestions are the crowded set's.
	CrowdedQuestions = committedQuestions("questions-crowded.jsonl")
	// HeldoutQuestions are the held-out man-page questions: pages no other
	// question targets, written before any model was run on them (issue 25).
	HeldoutQuestions = committedQuestions("questions-heldout.jsonl")
	// SampleQuestions are about testdata/sample.
	SampleQuestions = committedQuestions("questions-sample.jsonl")
	// HandbookQuestions are about the handbook (folders.go).
	HandbookQuestions = committedQuestions("questions-handbook.jsonl")
	// OpsNotesQuestions are about the ops notes (folders.go).
	OpsNotesQuestions = committedQuestions("questions-opsnotes.jsonl")
)

// committedQuestions returns the parser of the committed question file name.
func committedQuestions(name string) func() ([]Question, error) {
	return func() ([]Question, error) {
		b, err := questionFiles.ReadFile(name)
		if err != nil {
			return nil, err
		}
		return parseQuestions(name, b)
	}
}

// QuestionsFile parses a question file in the sets' format, for asking
// another wording of a set (bench/cmd/noise -questions).
func QuestionsFile(path string) ([]Question, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	return parseQuestions(filepath.Base(path), b)
}

func parseQuestions(file string, b []byte) ([]Question, error) {
	var out []Question
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		var q Question
		dec := json.NewDecoder(strings.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&q); err != nil {
			return nil, fmt.Errorf("eval: %s line %d: %w", file, n, err)
		}
		if q.ID == "" || q.Query == "" || q.Target == "" || q.Answer == "" || seen[q.ID] ||
			!slices.Contains([]string{KindIdentifier, KindKeyword, KindParaphrase}, q.Kind) {
			return nil, fmt.Errorf("eval: %s line %d: needs a new id, a known kind, query, target and answer", file, n)
		}
		seen[q.ID] = true
		out = append(out, q)
	}
	return out, sc.Err()
}

// Hit is one search result as the client received it.
type Hit struct {
	Path       string // relative to the corpus folder
	ChunkIndex int
	CharStart  int
	CharEnd    int
	Text       string // the returned passage
	Whole      string // the whole chunk(s) behind it, read from the index
	Why        string // the score's parts, when the search explained them
	Score      float64
}

// Outcome is one question's ranked hits and how long the search took.
type Outcome struct {
	Question Question
	Hits     []Hit
	Latency  time.Duration
	// Text is the tool result's text content and TextBlocks its results
	// as that text shows them; Structured is its structuredContent as
	// compact JSON. A client hands its model one of the two.
	Text       string
	TextBlocks []TextBlock
	Structured string
}

// TextBlock is one result in a tool result's text: the file it cites
// and the text from that citation to the next result's.
type TextBlock struct {
	Path string
	Text string
}

// TextBlocks splits a tool result's text into its result blocks. A block
// starts at a line that cites one of the returned paths and runs to the
// next such line; the text before the first is no block. A line cites a
// path that opens it after at most a list number and markup ("1. a.md",
// "[2] a.md", "**a.md**"), so a passage naming a file is not taken for a
// citation; a text that cites no path that way is split at any line
// naming one (the first named in it), whatever its layout.
func TextBlocks(text string, paths []string) []TextBlock {
	if b := splitCited(text, paths, true); len(b) > 0 {
		return b
	}
	return splitCited(text, paths, false)
}

// citationPrefix is what may come before a cited path on its line.
var citationPrefix = regexp.MustCompile(`^[\s#>*_\-\[(]*(\d+[.):\]]?[\s*_\[(]*)?$`)

func splitCited(text string, paths []string, strict bool) []TextBlock {
	var blocks []TextBlock
	for _, line := range strings.SplitAfter(text, "\n") {
		at, cited := -1, ""
		for _, p := range paths {
			i := strings.Index(line, p)
			if i < 0 || strict && !citationPrefix.MatchString(line[:i]) {
				continue
			}
			if at < 0 || i < at || i == at && len(p) > len(cited) {
				at, cited = i, p
			}
		}
		switch {
		case at >= 0:
			blocks = append(blocks, TextBlock{Path: cited, Text: line})
		case len(blocks) > 0:
			blocks[len(blocks)-1].Text += line
		}
	}
	return blocks
}

// Scores are the evaluation's figures over a set of outcomes.
type Scores struct {
	Questions    int
	Hit1, Hit5   float64 // share of questions whose target file ranks 1st, in the top 5
	MRR10        float64 // mean of 1/rank of the target's first hit, 0 beyond 10
	Answer5      float64 // share whose answer phrase is in a returned top-5 passage of the target
	Answer5Whole float64 // the same on the whole chunks behind those hits
	TextAnswer5  float64 // share whose answer phrase is in one of the text's first 5 result blocks citing the target
	Identifiers  int
	IdentHit1    float64 // hit@1 over identifier questions
	P50          time.Duration
}

// Rank is the 1-based rank of the first hit from the target file among the
// first 10, or 0.
func Rank(target string, hits []Hit) int {
	for i, h := range hits[:min(10, len(hits))] {
		if h.Path == target {
			return i + 1
		}
	}
	return 0
}

// Contains reports whether phrase occurs in text, ignoring case and
// collapsing runs of white space (extraction and chunking re-flow lines).
func Contains(text, phrase string) bool {
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	return strings.Contains(norm(text), norm(phrase))
}

// answered reports whether a top-5 hit from the target holds the answer,
// in the returned text or (whole) in the chunks behind it.
func answered(o Outcome, whole bool) bool {
	for _, h := range o.Hits[:min(5, len(o.Hits))] {
		t := h.Text
		if whole {
			t = h.Whole
		}
		if h.Path == o.Question.Target && Contains(t, o.Question.Answer) {
			return true
		}
	}
	return false
}

// textAnswered reports whether one of the text's first 5 result blocks
// cites the target and holds the answer.
func textAnswered(o Outcome) bool {
	for _, b := range o.TextBlocks[:min(5, len(o.TextBlocks))] {
		if b.Path == o.Question.Target && Contains(b.Text, o.Question.Answer) {
			return true
		}
	}
	return false
}

// Score computes the figures; it is zero for no outcomes.
func Score(outs []Outcome) Scores {
	s := Scores{Questions: len(outs)}
	if len(outs) == 0 {
		return s
	}
	var lat []time.Duration
	identHits := 0
	for _, o := range outs {
		r := Rank(o.Question.Target, o.Hits)
		if r == 1 {
			s.Hit1++
		}
		if r >= 1 && r <= 5 {
			s.Hit5++
		}
		if r > 0 {
			s.MRR10 += 1 / float64(r)
		}
		if answered(o, false) {
			s.Answer5++
		}
		if answered(o, true) {
			s.Answer5Whole++
		}
		if textAnswered(o) {
			s.TextAnswer5++
		}
		if o.Question.Kind == KindIdentifier {
			s.Identifiers++
			if r == 1 {
				identHits++
			}
		}
		lat = append(lat, o.Latency)
	}
	n := float64(len(outs))
	s.Hit1, s.Hit5, s.MRR10, s.Answer5, s.Answer5Whole = s.Hit1/n, s.Hit5/n, s.MRR10/n, s.Answer5/n, s.Answer5Whole/n
	s.TextAnswer5 /= n
	if s.Identifiers > 0 {
		s.IdentHit1 = float64(identHits) / float64(s.Identifiers)
	}
	slices.Sort(lat)
	s.P50 = lat[(len(lat)-1)/2]
	return s
}

// Row is one line of the results table.
type Row struct {
	Mode string
	Scores
	ByKind map[string]Scores
}

// ScoreRow scores a mode's outcomes overall and per question kind.
func ScoreRow(mode string, outs []Outcome) Row {
	r := Row{Mode: mode, Scores: Score(outs), ByKind: map[string]Scores{}}
	for _, k := range []string{KindIdentifier, KindKeyword, KindParaphrase} {
		var sub []Outcome
		for _, o := range outs {
			if o.Question.Kind == k {
				sub = append(sub, o)
			}
		}
		r.ByKind[k] = Score(sub)
	}
	return r
}

// Table renders rows as the Markdown table printed by make eval.
func Table(rows []Row) string {
	var sb strings.Builder
	sb.WriteString("| mode | hit@1 | hit@5 | MRR@10 | answer@5 client | answer@5 whole-chunk | identifier hit@1 | search p50 ms |\n")
	sb.WriteString("|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f (%d) | %.1f |\n", r.Mode, r.Hit1, r.Hit5, r.MRR10,
			r.Answer5, r.Answer5Whole, r.IdentHit1, r.Identifiers, float64(r.P50.Microseconds())/1000)
	}
	return sb.String()
}

// KindTable renders hit@5 and answer@5 per question kind.
func KindTable(rows []Row) string {
	var sb strings.Builder
	kinds := []string{KindIdentifier, KindKeyword, KindParaphrase}
	sb.WriteString("| mode |")
	for _, k := range kinds {
		fmt.Fprintf(&sb, " %s hit@5 | %s answer@5 client | %s answer@5 whole-chunk |", k, k, k)
	}
	sb.WriteString("\n|---|" + strings.Repeat("---|", 3*len(kinds)) + "\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s |", r.Mode)
		for _, k := range kinds {
			s := r.ByKind[k]
			fmt.Fprintf(&sb, " %.3f | %.3f | %.3f |", s.Hit5, s.Answer5, s.Answer5Whole)
		}
		sb.WriteString("\n")
	}
	return sb.String()
}

// CheckAnswers returns one line per question whose target is not a corpus
// document or whose answer phrase is not in the target's text as text(path)
// gives it; text is the extractor for the real check.
func CheckAnswers(qs []Question, docs []Document, text func(path string) (string, error)) []string {
	known := map[string]bool{}
	for _, d := range docs {
		known[d.Path()] = true
	}
	var bad []string
	cache := map[string]string{}
	for _, q := range qs {
		if !known[q.Target] {
			bad = append(bad, fmt.Sprintf("%s: target %s is not in the corpus", q.ID, q.Target))
			continue
		}
		t, ok := cache[q.Target]
		if !ok {
			var err error
			if t, err = text(q.Target); err != nil {
				bad = append(bad, fmt.Sprintf("%s: %v", q.ID, err))
				continue
			}
			cache[q.Target] = t
		}
		if !Contains(t, q.Answer) {
			bad = append(bad, fmt.Sprintf("%s: answer %q is not in %s", q.ID, q.Answer, q.Target))
		}
	}
	return bad
}

// TradeOff is one run at one setting: how well it answers, how often an
// answerable question gets nothing, and how often a query the folder does
// not answer does (Silent of NoAnswers returned nothing).
type TradeOff struct {
	Run               string
	IR                bool
	Scores            Scores   // answer sets
	IRScores          IRScores // IR sets
	Nothing           float64  // share of answerable questions that returned nothing
	NoAnswers, Silent int
}

// NewTradeOff scores one run's answerable outcomes, and counts the
// no-answer outcomes that returned nothing.
func NewTradeOff(run string, ir bool, outs, noAnswers []Outcome) TradeOff {
	t := TradeOff{Run: run, IR: ir, NoAnswers: len(noAnswers)}
	if ir {
		t.IRScores = ScoreIR(outs)
	} else {
		t.Scores = Score(outs)
	}
	for _, o := range outs {
		if len(o.Hits) == 0 {
			t.Nothing++
		}
	}
	if len(outs) > 0 {
		t.Nothing /= float64(len(outs))
	}
	for _, o := range noAnswers {
		if len(o.Hits) == 0 {
			t.Silent++
		}
	}
	return t
}

// TradeOffTable renders one row per run: the answers' figures, the share
// of answerable questions returning nothing, and no-answer precision.
func TradeOffTable(rows []TradeOff) string {
	var sb strings.Builder
	if len(rows) > 0 && rows[0].IR {
		sb.WriteString("| run | nDCG@10 | Recall@10 | MRR@10 | returned nothing | no-answer precision |\n|---|---|---|---|---|---|\n")
	} else {
		sb.WriteString("| run | hit@5 | MRR@10 | answer@5 structured | text_answer@5 | returned nothing | no-answer precision |\n|---|---|---|---|---|---|---|\n")
	}
	for _, r := range rows {
		precision := "–"
		if r.NoAnswers > 0 {
			precision = fmt.Sprintf("%.3f (%d/%d)", float64(r.Silent)/float64(r.NoAnswers), r.Silent, r.NoAnswers)
		}
		if r.IR {
			fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f | %s |\n", r.Run, r.IRScores.NDCG10, r.IRScores.R10, r.IRScores.MRR10, r.Nothing, precision)
			continue
		}
		fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %s |\n", r.Run, r.Scores.Hit5, r.Scores.MRR10,
			r.Scores.Answer5, r.Scores.TextAnswer5, r.Nothing, precision)
	}
	return sb.String()
}
