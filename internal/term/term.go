// Package term writes untrusted text (file names, document text, errors)
// for a terminal: every character a terminal would act on is escaped. The
// CLI and the MCP server's text both use it.
package term

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// OneLine collapses whitespace and cuts s to at most n runes, for a snippet
// shown on one line of a terminal. The result is Visible.
func OneLine(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) > n {
		r := []rune(s)
		s = string(r[:n-1]) + "…"
	}
	return Visible(s)
}

// actsOnTerminal reports whether a terminal would act on r rather than show
// it: C0 controls, DEL and C1 controls can retitle the window, clear the
// screen or write the clipboard; bidi overrides and isolates reorder the
// text around them, so a name can show another extension than it has.
func actsOnTerminal(r rune) bool {
	return r < 0x20 || r >= 0x7f && r <= 0x9f || r >= 0x202a && r <= 0x202e || r >= 0x2066 && r <= 0x2069
}

// Visible returns s with everything a terminal would act on written as an
// escape instead: \x1b for C0 controls (newline and tab included, since
// every caller prints one field on one line) and DEL, \u009b for C1
// controls and bidi overrides and isolates, and \xff for a byte that is not
// UTF-8, which a terminal in an 8-bit encoding could take for C1. Use it on
// every file name and text from documents printed for people. A backslash
// is left as it is: the escapes are there to be seen, not parsed back.
func Visible(s string) string {
	var b strings.Builder
	escaped := false // b holds s up to i
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		esc := ""
		switch {
		case r == utf8.RuneError && size == 1:
			esc = fmt.Sprintf(`\x%02x`, s[i])
		case r < 0x80 && actsOnTerminal(r):
			esc = fmt.Sprintf(`\x%02x`, r)
		case actsOnTerminal(r):
			esc = fmt.Sprintf(`\u%04x`, r)
		}
		if esc != "" && !escaped {
			b.Grow(len(s) + 16)
			b.WriteString(s[:i])
			escaped = true
		}
		switch {
		case esc != "":
			b.WriteString(esc)
		case escaped:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	if !escaped {
		return s
	}
	return b.String()
}

// VisibleText is Visible for text of several lines: newlines and tabs
// stay as they are, every other control is escaped.
func VisibleText(s string) string {
	lines := strings.Split(s, "\n")
	for i, line := range lines {
		cells := strings.Split(line, "\t")
		for j, c := range cells {
			cells[j] = Visible(c)
		}
		lines[i] = strings.Join(cells, "\t")
	}
	return strings.Join(lines, "\n")
}

// VisibleJSON rewrites encoded JSON so that no character a terminal acts on
// is left raw: encoding/json escapes C0 controls but writes DEL, C1 and the
// bidi controls as they are. They can only stand inside strings, where
// \u escapes decode to the same characters, so the JSON means the same.
func VisibleJSON(js []byte) []byte {
	var out []byte
	for i := 0; i < len(js); {
		r, size := utf8.DecodeRune(js[i:])
		if actsOnTerminal(r) && r >= 0x7f {
			if out == nil {
				out = append(make([]byte, 0, len(js)+16), js[:i]...)
			}
			out = fmt.Appendf(out, `\u%04x`, r)
		} else if out != nil {
			out = append(out, js[i:i+size]...)
		}
		i += size
	}
	if out == nil {
		return js
	}
	return out
}
