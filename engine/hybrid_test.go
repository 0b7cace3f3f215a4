package engine

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/prose"
)

// Asking for more results must not reorder the first ones: a hybrid
// search's top 10 is the prefix of its top 20. (It was not when a chunk got
// its keyword score only inside the keyword list read for that top_k.)
func TestHybridTopKIsPrefix(t *testing.T) { eachBackend(t, testHybridTopKIsPrefix) }

func testHybridTopKIsPrefix(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	files := map[string]string{}
	for i := range 40 {
		files[fmt.Sprintf("notes-%02d.txt", i)] = prose.Random(uint64(i), 10)
	}
	writeCorpus(t, data, files)
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: t.TempDir()})
	res := reindex(t, e, ReindexRequest{})
	if res.ChunksTotal < 2*isearch.PoolSize(isearch.Hybrid, 20) {
		t.Fatalf("%d chunks: too few for the pools to matter", res.ChunksTotal)
	}
	queries := []string{
		"where are the line numbers of every chunk kept",
		"whole passages for a client",
		"QX-7731-B offsets",
		"naïve émigré text",
		"snake_case pkg.Func index",
		"データ 東京",
	}
	for _, q := range queries {
		got := map[int][]isearch.Result{}
		for _, k := range []int{10, 20} {
			r, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: k, ScoreThreshold: 0})
			if err != nil {
				t.Fatal(err)
			}
			if len(r) != k {
				t.Fatalf("%q top_k %d: %d results", q, k, len(r))
			}
			got[k] = r
		}
		same := func(a, b isearch.Result) bool {
			return a.Path == b.Path && a.Score == b.Score && slices.Equal(a.Chunks, b.Chunks)
		}
		if !slices.EqualFunc(got[10], got[20][:10], same) {
			for i := range 10 {
				a, b := got[10][i], got[20][i]
				t.Logf("%d: %s %v %.4f | %s %v %.4f", i+1, a.Path, a.Chunks, a.Score, b.Path, b.Chunks, b.Score)
			}
			t.Errorf("%q: the top 10 of top_k 10 is not the prefix of top_k 20", q)
		}
	}
}
