package search

import (
	"math"
	"math/rand/v2"
	"testing"
)

// Calibration keeps each query's order, puts every mode's cut on the
// default threshold, and gives a query the folder has no words of nothing.
func TestCalibrated(t *testing.T) {
	for mode, n := range noiseCuts {
		if got := calibrated(mode, n.cut, 1, 1); math.Abs(got-DefaultScoreThreshold) > 1e-12 {
			t.Errorf("%s: cut %v maps to %v, want %v", mode, n.cut, got, DefaultScoreThreshold)
		}
		if got := calibrated(mode, 1, 1, 1); got != 1 {
			t.Errorf("%s: 1 maps to %v", mode, got)
		}
		if got := calibrated(mode, 0.9, 0, 1); got != 0 {
			t.Errorf("%s: a query of unknown words scores %v", mode, got)
		}
		prev := -1.0
		for x := 0.0; x <= 1; x += 0.01 {
			got := calibrated(mode, x, 0.4, 0.2)
			if got < prev || got < 0 || got > 1 {
				t.Fatalf("%s: %v maps to %v after %v", mode, x, got, prev)
			}
			prev = got
		}
		// A low coverage lowers the score, a full one does not.
		if calibrated(mode, 0.6, 0.2, 1) >= calibrated(mode, 0.6, 1, 1) {
			t.Errorf("%s: coverage 0.2 scores no lower than 1", mode)
		}
	}
}

// The support gate discounts a query with no chunk near its meaning in
// proportion to its best cosine, leaves one with a close chunk alone, and
// applies only in the modes that set it.
func TestSupportGate(t *testing.T) {
	n := noiseCuts[Hybrid]
	if n.support <= 0 {
		t.Fatal("hybrid mode has no support gate")
	}
	x := 0.8
	if a, b := calibrated(Hybrid, x, 1, n.support), calibrated(Hybrid, x, 1, 0.95); a != b {
		t.Errorf("support at the gate scores %v, far above it %v", a, b)
	}
	if got, want := calibrated(Hybrid, x, 1, n.support/2), calibrated(Hybrid, x/2, 1, 1); math.Abs(got-want) > 1e-12 {
		t.Errorf("half the support scores %v, want the score of half the raw score %v", got, want)
	}
	if got := calibrated(Hybrid, x, 1, 0); got != 0 {
		t.Errorf("no chunk near the query: %v", got)
	}
	for _, mode := range []Mode{Dense, Keyword} {
		if a, b := calibrated(mode, x, 1, 0), calibrated(mode, x, 1, 1); a != b {
			t.Errorf("%s: support changes the score, %v against %v", mode, a, b)
		}
	}
}

// A model's cosine as many spreads above its null mean as the reference
// model's lands where the reference's would.
func TestNullCosine(t *testing.T) {
	bge := NullCosine{Mean: 0.5, Spread: 0.05}
	ref := ReferenceNull
	for _, z := range []float64{0, 1, 3} {
		if got, want := bge.cosine(bge.Mean+z*bge.Spread), ref.Mean+z*ref.Spread; math.Abs(got-want) > 1e-12 {
			t.Errorf("z %v: %v, want %v", z, got, want)
		}
	}
	if got := (NullCosine{}).cosine(0.42); got != 0.42 {
		t.Errorf("unmeasured model: %v", got)
	}
	if got := bge.cosine(bge.Mean + 20*bge.Spread); got != 1 {
		t.Errorf("far above: %v, want clamped to 1", got)
	}
	if got := bge.cosine(0); got != 0 {
		t.Errorf("far below: %v, want clamped to 0", got)
	}
}

// Every result of a search reports as its support the best cosine of any
// chunk with the query, whatever top_k asks, and keyword mode none.
func TestSupportIsBestCosine(t *testing.T) {
	snap := testSnapshot(t, 6)
	rng := rand.New(rand.NewPCG(7, 8))
	for range 5 {
		vec := unitVec(rng)
		best, err := snap.Search(vec, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Hybrid, Dense, Keyword} {
			want := unit(float64(best[0].Score))
			if mode == Keyword {
				want = 0
			}
			for _, k := range []int{1, 10} {
				res, err := Search(snap, Request{Query: "zeta-2 passages", TopK: k, Explain: true}, vec, Options{Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 {
					t.Fatalf("%s top_k %d: no results", mode, k)
				}
				for _, r := range res {
					if math.Abs(r.Explain.Support-want) > 1e-6 {
						t.Errorf("%s top_k %d: support %v, want %v", mode, k, r.Explain.Support, want)
					}
				}
			}
		}
	}
}
