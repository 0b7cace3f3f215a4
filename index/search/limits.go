package search

import (
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/toolargs"
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

// ParseArgs makes the request of a search tool call from its arguments as
// JSON decodes them, applying defaults and checking types and limits. Its
// error text is meant for the model calling the tool.
func ParseArgs(args map[string]any) (Request, error) {
	if err := toolargs.Known(args, "query", "top_k", "score_threshold", "path_glob", "ext", "modified_after", "modified_before"); err != nil {
		return Request{}, err
	}
	q, ok := args["query"]
	if !ok || q == nil {
		return Request{}, errors.New(`missing required argument "query" (a non-empty string)`)
	}
	qs, ok := q.(string)
	if !ok {
		return Request{}, fmt.Errorf(`argument "query" must be a string, got %s`, toolargs.Type(q))
	}
	topK, threshold := float64(DefaultTopK), DefaultScoreThreshold
	if v, ok := args["top_k"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok {
			return Request{}, fmt.Errorf(`argument "top_k" must be an integer, got %s`, toolargs.Type(v))
		}
		if f != math.Trunc(f) {
			return Request{}, fmt.Errorf(`argument "top_k" must be an integer, got %v`, f)
		}
		topK = f
	}
	if v, ok := args["score_threshold"]; ok && v != nil {
		f, ok := v.(float64)
		if !ok {
			return Request{}, fmt.Errorf(`argument "score_threshold" must be a number, got %s`, toolargs.Type(v))
		}
		threshold = f
	}
	req, err := NewRequest(qs, topK, threshold)
	if err != nil {
		return req, err
	}
	fa, err := filterArgs(args)
	if err == nil {
		req.Filter, err = ParseFilter(fa)
	}
	if err != nil {
		return Request{}, err
	}
	return req, nil
}

// filterArgs are a search tool call's filter arguments, their types
// checked.
func filterArgs(args map[string]any) (FilterArgs, error) {
	var fa FilterArgs
	var err error
	for _, a := range []struct {
		name string
		to   *string
	}{{"path_glob", &fa.PathGlob}, {"modified_after", &fa.ModifiedAfter}, {"modified_before", &fa.ModifiedBefore}} {
		if *a.to, err = toolargs.String(args, a.name); err != nil {
			return fa, err
		}
	}
	if v, ok := args["ext"]; ok && v != nil {
		switch e := v.(type) {
		case string: // one extension, or a comma-separated list
			fa.Exts = strings.Split(e, ",")
		case []any:
			for _, x := range e {
				s, ok := x.(string)
				if !ok {
					return fa, fmt.Errorf(`argument "ext" must be a list of strings, got an item of type %s`, toolargs.Type(x))
				}
				fa.Exts = append(fa.Exts, s)
			}
		default:
			return fa, fmt.Errorf(`argument "ext" must be a list of strings, got %s`, toolargs.Type(v))
		}
	}
	return fa, nil
}
