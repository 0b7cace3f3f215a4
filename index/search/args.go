package search

import (
	"fmt"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
)

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
