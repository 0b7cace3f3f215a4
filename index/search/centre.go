package search

import (
	"unicode"

	"github.com/micro-rag/micro-rag-mcp/index/lexical"
)

// DefaultPassageCap is the most characters of a passage a result carries
// by default (Options.PassageCap): a longer one, at most four merged
// chunks of about 3,400, is cut to the window around its best-matching
// sentence. Chosen by bench/cmd/fusion -passage-caps on the sample, Go
// docs, man pages and crowded evaluations in every mode: 3,000 is the
// smallest cap tried that lost no answer@5 anywhere (2,800 lost one man
// page question in hybrid mode; smaller caps more, and other centres, two
// windows or scoring sentences with the embedder did no better: see
// docs/search-fusion.md#passage-caps).
const DefaultPassageCap = 3000

// segment is a sentence or line of a passage, in runes.
type segment struct{ start, end int }

// segments splits text at sentence ends (. ! ? followed by white space)
// and line breaks.
func segments(text []rune) []segment {
	var out []segment
	start := 0
	for i, r := range text {
		end := -1
		switch {
		case r == '\n':
			end = i
		case (r == '.' || r == '!' || r == '?') && i+1 < len(text) && unicode.IsSpace(text[i+1]):
			end = i + 1
		}
		if end >= 0 {
			for start < end && unicode.IsSpace(text[start]) {
				start++
			}
			if end > start {
				out = append(out, segment{start, end})
			}
			start = end
		}
	}
	if start < len(text) {
		out = append(out, segment{start, len(text)})
	}
	return out
}

// termsMatch reports whether a passage term counts as a query term: equal,
// or sharing a first five letters (a crude stem: restarts, restarting).
func termsMatch(a, b string) bool {
	if a == b {
		return true
	}
	const stem = 5
	return len(a) >= stem && len(b) >= stem && a[:stem] == b[:stem]
}

// centreWindow returns the runes [start, end) of text (a passage whose best
// chunk spans focus) that a result of at most limit runes shows: the window
// around the sentence of the best chunk holding most of the query's terms
// (the first such; the chunk's middle when none holds any), cut at sentence
// or line boundaries where that keeps the sentence.
func centreWindow(text []rune, focus segment, query string, limit int) (start, end int) {
	if len(text) <= limit {
		return 0, len(text)
	}
	terms := lexical.Tokens(query)
	segs := segments(text)
	centre, best := (focus.start+focus.end)/2, 0
	for _, s := range segs {
		if s.end <= focus.start || s.start >= focus.end {
			continue
		}
		seen := map[string]bool{}
		for _, t := range lexical.Tokens(string(text[s.start:s.end])) {
			for _, q := range terms {
				if termsMatch(t, q) {
					seen[q] = true
				}
			}
		}
		if len(seen) > best {
			best, centre = len(seen), (s.start+s.end)/2
		}
	}
	start = min(max(0, centre-limit/2), len(text)-limit)
	end = start + limit
	// Whole sentences where possible: start at the first sentence that
	// begins in the window, end at the last that ends in it, unless that
	// would drop the centre.
	for _, s := range segs {
		if s.start >= start {
			if s.start <= centre {
				start = s.start
			}
			break
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s.end <= end {
			if s.end > centre {
				end = s.end
			}
			break
		}
	}
	return start, end
}

// centre cuts each result's passage longer than limit runes to its
// centreWindow; the char range then spans the text returned. A negative
// limit keeps whole passages, 0 means DefaultPassageCap.
func centre(res []Result, query string, limit int) {
	if limit == 0 {
		limit = DefaultPassageCap
	}
	for i := range res {
		r := &res[i]
		text := r.raw
		r.raw = ""
		if limit < 0 || len([]rune(r.Snippet)) <= limit {
			continue
		}
		raw := []rune(text)
		start, end := centreWindow(raw, r.focus, query, limit)
		r.Snippet = collapseSpace(string(raw[start:end]))
		r.CharStart, r.CharEnd = r.CharStart+start, r.CharStart+end
	}
}
