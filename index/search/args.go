package search

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
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

// NoExt names, in extension lists, files without an extension (README,
// LICENSE, Makefile).
const NoExt = "noext"

// ArgsError is a search's arguments being wrong: the caller's mistake,
// its text meant for the model (or person) that made the call.
type ArgsError struct{ Err error }

func (e *ArgsError) Error() string { return e.Err.Error() }

// AnswerCall answers a search tool call: args as JSON decodes them (see
// ParseArgs; bad ones are an *ArgsError), searched in src (see Search),
// with the note a weak answer adds.
func AnswerCall(args map[string]any, src Source, opt Options) (Output, error) {
	req, err := ParseArgs(args)
	if err != nil {
		return Output{}, &ArgsError{err}
	}
	req.Explain = opt.Explain
	res, err := src.Search(req, opt)
	if err != nil {
		return Output{}, err
	}
	return Output{Results: res, Note: NotEnabledNote(res, src.Unindexed), query: req.Query}, nil
}

// ParseArgs makes the request of a search tool call from its arguments as
// JSON decodes them, defaults applied: their types first, then their
// values. Its error text is meant for the model (or person) that made the
// call.
func ParseArgs(args map[string]any) (Request, error) {
	err := toolargs.Known(args, "query", "top_k", "score_threshold", "path_glob", "ext", "modified_after", "modified_before")
	if err != nil {
		return Request{}, err
	}
	if q, ok := args["query"]; !ok || q == nil {
		return Request{}, errors.New(`missing required argument "query" (a non-empty string)`)
	}
	query, err := toolargs.Get(args, "query", "", "a string")
	if err != nil {
		return Request{}, err
	}
	topK, err := toolargs.Get(args, "top_k", float64(DefaultTopK), "an integer")
	if err == nil && topK != math.Trunc(topK) {
		err = fmt.Errorf(`argument "top_k" must be an integer, got %v`, topK)
	}
	if err != nil {
		return Request{}, err
	}
	threshold, err := toolargs.Get(args, "score_threshold", DefaultScoreThreshold, "a number")
	if err != nil {
		return Request{}, err
	}
	var fa FilterArgs
	for _, s := range []struct {
		name string
		to   *string
	}{{"path_glob", &fa.PathGlob}, {"modified_after", &fa.ModifiedAfter}, {"modified_before", &fa.ModifiedBefore}} {
		if *s.to, err = toolargs.Get(args, s.name, "", "a string"); err != nil {
			return Request{}, err
		}
	}
	switch e := args["ext"].(type) {
	case nil:
	case string: // one extension, or a comma-separated list
		fa.Exts = strings.Split(e, ",")
	case []any:
		for _, x := range e {
			s, ok := x.(string)
			if !ok {
				return Request{}, fmt.Errorf(`argument "ext" must be a list of strings, got an item of type %s`, toolargs.Type(x))
			}
			fa.Exts = append(fa.Exts, s)
		}
	default:
		return Request{}, fmt.Errorf(`argument "ext" must be a list of strings, got %s`, toolargs.Type(e))
	}
	switch {
	case strings.TrimSpace(query) == "":
		return Request{}, errors.New(`argument "query" must not be empty`)
	case topK < MinTopK || topK > MaxTopK:
		return Request{}, fmt.Errorf(`argument "top_k" must be between %d and %d, got %v`, MinTopK, MaxTopK, topK)
	case threshold < 0 || threshold > 1 || math.IsNaN(threshold):
		return Request{}, fmt.Errorf(`argument "score_threshold" must be between 0 and 1, got %v`, threshold)
	}
	filter, err := ParseFilter(fa)
	if err != nil {
		return Request{}, err
	}
	return Request{Query: query, TopK: int(topK), ScoreThreshold: threshold, Filter: filter}, nil
}

// FilterArgs are a search's filter arguments as the search tool and the CLI
// take them; "" and nil leave a filter out.
type FilterArgs struct {
	PathGlob       string   // the syntax of reindex's path_glob
	Exts           []string // "md", ".md" or "noext" (files without an extension)
	ModifiedAfter  string   // RFC 3339
	ModifiedBefore string   // RFC 3339
}

// ParseFilter checks a search's filter arguments; nil when there are none.
// Errors name the argument as the search tool does.
func ParseFilter(a FilterArgs) (*Filter, error) {
	var f Filter
	g, err := glob.Parse(a.PathGlob)
	if err != nil {
		return nil, err
	}
	if g != nil {
		f.Path = g.Match
	}
	for _, e := range a.Exts {
		e = strings.ToLower(strings.TrimSpace(e))
		switch {
		case e == NoExt:
			e = ""
		case e == "" || e == "." || strings.ContainsAny(e, "/*?[ "):
			return nil, fmt.Errorf(`argument "ext": %q is not a file extension (e.g. "md" or ".pdf"; %q for files without one)`, e, NoExt)
		case !strings.HasPrefix(e, "."):
			e = "." + e
		}
		f.Exts = append(f.Exts, e)
	}
	for _, t := range []struct {
		name, value string
		to          *time.Time
	}{{"modified_after", a.ModifiedAfter, &f.ModifiedAfter}, {"modified_before", a.ModifiedBefore, &f.ModifiedBefore}} {
		if t.value == "" {
			continue
		}
		if *t.to, err = time.Parse(time.RFC3339, t.value); err != nil {
			return nil, fmt.Errorf(`argument %q must be an RFC 3339 time such as "2026-01-31T00:00:00Z", got %q`, t.name, t.value)
		}
	}
	if !f.ModifiedAfter.IsZero() && !f.ModifiedBefore.IsZero() && !f.ModifiedAfter.Before(f.ModifiedBefore) {
		return nil, fmt.Errorf(`argument "modified_after" (%s) must be before "modified_before" (%s)`, a.ModifiedAfter, a.ModifiedBefore)
	}
	if f.Path == nil && f.Exts == nil && f.ModifiedAfter.IsZero() && f.ModifiedBefore.IsZero() {
		return nil, nil
	}
	return &f, nil
}
