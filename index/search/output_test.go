package search

import (
	"strings"
	"testing"
)

// A search that finds nothing strong names the files skipped for their
// extension and the flag that adds them; a strong result, or nothing
// skipped, says nothing.
func TestNotEnabledNote(t *testing.T) {
	examples, exts := []string{"a.json", "b.yaml"}, []string{".json", ".yaml"}
	weak := []Result{{Path: "x.md", Score: StrongScore - 0.01}}
	for _, res := range [][]Result{nil, weak} {
		note := NotEnabledNote(res, 7, examples, exts)
		for _, want := range []string{"7 files", "a.json, b.yaml and 5 more", "--add-exts .json,.yaml"} {
			if !strings.Contains(note, want) {
				t.Errorf("%d results: note %q lacks %q", len(res), note, want)
			}
		}
	}
	if note := NotEnabledNote([]Result{{Path: "x.md", Score: StrongScore}}, 7, examples, exts); note != "" {
		t.Errorf("strong result: note %q", note)
	}
	if note := NotEnabledNote(nil, 0, nil, nil); note != "" {
		t.Errorf("nothing skipped: note %q", note)
	}
}
