package search

import (
	"math"
	"strings"
	"testing"
)

func TestRequestCheck(t *testing.T) {
	if err := NewRequest("q").Check(); err != nil {
		t.Fatalf("the defaults fail their own check: %v", err)
	}
	for _, tc := range []struct {
		req  Request
		want string
	}{
		{Request{Query: " \n", TopK: 5}, `"query" must not be empty`},
		{Request{Query: "q", TopK: MinTopK - 1}, `"top_k" must be between 1 and 50, got 0`},
		{Request{Query: "q", TopK: MaxTopK + 1}, `"top_k" must be between 1 and 50, got 51`},
		{Request{Query: "q", TopK: 5, ScoreThreshold: 1.5}, `"score_threshold" must be between 0 and 1, got 1.5`},
		{Request{Query: "q", TopK: 5, ScoreThreshold: math.NaN()}, `"score_threshold" must be between 0 and 1`},
	} {
		err := tc.req.Check()
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: got %v, want %q", tc.req, err, tc.want)
		}
	}
}
