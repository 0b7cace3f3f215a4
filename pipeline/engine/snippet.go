package engine

import (
	"strings"
	"unicode"
)

// Snippet returns about max code points of text around the first query word
// found in it (case-insensitive), whitespace collapsed, with "…" where cut.
func Snippet(text, query string, max int) string {
	runes := []rune(strings.Join(strings.Fields(text), " "))
	if len(runes) <= max {
		return string(runes)
	}
	lower := strings.ToLower(string(runes))
	at := -1
	for _, w := range strings.FieldsFunc(strings.ToLower(query), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		if len([]rune(w)) < 3 {
			continue
		}
		if i := strings.Index(lower, w); i >= 0 {
			at = len([]rune(lower[:i]))
			break
		}
	}
	start := 0
	if at > max/3 {
		start = at - max/3
	}
	end := min(start+max, len(runes))
	start = max0(end-max, 0)
	// Snap to word boundaries so the snippet does not start mid-word.
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

func max0(a, b int) int {
	if a > b {
		return a
	}
	return b
}
