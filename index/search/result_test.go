package search

import (
	"reflect"
	"strings"
	"testing"
)

// Copies of a passage (the same text, however spaced) fold into the
// best-ranked, which lists every path, even a copy ranked past top_k.
func TestMergeCopies(t *testing.T) {
	res := []Result{
		{Path: "a/guide.txt", Snippet: "Leave is 20 days.\nAsk HR.", Score: 0.9},
		{Path: "other.md", Snippet: "Something else.", Score: 0.8},
		{Path: "b/guide.docx", Snippet: "Leave is 20 days.  \n Ask   HR.", Score: 0.7},
		{Path: "third.md", Snippet: "A third passage.", Score: 0.6},
		{Path: "c/guide.txt", Snippet: "Leave is 20 days. Ask HR.", Score: 0.5},
		{Path: "fourth.md", Snippet: "A fourth passage.", Score: 0.4},
	}
	got := mergeCopies(res, 3)
	var paths []string
	for _, h := range got {
		paths = append(paths, h.Path)
	}
	if want := []string{"a/guide.txt", "other.md", "third.md"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("results %v, want %v", paths, want)
	}
	if want := []string{"a/guide.txt", "b/guide.docx", "c/guide.txt"}; !reflect.DeepEqual(got[0].Paths, want) {
		t.Errorf("paths %v, want %v", got[0].Paths, want)
	}
	if got[1].Paths != nil || got[0].Score != 0.9 {
		t.Errorf("unmerged result lists paths %v; merged score %v", got[1].Paths, got[0].Score)
	}
}

func TestCitation(t *testing.T) {
	cases := []struct {
		r    Result
		want string
	}{
		{Result{Path: "a.pdf", Page: 3}, "a.pdf, page 3"},
		{Result{Path: "b.md", LineStart: 4, LineEnd: 9}, "b.md, lines 4-9"},
		{Result{Path: "b.md", LineStart: 4, LineEnd: 4}, "b.md, line 4"},
		{Result{Path: "c.docx"}, "c.docx"},
	}
	for _, tc := range cases {
		if got := tc.r.Citation(); got != tc.want {
			t.Errorf("Citation(%+v) = %q, want %q", tc.r, got, tc.want)
		}
	}
}

// A search that finds nothing strong names the files skipped for their
// extension and the flag that adds them; a strong result, or nothing
// skipped, says nothing.
func TestNotEnabledNote(t *testing.T) {
	examples, exts := []string{"a.json", "b.yaml"}, []string{".json", ".yaml"}
	weak := []Result{{Path: "x.md", Score: StrongScore - 0.01}}
	for _, res := range [][]Result{nil, weak} {
		note := NotEnabledNote(res, Unindexed{7, examples, exts})
		for _, want := range []string{"7 files", "a.json, b.yaml and 5 more", "--add-exts .json,.yaml"} {
			if !strings.Contains(note, want) {
				t.Errorf("%d results: note %q lacks %q", len(res), note, want)
			}
		}
	}
	if note := NotEnabledNote([]Result{{Path: "x.md", Score: StrongScore}}, Unindexed{7, examples, exts}); note != "" {
		t.Errorf("strong result: note %q", note)
	}
	if note := NotEnabledNote(nil, Unindexed{}); note != "" {
		t.Errorf("nothing skipped: note %q", note)
	}
}
