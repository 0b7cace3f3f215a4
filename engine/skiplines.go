package engine

import (
	"fmt"
	"strings"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// SkipLines describes skipped files for people, one group per entry:
// "20 compressed (.gz): a.gz, b.gz, … and 15 more — why". Paths are
// escaped for a terminal (term.Visible).
func SkipLines(groups []stages.SkipGroup) []string {
	var out []string
	for _, g := range groups {
		var b strings.Builder
		fmt.Fprintf(&b, "%d %s", g.Count, strings.ReplaceAll(g.Reason, "_", " "))
		if len(g.Exts) > 0 {
			fmt.Fprintf(&b, " (%s)", isearch.ExtList(g.Exts))
		}
		ex := make([]string, len(g.Examples))
		for i, p := range g.Examples {
			ex[i] = term.Visible(p)
		}
		fmt.Fprintf(&b, ": %s", strings.Join(ex, ", "))
		if more := g.Count - len(g.Examples); more > 0 {
			fmt.Fprintf(&b, " and %d more", more)
		}
		fmt.Fprintf(&b, " — %s", g.Note)
		out = append(out, b.String())
	}
	return out
}
