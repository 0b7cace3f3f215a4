package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// An identifier unique to one file of a two-file folder is a keyword match
// that must pass the default threshold in keyword mode too (the calibrated
// score once was 0.035 there, for 0.66 in hybrid), and --explain shows the
// parts of each score.
func TestSearchKeywordIdentifierAndExplain(t *testing.T) {
	eachBackend(t, testSearchKeywordIdentifierAndExplain)
}

func testSearchKeywordIdentifierAndExplain(t *testing.T, b backend) {
	root := t.TempDir()
	data, idx := filepath.Join(root, "data"), filepath.Join(root, "idx")
	os.MkdirAll(data, 0o755)
	os.WriteFile(filepath.Join(data, "release.txt"), []byte("Release checklist. Before tagging, confirm the build carries the marker CONTROLMARK in its version banner."), 0o644)
	os.WriteFile(filepath.Join(data, "garden.txt"), []byte("Notes on the vegetable garden: tomatoes want sun, and the beans climb the fence by July."), 0o644)
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data, "--index-folder", idx); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	for _, mode := range []string{"keyword", "hybrid"} {
		code, stdout, stderr := b.run(t, "search", "--data-folder", data, "--index-folder", idx, "--search-mode", mode, "--json", "--explain", "CONTROLMARK")
		var out struct {
			Results []struct {
				Path    string  `json:"path"`
				Score   float64 `json:"score"`
				Explain *struct {
					Keyword float64 `json:"keyword"`
					Share   float64 `json:"share"`
					Fused   float64 `json:"fused"`
				} `json:"explain"`
			} `json:"results"`
		}
		if err := json.Unmarshal([]byte(stdout), &out); err != nil || code != 0 || len(out.Results) != 1 {
			t.Fatalf("%s: exit %d, %d results (%v)\n%s\n%s", mode, code, len(out.Results), err, stdout, stderr)
		}
		r := out.Results[0]
		if r.Path != "release.txt" || r.Score < 0.5 || r.Explain == nil || r.Explain.Share != 1 || r.Explain.Keyword < 0.5 || r.Explain.Fused != r.Score {
			t.Errorf("%s: %+v (explain %+v); want release.txt scoring at least 0.5 with its whole share", mode, r, r.Explain)
		}
	}
	code, stdout, _ := b.run(t, "search", "--data-folder", data, "--index-folder", idx, "--explain", "vegetable garden beans")
	if code != 0 || !strings.Contains(stdout, "cosine ") || !strings.Contains(stdout, "share ") || !strings.Contains(stdout, "garden.txt") {
		t.Errorf("search --explain: exit %d\n%s", code, stdout)
	}
}

// The CLI shows the passage around the query's best line: the sample's
// parental-leave answer sits past the passage's first 90 characters.
func TestCLISnippetShowsTheMatch(t *testing.T) { eachBackend(t, testCLISnippetShowsTheMatch) }

func testCLISnippetShowsTheMatch(t *testing.T, b backend) {
	data := copySample(t)
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := b.run(t, "search", "--data-folder", data, "--top-k", "1", "How many weeks of parental leave do I get?")
	if code != 0 || !strings.Contains(stdout, "sixteen weeks") {
		t.Errorf("search: exit %d, want the snippet to show \"sixteen weeks\"\n%s%s", code, stdout, stderr)
	}
}
