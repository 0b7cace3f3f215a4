package pgstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// The same files, chunks and vectors written into the local folder and
// into Postgres give the same search results (paths, chunks, scores) in
// every mode: the keyword side is the same BM25F over the same segments,
// and kNN over this few vectors is exact.
func TestSearchMatchesLocalBackend(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 22))
	words := strings.Fields("leave parental policy weeks salary kubernetes operator reconcile state cluster invoice payment " +
		"quarterly revenue report budget forecast holiday travel expense laptop security password rotation backup restore")
	var docs []doc
	for f := range 30 {
		var texts []string
		for range 1 + rng.IntN(4) {
			var sb strings.Builder
			for range 8 + rng.IntN(20) {
				sb.WriteString(words[rng.IntN(len(words))] + " ")
			}
			texts = append(texts, sb.String())
		}
		d := makeDoc(rng, fmt.Sprintf("dir%d/file_%d.md", f%3, f), texts...)
		for i := range d.chunks {
			d.chunks[i].CharStart, d.chunks[i].CharEnd = i*1000, i*1000+len(texts[i])
		}
		docs = append(docs, d)
	}
	local, err := localstore.Open(t.TempDir(), testVersion, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer local.Close()
	pg := open(t, pgtest.Database(t), "idx", testVersion)
	for _, be := range []index.Backend{localstore.Local(local), pg} {
		w, err := be.Begin()
		if err != nil {
			t.Fatal(err)
		}
		for i, d := range docs {
			if err := w.PutFile(d.entry, append([]schema.Record(nil), d.chunks...), d.vecs); err != nil {
				t.Fatal(err)
			}
			if i == 20 { // two commits, so the keyword index has two segments
				if err := w.Commit(schema.MidRun); err != nil {
					t.Fatal(err)
				}
			}
		}
		w.RemoveFile("dir1/file_4.md")
		if err := w.Commit(schema.EndOfRun); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	lv, pv := local.Acquire(), pg.Acquire()
	defer lv.Release()
	defer pv.Release()
	for _, query := range []string{"parental leave weeks", "kubernetes operator", "password rotation backup", "quarterly revenue report forecast"} {
		vec := unit(rng, testDim)
		for _, mode := range []search.Mode{search.Hybrid, search.Dense, search.Keyword} {
			req := search.Request{Query: query, TopK: 5, ScoreThreshold: -1}
			want, err := search.Search(lv, req, vec, search.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			got, err := search.Search(pv, req, vec, search.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) != len(want) || len(want) == 0 {
				t.Fatalf("%q %s: %d results on Postgres, %d local", query, mode, len(got), len(want))
			}
			for i := range want {
				g, w := got[i], want[i]
				if g.Path != w.Path || g.ChunkIndex != w.ChunkIndex || math.Abs(g.Score-w.Score) > 1e-5 || g.Snippet != w.Snippet {
					t.Errorf("%q %s #%d: Postgres %s#%d %.6f, local %s#%d %.6f", query, mode, i, g.Path, g.ChunkIndex, g.Score, w.Path, w.ChunkIndex, w.Score)
				}
			}
		}
	}
}
