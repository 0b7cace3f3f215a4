package eval

import (
	"slices"
	"testing"
)

// Top files count each file once at its best passage; parity tells a
// reordering from another set of files, and refuses runs of other
// questions.
func TestCompareTopFiles(t *testing.T) {
	hits := func(paths ...string) []Hit {
		var hs []Hit
		for _, p := range paths {
			hs = append(hs, Hit{Path: p})
		}
		return hs
	}
	if got := TopFiles(hits("a", "b", "a", "c", "d", "b", "e", "f"), 5); !slices.Equal(got, []string{"a", "b", "c", "d", "e"}) {
		t.Errorf("TopFiles = %v", got)
	}
	q := func(id string) Question { return Question{ID: id} }
	local := []Outcome{
		{Question: q("same"), Hits: hits("a", "b", "c")},
		{Question: q("order"), Hits: hits("a", "b", "c")},
		{Question: q("set"), Hits: hits("a", "b", "c", "d", "e", "f")},
		{Question: q("sixth"), Hits: hits("a", "a", "b", "c", "d", "e", "x")},
	}
	store := []Outcome{
		{Question: q("same"), Hits: hits("a", "a", "b", "c")},
		{Question: q("order"), Hits: hits("b", "a", "c")},
		{Question: q("set"), Hits: hits("a", "b", "c", "d", "f", "e")},
		{Question: q("sixth"), Hits: hits("a", "b", "c", "d", "e", "y")},
	}
	p, err := CompareTopFiles(local, store, 5)
	if err != nil {
		t.Fatal(err)
	}
	if p.Questions != 4 || p.SameFiles != 3 || p.SameOrder != 2 || !slices.Equal(p.Differ, []string{"set"}) {
		t.Errorf("parity %+v, want 4 questions, 3 same files, 2 same order, set differs", p)
	}
	if _, err := CompareTopFiles(local, store[:3], 5); err == nil {
		t.Error("runs of 4 and 3 outcomes compared")
	}
	if _, err := CompareTopFiles(local[:1], store[1:2], 5); err == nil {
		t.Error("runs of other questions compared")
	}
}
