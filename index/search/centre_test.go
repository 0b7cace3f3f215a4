package search

import (
	"fmt"
	"strings"
	"testing"
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
	centre(res, "what is the answer", 300)
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

// A cap of 0 is DefaultPassageCap; a negative cap keeps passages whole.
func TestCentreDefaultCap(t *testing.T) {
	raw := strings.Repeat("Nothing to see in this line.\n", 80) + "The answer is forty-two.\n" + strings.Repeat("More lines follow here.\n", 80)
	n := len([]rune(raw))
	if n <= DefaultPassageCap {
		t.Fatalf("test passage of %d runes is within the default cap", n)
	}
	for _, c := range []struct{ limit, want int }{{0, DefaultPassageCap}, {-1, n}} {
		res := []Result{{raw: raw, focus: segment{0, n}, Snippet: collapseSpace(raw), CharEnd: n}}
		centre(res, "what is the answer", c.limit)
		r := res[0]
		if got := len([]rune(r.Snippet)); got > c.want || c.limit < 0 && got != n-1 || !strings.Contains(r.Snippet, "forty-two") {
			t.Errorf("cap %d: snippet of %d runes (want at most %d), answer kept: %v", c.limit, got, c.want, strings.Contains(r.Snippet, "forty-two"))
		}
		if c.limit == 0 && r.CharEnd-r.CharStart > DefaultPassageCap {
			t.Errorf("default cap: char range %d..%d is longer than %d", r.CharStart, r.CharEnd, DefaultPassageCap)
		}
	}
}
