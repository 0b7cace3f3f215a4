package main

import (
	"context"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// TestE2ESearchFilters searches the sample plus 200 notes over MCP with
// each filter in each mode: a selective filter still returns top_k
// passages though the unfiltered top_k holds other files, every result
// passes its filter, and bad arguments are tool errors naming them.
func TestE2ESearchFilters(t *testing.T) { eachBackend(t, testE2ESearchFilters) }

func testE2ESearchFilters(t *testing.T, b backend) {
	data, c := sampleThenNotes(t, b)
	old := time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := 100; i < 120; i++ {
		if err := os.Chtimes(filepath.Join(data, "notes", fmt.Sprintf("note-%03d.txt", i)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	reindex(t, c, map[string]any{})

	query := "warehouse replica backup restore after an incident"
	cases := []struct {
		name  string
		query string
		args  map[string]any
		want  int // results at least
		pass  func(path string, mtime float64) bool
		broad bool // the unfiltered top 5 may all pass
	}{
		{"path_glob", query, map[string]any{"path_glob": "notes/note-00?.txt"}, 5,
			func(p string, _ float64) bool { ok, _ := path.Match("notes/note-00?.txt", p); return ok }, false},
		{"modified_before", query, map[string]any{"modified_before": "2021-01-01T00:00:00Z"}, 5,
			func(_ string, m float64) bool { return m < float64(old.Unix()+1) }, false},
		{"ext", sampleQueries[3].query, map[string]any{"ext": []any{"md"}}, 2,
			func(p string, _ float64) bool { return path.Ext(p) == ".md" }, false},
		{"ext and modified_after", query, map[string]any{"ext": []any{"txt", "pdf"}, "modified_after": "2021-01-01T00:00:00Z"}, 5,
			func(p string, m float64) bool {
				return (path.Ext(p) == ".txt" || path.Ext(p) == ".pdf") && m > float64(old.Unix())
			}, true},
	}
	for _, mode := range []string{"hybrid", "dense", "keyword"} {
		s := c
		if mode != "hybrid" {
			s = b.startServer(t, data, "--watch=false", "--search-mode", mode)
		}
		for _, tc := range cases {
			args := map[string]any{"query": tc.query, "top_k": 5, "score_threshold": 0}
			all := searchWith(t, s, args)
			for k, v := range tc.args {
				args[k] = v
			}
			got := searchWith(t, s, args)
			if len(got) < tc.want {
				t.Errorf("%s %s: %d results, want %d", mode, tc.name, len(got), tc.want)
			}
			for i, r := range got {
				if !tc.pass(r.Path, r.Mtime) {
					t.Errorf("%s %s: result %d %s (mtime %.0f) fails the filter", mode, tc.name, i+1, r.Path, r.Mtime)
				}
			}
			if !tc.broad && tc.want == 5 {
				outside := 0
				for _, r := range all {
					if !tc.pass(r.Path, r.Mtime) {
						outside++
					}
				}
				if outside == 0 {
					t.Errorf("%s %s: the unfiltered top 5 all pass the filter, so it tests nothing", mode, tc.name)
				}
			}
		}
	}

	for _, bad := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"path_glob": "notes/[a-"}, "path_glob"},
		{map[string]any{"modified_after": "last week"}, `"modified_after" must be an RFC 3339 time`},
		{map[string]any{"ext": 3}, `"ext" must be a list of strings`},
	} {
		bad.args["query"] = query
		res, err := callTool(context.Background(), c, "search", bad.args)
		if err != nil || !res.IsError || !strings.Contains(toolText(res), bad.want) {
			t.Errorf("search %v: %v %s; want a tool error with %q", bad.args, err, toolText(res), bad.want)
		}
	}
}
