package search

import (
	"errors"
	"fmt"
	"math"
	"strings"
)

// Argument limits and defaults of a search: the MCP tool and the CLI both
// take them from here.
const (
	DefaultTopK           = 5
	MinTopK               = 1
	MaxTopK               = 50
	DefaultScoreThreshold = 0.2
	// DefaultMode is the ranking of Options that name none.
	DefaultMode = Hybrid
	// DefaultFusion is the fusion of Options that name none: the one that
	// ranked at least as well as dense and keyword search alone on all four
	// evaluations (docs/search-fusion.md).
	DefaultFusion = FusionSpecific
)

// NewRequest checks a search's arguments against their limits and makes
// the request. topK is a float so that a JSON number is checked before it
// is made an int. The error text names the arguments as the search tool
// does, for the model calling it.
func NewRequest(query string, topK, threshold float64) (Request, error) {
	switch {
	case strings.TrimSpace(query) == "":
		return Request{}, errors.New(`argument "query" must not be empty`)
	case topK < MinTopK || topK > MaxTopK:
		return Request{}, fmt.Errorf(`argument "top_k" must be between %d and %d, got %v`, MinTopK, MaxTopK, topK)
	case threshold < 0 || threshold > 1 || math.IsNaN(threshold):
		return Request{}, fmt.Errorf(`argument "score_threshold" must be between 0 and 1, got %v`, threshold)
	}
	return Request{Query: query, TopK: int(topK), ScoreThreshold: threshold}, nil
}

// NoExt names, in extension lists, files without an extension (README,
// LICENSE, Makefile).
const NoExt = "noext"
