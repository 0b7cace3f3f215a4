package mcpserver

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

// ExcerptRunes caps the passage excerpt of each result in the search tool's
// text block. structuredContent keeps the passage (up to
// search.DefaultPassageCap); the text is the compact form for clients that
// show only text, which can read the result's
// uri for more. 90 runes cut the sample's answer ("sixteen weeks") off the
// best line, so a model reading only text could not see it; 140 holds it
// (tested end to end) and a top_k 5 search then costs 2,563 o200k tokens on
// testdata/sample, 160 cost 2,585 (scripts/search_tokens.py).
const ExcerptRunes = 140

// Hit is one search result as the tool returns it.
type Hit struct {
	engine.Result
	// Paths lists every file holding this same passage text, Path first,
	// when copies of a document sit in several places; absent otherwise.
	Paths []string `json:"paths,omitempty"`
}

// MergeCopies folds results whose passage text is the same (identical
// files in two folders, a .txt beside its .docx) into the best-ranked one,
// which lists every path. At most topK results are kept.
func MergeCopies(res []engine.Result, topK int) []Hit {
	out := make([]Hit, 0, min(len(res), topK))
	first := map[string]int{} // passage text → index in out
	for _, r := range res {
		key := strings.Join(strings.Fields(r.Snippet), " ")
		if i, ok := first[key]; ok && key != "" {
			h := &out[i]
			if h.Paths == nil {
				h.Paths = []string{h.Path}
			}
			if !contains(h.Paths, r.Path) {
				h.Paths = append(h.Paths, r.Path)
			}
			continue
		}
		if len(out) == topK {
			continue // later results may still be copies of kept ones
		}
		first[key] = len(out)
		out = append(out, Hit{Result: r})
	}
	return out
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

// Excerpt returns about n runes of passage around the part that best
// matches query (the line sharing most query words, the first on a tie),
// on one line, "…" marking cuts.
func Excerpt(passage, query string, n int) string {
	words := queryWords(query)
	lines := strings.Split(passage, "\n")
	best, bestScore, at := 0, 0, 0
	offsets := make([]int, len(lines)) // rune offset of each line in the one-line text
	pos := 0
	for i, l := range lines {
		f := strings.Join(strings.Fields(l), " ")
		offsets[i] = pos
		if f != "" {
			pos += utf8.RuneCountInString(f) + 1
		}
		lw := strings.ToLower(f)
		s := 0
		for _, w := range words {
			if strings.Contains(lw, w) {
				s++
			}
		}
		if s > bestScore {
			best, bestScore = i, s
		}
	}
	flat := []rune(strings.Join(strings.Fields(passage), " "))
	if len(flat) <= n {
		return string(flat)
	}
	// Start a little before the best line so its context shows, never past
	// the point where the window would run off the end.
	at = max(0, min(offsets[best]-n/8, len(flat)-n))
	start, end := at, at+n
	if start > 0 {
		start = wordStart(flat, start)
	}
	end = wordEnd(flat, min(end, len(flat)))
	s := strings.TrimSpace(string(flat[start:end]))
	if start > 0 {
		s = "…" + s
	}
	if end < len(flat) {
		s += "…"
	}
	return s
}

// wordStart moves i forward to the start of a word.
func wordStart(r []rune, i int) int {
	for j := i; j < len(r) && j < i+20; j++ {
		if unicode.IsSpace(r[j]) {
			return j + 1
		}
	}
	return i
}

// wordEnd moves i back to the end of a word.
func wordEnd(r []rune, i int) int {
	if i >= len(r) {
		return len(r)
	}
	for j := i; j > 0 && j > i-20; j-- {
		if unicode.IsSpace(r[j]) {
			return j
		}
	}
	return i
}

// queryWords are the query's lower-cased words of two or more letters.
func queryWords(q string) []string {
	var out []string
	for _, w := range strings.FieldsFunc(strings.ToLower(q), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r)
	}) {
		if utf8.RuneCountInString(w) >= 2 && !stopWords[w] && !contains(out, w) {
			out = append(out, w)
		}
	}
	return out
}

var stopWords = map[string]bool{
	"the": true, "of": true, "and": true, "or": true, "to": true, "in": true, "on": true, "is": true, "are": true,
	"do": true, "does": true, "how": true, "what": true, "who": true, "which": true, "when": true, "where": true,
	"why": true, "for": true, "an": true, "it": true, "my": true, "we": true, "be": true, "by": true, "at": true,
	"with": true, "from": true, "this": true, "that": true, "can": true, "many": true, "much": true,
}
