package eval

import (
	"context"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestScoreHandMadeRanking(t *testing.T) {
	q := func(id, kind, target, answer string) Question {
		return Question{ID: id, Kind: kind, Query: id, Target: target, Answer: answer}
	}
	outs := []Outcome{
		// Target first, answer in the returned passage.
		{Question: q("a", KindIdentifier, "a.txt", "Error  QX-1"), Latency: 3 * time.Millisecond,
			Hits: []Hit{{Path: "a.txt", Text: "the error\nqx-1 happened", Whole: "the error qx-1 happened"}}},
		// Target third; the passage was cut but the whole chunk has the answer.
		{Question: q("b", KindParaphrase, "b.md", "blue whale"), Latency: 1 * time.Millisecond,
			Hits: []Hit{{Path: "x.md"}, {Path: "y.md"}, {Path: "b.md", Text: "the blue", Whole: "the blue whale"}}},
		// Target sixth: counts for MRR only.
		{Question: q("c", KindIdentifier, "c.pdf", "zzz"), Latency: 2 * time.Millisecond,
			Hits: []Hit{{Path: "1"}, {Path: "2"}, {Path: "3"}, {Path: "4"}, {Path: "5"}, {Path: "c.pdf", Text: "zzz", Whole: "zzz"}}},
		// Target absent; another file holds the phrase, which does not count.
		{Question: q("d", KindParaphrase, "d.docx", "answer"), Latency: 9 * time.Millisecond,
			Hits: []Hit{{Path: "e.docx", Text: "answer", Whole: "answer"}}},
	}
	s := Score(outs)
	near := func(name string, got, want float64) {
		if math.Abs(got-want) > 1e-9 {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	near("hit@1", s.Hit1, 1.0/4)
	near("hit@5", s.Hit5, 2.0/4)
	near("MRR@10", s.MRR10, (1+1.0/3+1.0/6)/4)
	near("answer@5", s.Answer5, 1.0/4)
	near("answer@5 whole", s.Answer5Whole, 2.0/4)
	near("identifier hit@1", s.IdentHit1, 1.0/2)
	if s.Identifiers != 2 || s.Questions != 4 {
		t.Errorf("counted %d identifiers of %d questions", s.Identifiers, s.Questions)
	}
	if s.P50 != 2*time.Millisecond {
		t.Errorf("p50 = %v, want 2ms", s.P50)
	}
	if z := Score(nil); z.Questions != 0 || z.Hit1 != 0 {
		t.Errorf("Score(nil) = %+v", z)
	}
	row := ScoreRow("hybrid", outs)
	near("identifier hit@5", row.ByKind[KindIdentifier].Hit5, 1.0/2)
	near("paraphrase answer@5 whole", row.ByKind[KindParaphrase].Answer5Whole, 1.0/2)
	if row.ByKind[KindKeyword].Questions != 0 {
		t.Errorf("keyword kind has %d questions", row.ByKind[KindKeyword].Questions)
	}
	if kt := KindTable([]Row{row}); !strings.Contains(kt, "| hybrid | 0.500 | 0.500 | 0.500 | 0.000 | 0.000 | 0.000 | 0.500 | 0.000 | 0.500 |") {
		t.Errorf("kind table:\n%s", kt)
	}
	table := Table([]Row{row})
	if !strings.Contains(table, "| hybrid | 0.250 | 0.500 | 0.375 | 0.250 | 0.500 | 0.500 (2) | 2.0 |") {
		t.Errorf("table:\n%s", table)
	}
}

func TestChunksAndFillWhole(t *testing.T) {
	dir := t.TempDir()
	manifest := strings.Join([]string{
		`{"id":1,"path":"a.txt","chunk_index":0,"char_start":0,"char_end":10,"text":"first one."}`,
		`{"id":2,"path":"a.txt","chunk_index":1,"char_start":8,"char_end":20,"text":"e. second."}`,
		`{"id":3,"path":"a.txt","chunk_index":2,"char_start":18,"char_end":30,"text":"d. third."}`,
		`{"id":2,"path":"a.txt","deleted":true}`,
		`{"id":4,"path":"a.txt","chunk_index":1,"char_start":8,"char_end":20,"text":"e. SECOND."}`,
		`{"id":5,"path":"b.txt","chunk_index":0`, // torn last line: ignored
	}, "\n")
	if err := os.WriteFile(filepath.Join(dir, "manifest.jsonl"), []byte(manifest), 0o644); err != nil {
		t.Fatal(err)
	}
	chunks, err := Chunks(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(chunks) != 1 || len(chunks["a.txt"]) != 3 {
		t.Fatalf("chunks = %+v", chunks)
	}
	outs := []Outcome{{Hits: []Hit{
		{Path: "a.txt", ChunkIndex: 1, CharStart: 8, CharEnd: 20},
		{Path: "a.txt", ChunkIndex: 0, CharStart: 0, CharEnd: 30}, // merged span
	}}}
	FillWhole(outs, chunks, dir)
	if got := outs[0].Hits[0].Whole; got != "e. SECOND." {
		t.Errorf("single hit whole = %q", got)
	}
	if got := outs[0].Hits[1].Whole; got != "first one.\ne. SECOND.\nd. third." {
		t.Errorf("merged hit whole = %q", got)
	}
}

func TestQuestionSet(t *testing.T) {
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
	}
	if len(qs) < 80 || kinds[KindIdentifier]+kinds[KindKeyword] < 20 || kinds[KindParaphrase] < 40 {
		t.Errorf("%d questions by kind %v; want ≥ 80, ≥ 20 identifier or keyword, ≥ 40 paraphrase", len(qs), kinds)
	}
	if _, err := parseQuestions("test", []byte(`{"id":"x","kind":"guess","query":"q","target":"t","answer":"a"}`)); err == nil {
		t.Error("an unknown kind was accepted")
	}
	if _, err := parseQuestions("test", []byte(`{"id":"x","kind":"keyword","query":"q","target":"t"}`)); err == nil {
		t.Error("a question without an answer was accepted")
	}
}

// TestAnswersInDocuments checks the question set against the generated
// documents' text without converting anything: every target exists and holds
// its answer phrase, and an identifier's answer is in no other document.
// make eval repeats the first check on the extracted text of the real files.
func TestAnswersInDocuments(t *testing.T) {
	goroot, _, err := GoRoot(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	docs, err := Documents(goroot)
	if err != nil {
		t.Fatal(err)
	}
	again, err := Documents(goroot)
	if err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	for i, d := range docs {
		counts[d.Ext]++
		if again[i].Path() != d.Path() || again[i].source() != d.source() {
			t.Fatalf("document %d differs between two builds: %s, %s", i, d.Path(), again[i].Path())
		}
	}
	if len(docs) < 200 || len(counts) != 4 {
		t.Errorf("%d documents by type %v; want ≥ 200 of txt, md, pdf and docx", len(docs), counts)
	}
	qs, err := Questions()
	if err != nil {
		t.Fatal(err)
	}
	text := map[string]string{}
	for _, d := range docs {
		text[d.Path()] = d.Text()
	}
	for _, bad := range CheckAnswers(qs, docs, func(p string) (string, error) { return text[p], nil }) {
		t.Error(bad)
	}
	for _, q := range qs {
		if q.Kind != KindIdentifier {
			continue
		}
		var in []string
		for p, tx := range text {
			if Contains(tx, q.Answer) {
				in = append(in, p)
			}
		}
		if len(in) > 1 {
			t.Errorf("%s: identifier answer %q is in %d documents: %v", q.ID, q.Answer, len(in), in)
		}
	}
}

// TestManPageQuestionSet checks the man-page set without rendering
// anything: every question is a paraphrase with its own id, every target
// is a page of manpages.txt under the file name and type the corpus gives
// it, and the targets cover all three types. make eval-manpages checks the
// answer phrases against the extracted text of the rendered files.
func TestManPageQuestionSet(t *testing.T) {
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	types := map[string]int{}
	for _, p := range pages {
		d := p.Doc()
		if paths[d.Path()] {
			t.Errorf("two pages make %s", d.Path())
		}
		paths[d.Path()] = true
		types[d.Ext]++
	}
	if len(pages) < 250 {
		t.Errorf("%d pages; want about 300", len(pages))
	}
	for _, ext := range []string{".txt", ".md", ".pdf"} {
		if n := types[ext]; n < len(pages)/4 {
			t.Errorf("%d of %d pages are %s; want about a third", n, len(pages), ext)
		}
	}
	qs, err := ManPageQuestions()
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) < 60 {
		t.Errorf("%d questions; want at least 60", len(qs))
	}
	targets := map[string]int{}
	for _, q := range qs {
		if q.Kind != KindParaphrase {
			t.Errorf("%s is a %s question; the man-page set is all paraphrases", q.ID, q.Kind)
		}
		if !paths[q.Target] {
			t.Errorf("%s: target %s is not a page of manpages.txt", q.ID, q.Target)
		}
		targets[q.Target]++
	}
	byType := map[string]int{}
	for p := range targets {
		byType[filepath.Ext(p)]++
	}
	if len(targets) < 50 || len(byType) != 3 {
		t.Errorf("questions target %d pages, by type %v; want about 60 pages of all three types", len(targets), byType)
	}
}

func TestManPagesList(t *testing.T) {
	defer func(s string) { manPageList = s }(manPageList)
	manPageList = "# package: x\ntar.1\n\nopenssl-req.1ssl\nresolv.conf.5\n"
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	want := []ManPage{{"tar", "1"}, {"openssl-req", "1ssl"}, {"resolv.conf", "5"}}
	if len(pages) != len(want) {
		t.Fatalf("pages = %v", pages)
	}
	for i, p := range pages {
		if p != want[i] {
			t.Errorf("page %d = %v, want %v", i, p, want[i])
		}
	}
	if got := pages[1].Source(); got != filepath.Join(ManDir, "man1", "openssl-req.1ssl.gz") {
		t.Errorf("source = %s", got)
	}
	if d := pages[2].Doc(); d.Name != "man5/resolv.conf" {
		t.Errorf("doc name = %s", d.Name)
	}
	for _, bad := range []string{"tar", "tar.", ".1", "tar.x"} {
		manPageList = bad
		if _, err := ManPages(); err == nil {
			t.Errorf("%q was accepted", bad)
		}
	}
}

// TestManMarkdown converts a hand-made rendering with each layout the
// converter reads: header and footer, section and subsection headings, a
// filled paragraph with a hyphen at a line's end, a tag with its text on
// the same line, a tag on a line of its own, and lines kept as set.
func TestManMarkdown(t *testing.T) {
	text := strings.Join([]string{
		"DEMO(1)                      General Commands Manual                     DEMO(1)",
		"",
		"NAME",
		"       demo - show a demo",
		"",
		"SYNOPSIS",
		"       demo [-a] FILE",
		"",
		"       demo -b",
		"",
		"DESCRIPTION",
		"       This paragraph was filled by groff so that every one of its lines is",
		"       full, and one line ends with a hyphen that belongs to words, as in host-",
		"       specific settings.",
		"",
		"   Options",
		"       -a     Read all the files, including the ones whose names begin with a",
		"              dot, and the ones in hidden folders.",
		"",
		"       --bee",
		"              Buzz.",
		"",
		"demo 1.0                           2024-01-02                          DEMO(1)",
	}, "\n")
	want := strings.Join([]string{
		"# demo(1)",
		"",
		"## NAME",
		"",
		"demo - show a demo",
		"",
		"## SYNOPSIS",
		"",
		"```",
		"demo [-a] FILE",
		"",
		"demo -b",
		"```",
		"",
		"## DESCRIPTION",
		"",
		"This paragraph was filled by groff so that every one of its lines is full, and one line ends with a hyphen that belongs to words, as in host-specific settings.",
		"",
		"### Options",
		"",
		"- -a",
		"",
		"  Read all the files, including the ones whose names begin with a dot, and the ones in hidden folders.",
		"",
		"- --bee",
		"",
		"  Buzz.",
		"",
	}, "\n")
	if got := manMarkdown(ManPage{"demo", "1"}, text); got != want {
		t.Errorf("got:\n%s\nwant:\n%s", got, want)
	}
}

func TestScoreIRCountsEachFileOnce(t *testing.T) {
	q := Question{ID: "q", Targets: []string{"a.txt", "b.txt"}}
	// a.txt twice (two passages) then x, then b.txt: documents a, x, b.
	outs := []Outcome{{Question: q, Hits: []Hit{{Path: "x.txt"}, {Path: "a.txt"}, {Path: "x.txt"}, {Path: "b.txt"}}},
		{Question: Question{ID: "r", Targets: []string{"c.txt"}}, Hits: []Hit{{Path: "d.txt"}}}}
	s := ScoreIR(outs)
	ndcg := (1/math.Log2(3) + 1/math.Log2(4)) / (1 + 1/math.Log2(3))
	if math.Abs(s.NDCG10-ndcg/2) > 1e-9 || math.Abs(s.R10-0.5) > 1e-9 || math.Abs(s.MRR10-0.25) > 1e-9 {
		t.Errorf("ScoreIR = %+v, want nDCG %v, R 0.5, MRR 0.25", s, ndcg/2)
	}
}

// Both no-answer files parse, give every set its queries, and share no id
// or query, so the held-out file checks on queries never seen.
func TestNoAnswerFiles(t *testing.T) {
	for _, set := range []string{"godoc", "manpages", "crowded", "scifact", "sample"} {
		tuned, err := NoAnswers(set)
		if err != nil {
			t.Fatal(err)
		}
		held, err := HeldOutNoAnswers(set)
		if err != nil {
			t.Fatal(err)
		}
		if len(tuned) != 45 || len(held) < 27 {
			t.Errorf("%s: %d and %d no-answer queries", set, len(tuned), len(held))
		}
		seen := map[string]bool{}
		for _, q := range tuned {
			seen[q.ID], seen[q.Query] = true, true
		}
		for _, q := range held {
			if seen[q.ID] || seen[q.Query] {
				t.Errorf("%s: held-out %s repeats a tuned query", set, q.ID)
			}
		}
	}
}

// TestHeldoutQuestionSet: the held-out questions target pages of the man
// pages' corpus that the manpages set does not ask about, of every type.
func TestHeldoutQuestionSet(t *testing.T) {
	pages, err := ManPages()
	if err != nil {
		t.Fatal(err)
	}
	paths := map[string]bool{}
	for _, p := range pages {
		paths[p.Doc().Path()] = true
	}
	asked := map[string]bool{}
	for _, q := range mustLoad(t, ManPageQuestions) {
		asked[q.Target] = true
	}
	qs := mustLoad(t, HeldoutQuestions)
	if len(qs) < 40 {
		t.Errorf("%d held-out questions; want at least 40", len(qs))
	}
	byType := map[string]int{}
	for _, q := range qs {
		if !paths[q.Target] {
			t.Errorf("%s: target %s is not a page of manpages.txt", q.ID, q.Target)
		}
		if asked[q.Target] {
			t.Errorf("%s: target %s is asked about by the manpages set too", q.ID, q.Target)
		}
		byType[filepath.Ext(q.Target)]++
	}
	if len(byType) != 3 {
		t.Errorf("held-out targets by type %v; want txt, md and pdf", byType)
	}
}

func mustLoad(t *testing.T, load func() ([]Question, error)) []Question {
	t.Helper()
	qs, err := load()
	if err != nil {
		t.Fatal(err)
	}
	return qs
}
