package search

import (
	"cmp"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/prose"
)

const testDim = 8

func unitVec(rng *rand.Rand) []float32 {
	v := make([]float32, testDim)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i] * v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// testSnapshot indexes files of seeded prose with random unit vectors.
func testSnapshot(t *testing.T, files int) index.View {
	t.Helper()
	rng := rand.New(rand.NewPCG(3, 4))
	return buildSnapshot(t, files, func(f int) (string, string) {
		// A code in one file only, so that its keyword list is short.
		return fmt.Sprintf("notes-%d.txt", f), prose.Random(uint64(f), 6) + fmt.Sprintf("\n\nThe code zeta-%d stands here.\n\n", f) + prose.Random(uint64(f+100), 6)
	}, func(int) []float32 { return unitVec(rng) })
}

// buildSnapshot indexes files, file f named and written by file(f), each
// chunk of it with the vector vec(f).
func buildSnapshot(t *testing.T, files int, file func(f int) (path, text string), vec func(f int) []float32) index.View {
	t.Helper()
	s, err := localstore.Open(t.TempDir(), schema.Version{Schema: schema.SchemaVersion, Model: "test-model", Dim: testDim,
		ChunkSize: 1000, ChunkOverlap: 200, MaxTokens: 256}, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for f := range files {
		path, text := file(f)
		recs := records(path, text, nil)
		var vecs []float32
		for range recs {
			vecs = append(vecs, vec(f)...)
		}
		if err := w.PutFile(schema.FileEntry{Path: path, Ext: ".txt"}, recs, vecs); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	snap := s.Acquire()
	t.Cleanup(snap.Release)
	return snap
}

// A ranker widened step by step, which keeps a ranking that holds all it
// can find and the cosines it read, scores every candidate as a new ranker
// asked for the wider pool at once.
func TestWideningKeepsScores(t *testing.T) {
	snap := testSnapshot(t, 8)
	rng := rand.New(rand.NewPCG(5, 6))
	byID := func(c []candidate) []candidate {
		return slices.SortedFunc(slices.Values(c), func(a, b candidate) int { return cmp.Compare(a.rec.ID, b.rec.ID) })
	}
	for _, mode := range []Mode{Hybrid, Keyword, Dense} {
		for _, q := range []string{"QX-7731-B offsets", "whole passages for a client", "データ 東京", "zeta-3", "zeta-3 zeta-5"} {
			opt := Options{Mode: mode}
			vec := unitVec(rng)
			widened := newRanker(snap, q, vec, opt)
			for pool := 4; pool <= 4*snap.Chunks(); pool *= 4 {
				got, gotFull, err := widened.rank(pool)
				if err != nil {
					t.Fatal(err)
				}
				fresh := newRanker(snap, q, vec, opt)
				want, wantFull, err := fresh.rank(pool)
				if err != nil {
					t.Fatal(err)
				}
				if gotFull != wantFull || !reflect.DeepEqual(byID(got), byID(want)) {
					t.Fatalf("%s %q pool %d: widened %d candidates (full %v), fresh %d (full %v)",
						mode, q, pool, len(got), gotFull, len(want), wantFull)
				}
			}
		}
	}
}
