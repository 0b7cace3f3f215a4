package localstore

import (
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/faiss"
)

// A layered index answers exactly as one FAISS index holding the same live
// vectors, through delta commits and folds, and frees its base only after
// the last snapshot sharing it.
func TestLayeredMatchesFlatIndex(t *testing.T) {
	rng := rand.New(rand.NewPCG(3, 4))
	ref, err := newIndex(testDim)
	if err != nil {
		t.Fatal(err)
	}
	defer ref.Close()
	start, err := newIndex(testDim)
	if err != nil {
		t.Fatal(err)
	}
	var live []int64
	next := int64(0)
	add := func(n int) ([]int64, []float32) {
		var ids []int64
		var vecs []float32
		for range n {
			ids = append(ids, next)
			vecs = append(vecs, unitVec(rng)...)
			next++
		}
		live = append(live, ids...)
		return ids, vecs
	}
	ids, vecs := add(500)
	for _, idx := range []*faiss.Index{ref, start} {
		if err := idx.AddWithIDs(vecs, ids); err != nil {
			t.Fatal(err)
		}
	}
	first := newLayered(start)
	l := first
	for round := range 40 {
		rng.Shuffle(len(live), func(i, j int) { live[i], live[j] = live[j], live[i] })
		remove := slices.Clone(live[:20])
		live = live[20:]
		ids, vecs := add(25)
		if _, err := ref.RemoveIDs(remove); err != nil {
			t.Fatal(err)
		}
		if err := ref.AddWithIDs(vecs, ids); err != nil {
			t.Fatal(err)
		}
		n, err := l.next(remove, ids, vecs, round%15 == 14)
		if err != nil {
			t.Fatal(err)
		}
		if round%15 == 14 && (len(n.added) != 0 || len(n.removed) != 0) {
			t.Fatalf("round %d: fold left a delta of %d added, %d removed", round, len(n.added), len(n.removed))
		}
		if round%15 != 14 && round > 0 && n.base != l.base {
			t.Fatalf("round %d: a small commit copied the base", round)
		}
		if round != 0 {
			l.Close()
		}
		l = n
		if l.Ntotal() != ref.Ntotal() {
			t.Fatalf("round %d: %d vectors, want %d", round, l.Ntotal(), ref.Ntotal())
		}
		q := unitVec(rng)
		const k = 10
		gd, gl := make([]float32, k), make([]int64, k)
		wd, wl := make([]float32, k), make([]int64, k)
		if err := l.SearchInto(q, k, gd, gl); err != nil {
			t.Fatal(err)
		}
		if err := ref.SearchInto(q, k, wd, wl); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(gl, wl) {
			t.Fatalf("round %d: search %v, want %v", round, gl, wl)
		}
		for _, id := range remove {
			if _, err := l.Reconstruct(id, nil); err == nil {
				t.Fatalf("round %d: removed chunk %d still reconstructs", round, id)
			}
		}
		v, err := l.Reconstruct(ids[0], nil)
		if err != nil || !slices.Equal(v, vecs[:testDim]) {
			t.Fatalf("round %d: added chunk %d reconstructs as %v, %v", round, ids[0], v, err)
		}
		_, got, err := l.Export(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(live)); !slices.Equal(got, want) {
			t.Fatalf("round %d: export holds %d ids, want %d", round, len(got), len(want))
		}
	}
	// first's base was folded away but first still holds it.
	if first.base.refs.Load() != 1 {
		t.Fatalf("first base has %d references, want 1 (its own)", first.base.refs.Load())
	}
	first.Close()
	if _, err := start.Reconstruct(0, nil); err == nil {
		t.Fatal("base still open after its last reader closed")
	}
	l.Close()
}
