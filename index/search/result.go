package search

import (
	"fmt"
	"math"
	"slices"
	"strings"
)

// mergeCopies folds results whose passage text is the same (identical
// files in two folders, a .txt beside its .pdf) into the best-ranked one,
// whose Paths lists every path. At most topK results are kept; results
// past them still add their path to a kept copy.
func mergeCopies(res []Result, topK int) []Result {
	out := make([]Result, 0, min(len(res), topK))
	first := map[string]int{} // passage text → index in out
	for _, r := range res {
		key := strings.Join(strings.Fields(r.Snippet), " ")
		if i, ok := first[key]; ok && key != "" {
			h := &out[i]
			if h.Paths == nil {
				h.Paths = []string{h.Path}
			}
			if !slices.Contains(h.Paths, r.Path) {
				h.Paths = append(h.Paths, r.Path)
			}
			continue
		}
		if len(out) == topK {
			continue // later results may still be copies of kept ones
		}
		first[key] = len(out)
		out = append(out, r)
	}
	return out
}

// roundScores rounds what a result reports: digits past these cost a
// model tokens and say nothing. Scores to 1/1000 (the order is the
// ranking's) and the explained fused score with them, mtimes to the
// millisecond.
func roundScores(res []Result) {
	for i := range res {
		res[i].Score = math.Round(res[i].Score*1e3) / 1e3
		res[i].Mtime = math.Round(res[i].Mtime*1e3) / 1e3
		if x := res[i].Explain; x != nil {
			x.Fused = math.Round(x.Fused*1e3) / 1e3
		}
	}
}

// Citation names where a result is: its path plus page or line range
// when known.
func (r Result) Citation() string {
	switch {
	case r.Page > 0:
		return fmt.Sprintf("%s, page %d", r.Path, r.Page)
	case r.LineStart > 0 && r.LineEnd > r.LineStart:
		return fmt.Sprintf("%s, lines %d-%d", r.Path, r.LineStart, r.LineEnd)
	case r.LineStart > 0:
		return fmt.Sprintf("%s, line %d", r.Path, r.LineStart)
	}
	return r.Path
}
