package lexical

import (
	"math"
	"testing"
)

// A document holding each query term once, at average body length, scores
// exactly the query weight; terms the index lacks add nothing to it.
func TestQueryWeight(t *testing.T) {
	dir := t.TempDir()
	docs := []Doc{
		{ID: 1, Body: "alpha beta gamma delta"},
		{ID: 2, Body: "alpha epsilon zeta eta"},
		{ID: 3, Body: "theta iota kappa lambda"},
		{ID: 4, Body: "mu nu xi omicron"},
	}
	x := mustAdd(t, Empty(), dir, "seg-1", docs, false)
	idf := func(df float64) float64 { return math.Log(1 + (4-df+0.5)/(df+0.5)) }
	for _, tc := range []struct {
		query string
		want  float64
	}{
		{"alpha beta", idf(2) + idf(1)},
		{"beta beta", 2 * idf(1)},
		{"beta unknownword", idf(1)},
		{"unknownword", 0},
		{"the of", 0},
	} {
		if got := queryWeight(x, tc.query); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Weights(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
	// Document 1 has every body of length 4, the average: its score for
	// "beta gamma" is the weight.
	res := x.Search("beta gamma", 1)
	if w := queryWeight(x, "beta gamma"); len(res) != 1 || res[0].ID != 1 || math.Abs(res[0].Score-w) > 1e-9 {
		t.Errorf("score %+v, weight %v", res, w)
	}
	if queryWeight(Empty(), "alpha") != 0 {
		t.Error("empty index has weight")
	}
}

// Coverage counts each query word the index lacks as a word of one
// document: random strings cover nothing, the index's own words all.
func TestQueryCoverage(t *testing.T) {
	docs := []Doc{
		{ID: 1, Body: "alpha beta gamma delta"},
		{ID: 2, Body: "alpha epsilon zeta eta"},
		{ID: 3, Body: "theta iota kappa lambda"},
	}
	x := mustAdd(t, Empty(), t.TempDir(), "seg-1", docs, false)
	idf := func(df float64) float64 { return math.Log(1 + (3-df+0.5)/(df+0.5)) }
	for _, tc := range []struct {
		query string
		want  float64
	}{
		{"alpha beta", 1},
		{"qwpoeiru asdkjh", 0},
		{"the of", 0},
		{"beta unknownword", 0.5},
		{"alpha unknownword unknownword", idf(2) / (idf(2) + 2*idf(1))},
	} {
		if got := x.Query(tc.query).Coverage(); math.Abs(got-tc.want) > 1e-9 {
			t.Errorf("Coverage(%q) = %v, want %v", tc.query, got, tc.want)
		}
	}
}

// queryWeight is the weight of query in x (Query.Weights).
func queryWeight(x *Index, query string) float64 {
	w, _ := x.Query(query).Weights()
	return w
}
