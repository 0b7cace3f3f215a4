package search

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
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
	res, missed, err := src.search(req, opt)
	if err != nil {
		return Output{}, err
	}
	// A filter that left out every file explains the empty answer; the
	// extensions not enabled do not.
	note := cmp.Or(missed, NotEnabledNote(res, src.Unindexed))
	return Output{Results: res, Note: note, query: req.Query, filteredOut: missed != ""}, nil
}

// ParseArgs makes the request of a search tool call from its arguments as
// JSON decodes them, defaults applied: their types first, then their
// values. Its error text is meant for the model (or person) that made the
// call.
func ParseArgs(args map[string]any) (Request, error) {
	err := KnownArgs(args, "query", "top_k", "score_threshold", "path_glob", "ext", "modified_after", "modified_before")
	if err != nil {
		return Request{}, err
	}
	if q, ok := args["query"]; !ok || q == nil {
		return Request{}, errors.New(`missing required argument "query" (a non-empty string)`)
	}
	query, err := Arg(args, "query", "", "a string")
	if err != nil {
		return Request{}, err
	}
	topK, err := Arg(args, "top_k", float64(DefaultTopK), "an integer")
	if err == nil && topK != math.Trunc(topK) {
		err = fmt.Errorf(`argument "top_k" must be an integer, got %v`, topK)
	}
	if err != nil {
		return Request{}, err
	}
	threshold, err := Arg(args, "score_threshold", DefaultScoreThreshold, "a number")
	if err != nil {
		return Request{}, err
	}
	var fa FilterArgs
	for _, s := range []struct {
		name string
		to   *string
	}{{"path_glob", &fa.PathGlob}, {"modified_after", &fa.ModifiedAfter}, {"modified_before", &fa.ModifiedBefore}} {
		if *s.to, err = Arg(args, s.name, "", "a string"); err != nil {
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
				return Request{}, fmt.Errorf(`argument "ext" must be a list of strings, got an item of type %s`, ArgType(x))
			}
			fa.Exts = append(fa.Exts, s)
		}
	default:
		return Request{}, fmt.Errorf(`argument "ext" must be a list of strings, got %s`, ArgType(e))
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
		f.Path, f.glob = g.Match, a.PathGlob
	}
	for _, given := range a.Exts {
		e := strings.ToLower(strings.TrimSpace(given))
		switch {
		case e == NoExt:
			e = ""
		case e == "" || strings.HasSuffix(e, ".") || strings.ContainsAny(e, "/*?[ "):
			return nil, fmt.Errorf(`argument "ext": %q is not a file extension (e.g. "md" or ".pdf"; %q for files without one)`, e, NoExt)
		case !strings.HasPrefix(e, "."):
			e = "." + e
		}
		// A file's extension is its name's part after the last dot, so
		// one with another dot would match nothing.
		if i := strings.LastIndexByte(e, '.'); i > 0 {
			return nil, fmt.Errorf(`argument "ext": %q is not a file extension: a file's extension is the part after the last dot: %q`, given, e[i+1:])
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

// KnownArgs rejects a tool call's misspelt arguments (args as JSON
// decodes them), which would otherwise be ignored silently. The reindex
// tool's arguments are checked with these helpers too.
func KnownArgs(args map[string]any, names ...string) error {
	for k := range args {
		if !slices.Contains(names, k) {
			return fmt.Errorf("unknown argument %q (expected %s)", k, strings.Join(names, ", "))
		}
	}
	return nil
}

// Arg returns argument name as a T, def when absent or null; kind names
// T in the error text ("a string", "a number"...).
func Arg[T any](args map[string]any, name string, def T, kind string) (T, error) {
	v, ok := args[name]
	if !ok || v == nil {
		return def, nil
	}
	t, ok := v.(T)
	if !ok {
		return def, fmt.Errorf(`argument %q must be %s, got %s`, name, kind, ArgType(v))
	}
	return t, nil
}

// ArgType names v's JSON type for an error text: "a string", "a number"...
func ArgType(v any) string {
	switch v.(type) {
	case string:
		return "a string"
	case float64:
		return "a number"
	case bool:
		return "a boolean"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	case nil:
		return "null"
	}
	return fmt.Sprintf("%T", v)
}
