package search

import (
	"math"
	"testing"
)

// Calibration keeps each query's order, puts every mode's cut on the
// default threshold, and gives a query the folder has no words of nothing.
func TestCalibrated(t *testing.T) {
	for mode, n := range noiseCuts {
		if got := calibrated(mode, n.cut, 1); math.Abs(got-DefaultScoreThreshold) > 1e-12 {
			t.Errorf("%s: cut %v maps to %v, want %v", mode, n.cut, got, DefaultScoreThreshold)
		}
		if got := calibrated(mode, 1, 1); got != 1 {
			t.Errorf("%s: 1 maps to %v", mode, got)
		}
		if got := calibrated(mode, 0.9, 0); got != 0 {
			t.Errorf("%s: a query of unknown words scores %v", mode, got)
		}
		prev := -1.0
		for x := 0.0; x <= 1; x += 0.01 {
			got := calibrated(mode, x, 0.4)
			if got < prev || got < 0 || got > 1 {
				t.Fatalf("%s: %v maps to %v after %v", mode, x, got, prev)
			}
			prev = got
		}
		// A low coverage lowers the score, a full one does not.
		if calibrated(mode, 0.6, 0.2) >= calibrated(mode, 0.6, 1) {
			t.Errorf("%s: coverage 0.2 scores no lower than 1", mode)
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
