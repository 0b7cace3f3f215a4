package schema

import (
	"strings"
	"unicode/utf8"
)

// EncodePath turns a file's path as the file system holds it (any bytes,
// "/"-separated, relative to the data folder) into the UTF-8 string the
// index stores and search returns. A byte that is not part of valid UTF-8
// becomes %XX (upper-case hex); a "%" followed by two hex digits becomes
// %25 so that it cannot be read as such an escape. Every other path is
// unchanged. DecodePath reverses it exactly, so two names never collide.
func EncodePath(raw string) string {
	if utf8.ValidString(raw) && !hasEscape(raw) {
		return raw
	}
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	b.Grow(len(raw) + 8)
	for i := 0; i < len(raw); {
		r, size := utf8.DecodeRuneInString(raw[i:])
		switch {
		case r == utf8.RuneError && size == 1:
			b.WriteByte('%')
			b.WriteByte(hex[raw[i]>>4])
			b.WriteByte(hex[raw[i]&15])
		case raw[i] == '%' && isEscape(raw[i:]):
			b.WriteString("%25")
		default:
			b.WriteString(raw[i : i+size])
		}
		i += size
	}
	return b.String()
}

// DecodePath returns the file system's bytes for a path from the index.
func DecodePath(p string) string {
	if !hasEscape(p) {
		return p
	}
	var b strings.Builder
	b.Grow(len(p))
	for i := 0; i < len(p); i++ {
		if p[i] == '%' && isEscape(p[i:]) {
			b.WriteByte(unhex(p[i+1])<<4 | unhex(p[i+2]))
			i += 2
			continue
		}
		b.WriteByte(p[i])
	}
	return b.String()
}

func hasEscape(s string) bool {
	for {
		i := strings.IndexByte(s, '%')
		if i < 0 || isEscape(s[i:]) {
			return i >= 0
		}
		s = s[i+1:]
	}
}

// isEscape reports whether s starts with "%" and two hex digits.
func isEscape(s string) bool {
	return len(s) >= 3 && s[0] == '%' && isHex(s[1]) && isHex(s[2])
}

func isHex(c byte) bool {
	return '0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'
}

func unhex(c byte) byte {
	switch {
	case c <= '9':
		return c - '0'
	case c >= 'a':
		return c - 'a' + 10
	}
	return c - 'A' + 10
}
