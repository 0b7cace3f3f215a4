package search

import (
	"math"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// The same closest passage (cosine 0.18, the folder's other pages 0.12)
// passes the default threshold in a folder where unrelated queries find
// nothing near (a few short files) and not in one where they find close
// passages everywhere, nor without null queries: its noise level is read
// from the null queries' best cosines, not assumed. Without the folder's
// calibration the scores are equal, and this fails.
func TestFolderNullCalibrates(t *testing.T) {
	snap := topicSnapshot(t, 40, 0.18, 0.12)
	query := make([]float32, testDim)
	query[0] = 1
	// far: cosine 0 with every page (a·0.12 + b·√(1-0.12²) = 0); near: the
	// axis of some pages (cosine √(1-0.12²) ≈ 0.99).
	s := math.Sqrt(1 - 0.12*0.12)
	far := make([]float32, testDim)
	far[0] = float32(-s)
	for i := 1; i < testDim; i++ {
		far[i] = float32(0.12 / math.Sqrt(testDim-1))
	}
	near := make([]float32, testDim)
	near[1] = 1
	ask := func(mode Mode, nulls [][]float32) Result {
		t.Helper()
		res, err := Search(snap, Request{Query: "harbour ledger tides", TopK: 5, Explain: true}, query,
			Options{Mode: mode, NullQueries: nulls})
		if err != nil || len(res) == 0 {
			t.Fatalf("%s: %v, %v", mode, res, err)
		}
		return res[0]
	}
	for _, mode := range []Mode{Dense, Hybrid} {
		quiet, noisy, none := ask(mode, [][]float32{far, far, near}), ask(mode, [][]float32{near, near, far}), ask(mode, nil)
		if quiet.Path != noisy.Path || quiet.Path != none.Path {
			t.Fatalf("%s: first %s, %s and %s; want the shift to keep the order", mode, quiet.Path, noisy.Path, none.Path)
		}
		// Hybrid's first holds the query's words: it passes either way.
		if mode == Dense && (quiet.Score < DefaultScoreThreshold || noisy.Score >= DefaultScoreThreshold) || quiet.Score <= noisy.Score || noisy.Score != none.Score {
			t.Errorf("%s: %.3f where unrelated queries find nothing near, %.3f where they find 0.99, %.3f without null queries; want the first higher, at or above %v in dense mode, the others below and equal",
				mode, quiet.Score, noisy.Score, none.Score, DefaultScoreThreshold)
		}
		if quiet.Explain.FolderShift <= 0 || noisy.Explain.FolderShift != 0 {
			t.Errorf("%s: shifts %v and %v, want one above 0 and none", mode, quiet.Explain.FolderShift, noisy.Explain.FolderShift)
		}
	}
}

// The folder's noise level is the median of the null queries' best
// cosines, read per view and per set of null queries.
func TestFolderNullIsMedianBest(t *testing.T) {
	snap := topicSnapshot(t, 6, 0.30, 0.12)
	unitAxis := func(i int) []float32 {
		v := make([]float32, testDim)
		v[i] = 1
		return v
	}
	// e0: best 0.30 (page 0); e1: best √(1-0.3²) (page 0's own axis); e0
	// again: the median 0.30.
	nulls := [][]float32{unitAxis(0), unitAxis(1), unitAxis(0)}
	for range 2 {
		got, ok, err := folderNull(snap, nulls)
		if err != nil || !ok || math.Abs(got-0.30) > 1e-3 {
			t.Fatalf("median best %v (%v, %v), want 0.30", got, ok, err)
		}
	}
	other := [][]float32{unitAxis(1)}
	if got, _, _ := folderNull(snap, other); math.Abs(got-math.Sqrt(1-0.3*0.3)) > 1e-3 {
		t.Errorf("another set of null queries on the same view: %v, want its own best √(1-0.3²)", got)
	}
	if _, ok, _ := folderNull(snap, nil); ok {
		t.Error("no null queries: want no noise level")
	}
	var empty index.View = buildSnapshot(t, 0, nil, nil)
	if _, ok, err := folderNull(empty, nulls); ok || err != nil {
		t.Errorf("an empty folder: ok %v, %v; want no noise level", ok, err)
	}
}

// shifted never reorders scores, keeps every score above 0 above 0, and
// raised, keeps 1 at 1.
func TestShiftedKeepsOrder(t *testing.T) {
	for _, s := range []float64{-0.3, 0, 0.2} {
		prev := -1.0
		for x := 0.0; x <= 1.0001; x += 0.01 {
			y := shifted(min(x, 1), s)
			if y <= prev || y > 1 || (x > 0 && y <= 0) {
				t.Fatalf("shift %v: %v reads %v after %v", s, x, y, prev)
			}
			prev = y
		}
		if s >= 0 && shifted(1, s) != 1 {
			t.Errorf("shift %v: 1 reads %v", s, shifted(1, s))
		}
	}
	if shifted(0.25, 0) != 0.25 || shifted(0.25, 0.2) <= 0.25 || shifted(0.25, -0.2) >= 0.25 {
		t.Error("want no shift to change nothing, a positive one to raise and a negative one to lower")
	}
}
