package search

import (
	"fmt"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// A long passage is cut to the window around the best chunk's sentence that
// holds most query terms, in whole sentences, within the cap; without such
// a sentence the window is the best chunk's middle; a short one is whole.
func TestCentreWindow(t *testing.T) {
	var b strings.Builder
	for i := range 60 {
		fmt.Fprintf(&b, "Filler sentence number %d says nothing of note here. ", i)
		if i == 40 {
			b.WriteString("Parental leave is sixteen weeks at full pay for every parent. ")
		}
	}
	text := []rune(b.String())
	whole := segment{0, len(text)}
	start, end := centreWindow(text, whole, "how many weeks of parental leave", 400)
	got := string(text[start:end])
	if !strings.Contains(got, "Parental leave is sixteen weeks") || end-start > 400 {
		t.Errorf("window %d..%d (%d runes) %q", start, end, end-start, got)
	}
	if !strings.HasPrefix(got, "Filler") || !strings.HasSuffix(got, ".") {
		t.Errorf("window does not start and end at sentence boundaries: %q", got)
	}

	// The matching sentence lies outside the best chunk: the chunk wins.
	focus := segment{0, 500}
	start, end = centreWindow(text, focus, "how many weeks of parental leave", 400)
	if s := string(text[start:end]); strings.Contains(s, "sixteen") || start > 250 {
		t.Errorf("window %d..%d left the best chunk 0..500: %q", start, end, s)
	}

	start, end = centreWindow(text, whole, "zebra", len(text))
	if start != 0 || end != len(text) {
		t.Errorf("a passage within the cap was cut to %d..%d", start, end)
	}
}

// Results longer than the cap carry the centred text and its char range.
func TestCentreResults(t *testing.T) {
	raw := strings.Repeat("Nothing to see in this line.\n", 40) + "The answer is forty-two.\n" + strings.Repeat("More lines follow here.\n", 40)
	res := []Result{{raw: raw, focus: segment{0, len([]rune(raw))}, Snippet: collapseSpace(raw), CharStart: 1000, CharEnd: 1000 + len([]rune(raw))}}
	centre(res, "what is the answer", 300, nil)
	r := res[0]
	if len([]rune(r.Snippet)) > 300 || !strings.Contains(r.Snippet, "The answer is forty-two.") {
		t.Errorf("snippet %q", r.Snippet)
	}
	if span := collapseSpace(string([]rune(raw)[r.CharStart-1000 : r.CharEnd-1000])); span != r.Snippet {
		t.Errorf("char range %d..%d holds %q, not the snippet", r.CharStart, r.CharEnd, span)
	}
	if r.raw != "" {
		t.Error("the raw text is left on the result")
	}
}

// PassageCap cuts a longer passage around its answer.
func TestCentrePassageCap(t *testing.T) {
	raw := strings.Repeat("Nothing to see in this line.\n", 80) + "The answer is forty-two.\n" + strings.Repeat("More lines follow here.\n", 80)
	n := len([]rune(raw))
	if n <= PassageCap {
		t.Fatalf("test passage of %d runes is within the cap", n)
	}
	res := []Result{{raw: raw, focus: segment{0, n}, Snippet: collapseSpace(raw), CharEnd: n}}
	centre(res, "what is the answer", PassageCap, nil)
	r := res[0]
	if got := len([]rune(r.Snippet)); got > PassageCap || !strings.Contains(r.Snippet, "forty-two") {
		t.Errorf("snippet of %d runes (want at most %d), answer kept: %v", got, PassageCap, strings.Contains(r.Snippet, "forty-two"))
	}
	if r.CharEnd-r.CharStart > PassageCap {
		t.Errorf("char range %d..%d is longer than %d", r.CharStart, r.CharEnd, PassageCap)
	}
}

// rotaTable is a week-by-week table whose row 13 answers "who is on call
// in week 13" only with its header: the row itself has no query word.
func rotaTable(weeks int) string {
	var b strings.Builder
	b.WriteString("# On-call rota\n\nThe primary answers pages within 15 minutes.\n\n| Week | Primary | Secondary |\n|---|---|---|\n")
	for w := 1; w <= weeks; w++ {
		fmt.Fprintf(&b, "| %d | Person %c%c (ext. %d) | Backup %d |\n", w, 'A'+w%26, 'a'+w%26, 4400+w, w)
	}
	return b.String()
}

// A long table is cut around the row the query names, in whole rows, and
// the row comes with its header.
func TestCentreTableRow(t *testing.T) {
	raw := rotaTable(120)
	n := len([]rune(raw))
	res := []Result{{raw: raw, focus: segment{0, n}, Snippet: collapseSpace(raw), CharEnd: n}}
	if err := centre(res, "who is on call in week 73", 600, nil); err != nil {
		t.Fatal(err)
	}
	got := res[0].Snippet
	lines := strings.Split(got, "\n")
	if lines[0] != "| Week | Primary | Secondary |" || lines[1] != "|---|---|---|" {
		t.Errorf("the header does not come first:\n%s", got)
	}
	if !strings.Contains(got, "\n| 73 | Person") {
		t.Errorf("row 73 missing:\n%s", got)
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "|") || !strings.HasSuffix(l, "|") {
			t.Errorf("a row is cut: %q", l)
		}
	}
}

// A window that starts with the table's header, or outside a table, gets
// no header repeated.
func TestHeadAboveNone(t *testing.T) {
	text := []rune(rotaTable(3))
	for _, at := range []int{0, strings.Index(rotaTable(3), "| Week")} {
		h, err := headAbove(text, at, 0, Result{}, nil)
		if err != nil || h != "" {
			t.Errorf("at %d: header %q, %v", at, h, err)
		}
	}
	at := len([]rune(rotaTable(2)))
	if h, _ := headAbove(text, at, 0, Result{}, nil); h != "| Week | Primary | Secondary |\n|---|---|---|" {
		t.Errorf("row 3: header %q", h)
	}
}

// A passage that starts inside a table takes the header from the chunk
// before it.
func TestHeadAboveFromChunkBefore(t *testing.T) {
	text := rotaTable(150)
	snap := buildSnapshot(t, 1, func(int) (string, string) { return "rota.md", text }, func(int) []float32 {
		v := make([]float32, testDim)
		v[0] = 1
		return v
	})
	src := &chunks{snap: snap, heads: map[int64]schema.Record{}}
	rec, _, err := snap.FileChunk("rota.md", 2)
	if err != nil {
		t.Fatal(err)
	}
	body := []rune(rec.Text)
	at := 0
	for i, r := range body {
		if r == '\n' {
			at = i + 1 // the first whole row
			break
		}
	}
	h, err := headAbove(body, at, rec.CharStart, Result{Path: "rota.md", Chunks: []int{2}}, src)
	if err != nil || h != "| Week | Primary | Secondary |\n|---|---|---|" {
		t.Errorf("header %q, %v", h, err)
	}
	// Without the chunk before (the passage starts the document), none is made up.
	if h, _ := headAbove(body, at, rec.CharStart, Result{Path: "rota.md", Chunks: []int{2}}, nil); h != "" {
		t.Errorf("without a source: header %q", h)
	}
}
