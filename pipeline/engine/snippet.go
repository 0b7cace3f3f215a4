package engine

import (
	"strings"
	"unicode"
)

// stopwords are skipped when placing a snippet: they match everywhere.
var stopwords = map[string]bool{
	"the": true, "and": true, "for": true, "are": true, "was": true, "how": true, "what": true,
	"when": true, "who": true, "why": true, "does": true, "did": true, "with": true, "from": true,
	"that": true, "this": true, "into": true, "can": true, "get": true, "our": true, "you": true,
}

// Snippet returns about max code points of text, whitespace collapsed,
// placed where the query's words are densest, with "…" where it is cut.
func Snippet(text, query string, max int) string {
	runes := []rune(strings.Join(strings.Fields(text), " "))
	if len(runes) <= max {
		return string(runes)
	}
	lower := []rune(strings.ToLower(string(runes)))
	var hits []int
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 3 || stopwords[w] {
			continue
		}
		hits = append(hits, findAll(lower, []rune(w))...)
	}
	// Start a little before the hit whose window holds the most hits.
	start, best := 0, 0
	for _, h := range hits {
		from := max0(h-max/4, 0)
		n := 0
		for _, o := range hits {
			if o >= from && o < from+max {
				n++
			}
		}
		if n > best || (n == best && from < start) {
			start, best = from, n
		}
	}
	end := min(start+max, len(runes))
	start = max0(end-max, 0)
	// Snap to word boundaries so the snippet does not start or end mid-word.
	for start > 0 && start < end && !unicode.IsSpace(runes[start-1]) {
		start++
	}
	for end < len(runes) && end > start && !unicode.IsSpace(runes[end]) {
		end--
	}
	s := strings.TrimSpace(string(runes[start:end]))
	if start > 0 {
		s = "…" + s
	}
	if end < len(runes) {
		s += "…"
	}
	return s
}

// findAll returns the rune offsets of word in text.
func findAll(text, word []rune) []int {
	var out []int
	for i := 0; i+len(word) <= len(text); i++ {
		if text[i] == word[0] && string(text[i:i+len(word)]) == string(word) {
			out = append(out, i)
		}
	}
	return out
}

func max0(a, b int) int {
	if a > b {
		return a
	}
	return b
}
