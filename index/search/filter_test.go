package search

import (
	"cmp"
	"math"
	"math/rand/v2"
	"slices"
	"testing"
)

// A filter's two paths rank alike: scoring each passing chunk (a selective
// filter) and reading the unfiltered rankings deeper (a broad one) give the
// same candidates, all of passing files, at every pool.
func TestFilterPathsAgree(t *testing.T) {
	snap := testSnapshot(t, 8)
	f := &Filter{Path: func(rel string) bool { return rel == "notes-1.txt" || rel == "notes-4.txt" || rel == "notes-6.txt" }}
	passing := map[int64]bool{}
	for _, id := range f.chunkIDs(snap) {
		passing[id] = true
	}
	if len(passing) == 0 || len(passing) >= snap.Chunks()/2 {
		t.Fatalf("%d of %d chunks pass; the test wants a selective filter", len(passing), snap.Chunks())
	}
	rng := rand.New(rand.NewPCG(7, 8))
	sorted := func(c []candidate) []candidate {
		return slices.SortedFunc(slices.Values(c), func(a, b candidate) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.rec.ID, b.rec.ID))
		})
	}
	for _, mode := range []Mode{Hybrid, Keyword, Dense} {
		for _, q := range []string{"whole passages for a client", "zeta-4", "zeta-3 zeta-6"} {
			vec := unitVec(rng)
			exact := newRanker(snap, q, vec, Options{Mode: mode})
			broad := newRanker(snap, q, vec, Options{Mode: mode, ExactFilter: -1})
			exact.narrow(f)
			broad.narrow(f)
			if exact.within == nil || broad.passing == nil {
				t.Fatal("the filter did not take both paths")
			}
			for pool := 2; pool <= 4*snap.Chunks(); pool *= 4 {
				got, gotFull, err := exact.rank(pool)
				if err != nil {
					t.Fatal(err)
				}
				want, wantFull, err := broad.rank(pool)
				if err != nil {
					t.Fatal(err)
				}
				got, want = sorted(got), sorted(want)
				if gotFull != wantFull || len(got) != len(want) {
					t.Fatalf("%s %q pool %d: exact %d candidates (full %v), deeper %d (full %v)", mode, q, pool, len(got), gotFull, len(want), wantFull)
				}
				for i := range got {
					if !passing[got[i].rec.ID] {
						t.Errorf("%s %q pool %d: chunk %d fails the filter", mode, q, pool, got[i].rec.ID)
					}
					if got[i].rec.ID != want[i].rec.ID || math.Abs(got[i].score-want[i].score) > 1e-6 {
						t.Errorf("%s %q pool %d, %d: exact chunk %d %.6f, deeper chunk %d %.6f", mode, q, pool, i,
							got[i].rec.ID, got[i].score, want[i].rec.ID, want[i].score)
					}
				}
			}
		}
	}
}
