package engine

import (
	"context"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// A filtered search returns top_k passages from the files the filter
// passes, in every mode, though the unfiltered top_k holds files it leaves
// out; ranking the passing chunks exactly gives what reading the unfiltered
// rankings deeper gives.
func TestSearchFiltersInsideTheRanking(t *testing.T) {
	eachBackend(t, testSearchFiltersInsideTheRanking)
}

func testSearchFiltersInsideTheRanking(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	files := map[string]string{}
	for i := range 30 {
		files[fmt.Sprintf("team/notes-%02d.txt", i)] = filler(uint64(i), 50)
	}
	for i := range 8 {
		files[fmt.Sprintf("archive/old-%d.md", i)] = filler(uint64(i+50), 50)
	}
	writeCorpus(t, data, files)
	old := time.Date(2020, 6, 1, 0, 0, 0, 0, time.UTC)
	for i := range 6 {
		if err := os.Chtimes(filepath.Join(data, fmt.Sprintf("team/notes-%02d.txt", i)), old, old); err != nil {
			t.Fatal(err)
		}
	}
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: filepath.Join(t.TempDir(), "index")})
	reindex(t, e, ReindexRequest{})

	before2021 := func(mtime float64) bool { return mtime < float64(time.Date(2021, 1, 1, 0, 0, 0, 0, time.UTC).Unix()) }
	filters := []struct {
		name string
		args isearch.FilterArgs
		pass func(r isearch.Result) bool
	}{
		{"path_glob", isearch.FilterArgs{PathGlob: "archive/*"}, func(r isearch.Result) bool { return strings.HasPrefix(r.Path, "archive/") }},
		{"ext", isearch.FilterArgs{Exts: []string{"MD"}}, func(r isearch.Result) bool { return path.Ext(r.Path) == ".md" }},
		{"modified_before", isearch.FilterArgs{ModifiedBefore: "2021-01-01T00:00:00Z"}, func(r isearch.Result) bool { return before2021(r.Mtime) }},
		{"modified_after and glob", isearch.FilterArgs{ModifiedAfter: "2021-01-01T00:00:00Z", PathGlob: "team/**"},
			func(r isearch.Result) bool { return !before2021(r.Mtime) && strings.HasPrefix(r.Path, "team/") }},
	}
	query := "owners follow the billing support release planning in the weekly report"
	for _, mode := range []isearch.Mode{isearch.Dense, isearch.Keyword, isearch.Hybrid} {
		e.cfg.SearchMode = mode
		run := func(f *isearch.Filter, tune func(*isearch.Options)) []isearch.Result {
			src, opt := e.source(context.Background())
			if tune != nil {
				tune(&opt)
			}
			res, err := src.Search(isearch.Request{Query: query, TopK: 5, Filter: f}, opt)
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		all := run(nil, nil)
		for _, fc := range filters {
			f, err := isearch.ParseFilter(fc.args)
			if err != nil || f == nil {
				t.Fatalf("%s: %v", fc.name, err)
			}
			left := 0
			for _, r := range all {
				if !fc.pass(r) {
					left++
				}
			}
			exact := run(f, nil)
			deeper := run(f, func(o *isearch.Options) { o.ExactFilter = -1 })
			if os.Getenv("FILTER_DEBUG") != "" {
				for i := range exact {
					t.Logf("%s %s %d: %s#%d %v %.4f | %s#%d %v %.4f", mode, fc.name, i, exact[i].Path, exact[i].ChunkIndex, exact[i].Chunks, exact[i].Score, deeper[i].Path, deeper[i].ChunkIndex, deeper[i].Chunks, deeper[i].Score)
				}
			}
			if len(exact) != 5 || len(deeper) != 5 {
				t.Errorf("%s %s: %d and %d results, want top_k 5 (unfiltered, %d of 5 fail the filter)", mode, fc.name, len(exact), len(deeper), left)
			}
			for i, r := range exact {
				if !fc.pass(r) {
					t.Errorf("%s %s: result %d %s (mtime %v) fails the filter", mode, fc.name, i+1, r.Path, r.Mtime)
				}
				if i < len(deeper) && (deeper[i].Path != r.Path || deeper[i].ChunkIndex != r.ChunkIndex || math.Abs(deeper[i].Score-r.Score) > 1e-6) {
					t.Errorf("%s %s: result %d exact %s#%d %.4f, read deeper %s#%d %.4f", mode, fc.name, i+1,
						r.Path, r.ChunkIndex, r.Score, deeper[i].Path, deeper[i].ChunkIndex, deeper[i].Score)
				}
			}
			if fc.name == "path_glob" && left == 0 {
				t.Errorf("%s: the unfiltered top 5 are all in archive/; the filter is not tested", mode)
			}
		}
	}
}
