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

// NewRequest is a request for query with the default top_k and threshold.
func NewRequest(query string) Request {
	return Request{Query: query, TopK: DefaultTopK, ScoreThreshold: DefaultScoreThreshold}
}

// Check reports the first argument of req outside its limits. Its error
// text names the arguments as the search tool does, for the model calling
// it.
func (req Request) Check() error {
	if err := CheckQuery(req.Query); err != nil {
		return err
	}
	if err := CheckTopK(float64(req.TopK)); err != nil {
		return err
	}
	return CheckThreshold(req.ScoreThreshold)
}

// CheckQuery rejects a query of nothing but white space.
func CheckQuery(q string) error {
	if strings.TrimSpace(q) == "" {
		return errors.New(`argument "query" must not be empty`)
	}
	return nil
}

// CheckTopK rejects a top_k outside MinTopK..MaxTopK. It takes a float so a
// JSON number is checked before it is made an int.
func CheckTopK(k float64) error {
	if k < MinTopK || k > MaxTopK {
		return fmt.Errorf(`argument "top_k" must be between %d and %d, got %v`, MinTopK, MaxTopK, k)
	}
	return nil
}

// CheckThreshold rejects a score threshold outside [0, 1].
func CheckThreshold(x float64) error {
	if x < 0 || x > 1 || math.IsNaN(x) {
		return fmt.Errorf(`argument "score_threshold" must be between 0 and 1, got %v`, x)
	}
	return nil
}
