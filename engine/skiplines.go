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

// MaxListedFailures is how many failed files a reindex result names; a
// folder of thousands of unreadable files must not flood the client.
const MaxListedFailures = 20

// FailLines says of each failure "path: reason", then how many more the
// run had (of total) beyond those listed.
func FailLines(failed []stages.Failure, total int) []string {
	out := make([]string, 0, len(failed)+1)
	for _, f := range failed {
		out = append(out, term.Visible(f.Path)+": "+term.Visible(f.Reason))
	}
	if more := total - len(failed); more > 0 {
		out = append(out, fmt.Sprintf("and %d more (micro-rag-mcp status lists them all)", more))
	}
	return out
}

// Counted is "1 file" or "N files": n of noun, for people.
func Counted(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
