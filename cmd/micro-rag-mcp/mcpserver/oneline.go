package mcpserver

import (
	"strings"
	"unicode/utf8"
)

// OneLine collapses whitespace and cuts s to at most n runes, for a snippet
// shown on one line of a terminal.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	r := []rune(s)
	return string(r[:n-1]) + "…"
}
