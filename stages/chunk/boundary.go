package chunk

import (
	"unicode"
	"unicode/utf8"
)

// isSpace is the whitespace that chunks never start or end with and that
// coverage ignores.
func isSpace(r rune) bool {
	if r < utf8.RuneSelf {
		switch r {
		case ' ', '\t', '\n', '\v', '\f', '\r':
			return true
		}
		return false
	}
	return unicode.IsSpace(r)
}

// isCJK reports scripts written without spaces between words, where any
// character boundary is as good as a word boundary.
func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	switch {
	case r >= 0x3000 && r <= 0x303F, // CJK symbols and punctuation
		r >= 0xFF00 && r <= 0xFFEF: // full- and half-width forms
		return true
	}
	return unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) || unicode.Is(unicode.Katakana, r)
}

// extends reports runes that attach to the rune before them, so a cut just
// before one would split a user-perceived character (combining marks,
// variation selectors, zero-width joiner, emoji modifiers, tag characters).
func extends(r rune) bool {
	if r < 0x300 {
		return false
	}
	switch {
	case r == 0x200D, // ZWJ
		r >= 0xFE00 && r <= 0xFE0F,   // variation selectors
		r >= 0x1F3FB && r <= 0x1F3FF, // skin-tone modifiers
		r >= 0xE0020 && r <= 0xE007F, // tags
		r >= 0xE0100 && r <= 0xE01EF: // variation selectors supplement
		return true
	}
	return unicode.In(r, unicode.Mn, unicode.Me, unicode.Mc)
}

// clusterBreak reports whether a cut between prev and cur keeps characters
// whole (a cheap approximation of grapheme cluster boundaries).
func clusterBreak(prev, cur rune) bool {
	return prev != 0x200D && !extends(cur)
}

// cjkBoundary reports a boundary between two non-space runes that counts as a
// word boundary because one side is CJK.
func cjkBoundary(prev, cur rune) bool {
	return (isCJK(prev) || isCJK(cur)) && clusterBreak(prev, cur)
}

// isCloser reports closing quotes and brackets that may follow a sentence
// terminator ("He left.)" or 「はい。」).
func isCloser(r rune) bool {
	switch r {
	case '"', '\'', ')', ']', '}', '»', '’', '”', '」', '』', '）', '】', '〕', '〉', '》':
		return true
	}
	return false
}

// isCJKTerminator reports full-stop marks that end a sentence without a
// following space.
func isCJKTerminator(r rune) bool {
	switch r {
	case '。', '！', '？', '｡', '．':
		return true
	}
	return false
}

// abbreviations end with a period but rarely end a sentence. Lower case.
var abbreviations = map[string]bool{
	"mr": true, "mrs": true, "ms": true, "dr": true, "prof": true, "sr": true,
	"jr": true, "st": true, "vs": true, "cf": true, "fig": true, "figs": true,
	"eq": true, "al": true, "approx": true, "dept": true,
}

// isAbbreviation reports a word (the text before a final '.') that looks like
// "e.g", "U.S", a single initial or a common title. Deliberately cheap: it
// only decides where to prefer a cut.
func isAbbreviation(word []rune) bool {
	for len(word) > 0 && (word[0] == '(' || word[0] == '"' || word[0] == '\'' || word[0] == '[' || word[0] == '“') {
		word = word[1:]
	}
	if len(word) == 0 {
		return false
	}
	if len(word) == 1 {
		return unicode.IsLetter(word[0])
	}
	seg, dotted, short := 0, false, true
	for _, r := range word {
		if r == '.' {
			dotted = true
			if seg == 0 || seg > 2 {
				short = false
			}
			seg = 0
			continue
		}
		if !unicode.IsLetter(r) {
			return false
		}
		seg++
	}
	if dotted {
		return short && seg >= 1 && seg <= 2
	}
	if len(word) > 6 {
		return false
	}
	var lower [6]rune
	for i, r := range word {
		lower[i] = unicode.ToLower(r)
	}
	return abbreviations[string(lower[:len(word)])]
}
