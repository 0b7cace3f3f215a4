package search

import (
	"math"
	"strings"
	"testing"
)

func TestNewRequestLimits(t *testing.T) {
	req, err := NewRequest("q", DefaultTopK, DefaultScoreThreshold)
	if err != nil || req != (Request{Query: "q", TopK: 5, ScoreThreshold: 0.2}) {
		t.Fatalf("the defaults: %+v, %v", req, err)
	}
	if req, err := NewRequest("q", MaxTopK, 0); err != nil || req.TopK != 50 || req.ScoreThreshold != 0 {
		t.Errorf("the bounds: %+v, %v", req, err)
	}
	for _, tc := range []struct {
		query          string
		topK, treshold float64
		want           string
	}{
		{" \n", 5, 0.2, `"query" must not be empty`},
		{"q", MinTopK - 1, 0.2, `"top_k" must be between 1 and 50, got 0`},
		{"q", MaxTopK + 1, 0.2, `"top_k" must be between 1 and 50, got 51`},
		{"q", 1e10, 0.2, `"top_k" must be between 1 and 50, got 1e+10`},
		{"q", 5, 1.5, `"score_threshold" must be between 0 and 1, got 1.5`},
		{"q", 5, math.NaN(), `"score_threshold" must be between 0 and 1`},
	} {
		_, err := NewRequest(tc.query, tc.topK, tc.treshold)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v %v: got %v, want %q", tc.query, tc.topK, tc.treshold, err, tc.want)
		}
	}
}

func TestParseArgsDefaults(t *testing.T) {
	req, err := ParseArgs(map[string]any{"query": "parental leave"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Request{Query: "parental leave", TopK: 5, ScoreThreshold: 0.2}); req.Query != want.Query || req.TopK != want.TopK || req.ScoreThreshold != want.ScoreThreshold || req.Filter != nil {
		t.Errorf("got %+v, want %+v", req, want)
	}
	req, err = ParseArgs(map[string]any{"query": "q", "top_k": 50.0, "score_threshold": 0.0, "ext": []any{"md"}})
	if err != nil || req.TopK != 50 || req.ScoreThreshold != 0 || req.Filter == nil {
		t.Errorf("bounds: %+v, %v", req, err)
	}
	for wantErr, args := range map[string]map[string]any{
		`unknown argument "topk"`:                      {"query": "q", "topk": 3.0},
		`argument "top_k" must be an integer, got 2.5`: {"query": "q", "top_k": 2.5},
		`argument "path_glob" must be a string`:        {"query": "q", "path_glob": 3.0},
		`missing required argument "query"`:            {},
	} {
		if _, err := ParseArgs(args); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%v: error %v, want %q", args, err, wantErr)
		}
	}
}
