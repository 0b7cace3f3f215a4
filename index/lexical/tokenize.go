// Package lexical is the keyword half of search: a tokenizer, an inverted
// index of immutable segments with deletions, and BM25F scoring over three
// fields (heading, file name, body). It has no cgo and knows nothing of the
// rest of the index; the index package decides when segments are written.
package lexical

import (
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"
	"unicode/utf8"

	"github.com/kljensen/snowball/english"
	"golang.org/x/text/unicode/norm"
)

// MaxTokenBytes caps one token; longer ones are cut at a rune boundary, so a
// base64 blob or a minified line cannot bloat the dictionary.
const MaxTokenBytes = 64

// maxParts caps the parts taken from one identifier.
const maxParts = 16

// connectors join the parts of an identifier: QX-7731-B, snake_case,
// pkg.Func, src/main.go, host:port, user@host.
func isConnector(r rune) bool {
	switch r {
	case '-', '_', '.', '/', ':', '@':
		return true
	}
	return false
}

// isCJK reports scripts written without spaces between words; they are
// indexed as overlapping character pairs.
func isCJK(r rune) bool {
	return r >= 0x2E80 && (unicode.Is(unicode.Han, r) || unicode.Is(unicode.Hiragana, r) ||
		unicode.Is(unicode.Katakana, r) || unicode.Is(unicode.Hangul, r)) ||
		r == 0x30FC // katakana prolonged sound mark is Common, but part of words
}

func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return r != utf8.RuneError && (unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r)) && !isCJK(r)
}

// Tokens returns the index terms of text in order. See AppendTokens.
func Tokens(text string) []string { return AppendTokens(nil, text) }

// AppendTokens appends the index terms of text to dst and returns it. Terms
// are case and accent folded. An identifier yields itself whole, its parts,
// and its parts joined (QX-7731-B: qx-7731-b, qx7731b, qx, 7731, b; a flag
// --only-matching also yields only-matching); camelCase and letter/digit
// boundaries split too. A word followed by a number yields the pair joined
// (RFC 7807: rfc, 7807, rfc7807), so the phrase matches rfc7807 and RFC-7807.
// Han, kana and Hangul give overlapping character pairs. English stop words
// are left out, except inside a longer identifier. A plain word of ASCII
// letters yields its English stem alone (printers, printing: printer,
// print); an identifier keeps its exact terms, and each of its parts adds
// its stem, so the word "retries" finds max_retry_backoff_ms. Invalid
// UTF-8 separates.
func AppendTokens(dst []string, text string) []string {
	var prev string // the previous word when it was letters only, for pairs
	prevEnd := -1
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		switch {
		case isCJK(r):
			j := i
			for j < len(text) {
				r2, n2 := utf8.DecodeRuneInString(text[j:])
				if !isCJK(r2) {
					break
				}
				j += n2
			}
			dst = appendBigrams(dst, norm.NFC.String(text[i:j]))
			prev, i = "", j
		case isWordRune(r) || r == '-' && isFlagStart(text[i:]):
			j := wordEnd(text, i)
			var word wordInfo
			dst, word = appendWord(dst, text[i:j])
			// A pair needs exactly one space between a word and a number.
			if prev != "" && word.digits != "" && prevEnd == i-1 && text[i-1] == ' ' {
				dst = append(dst, clip(prev+word.digits))
			}
			prev, prevEnd, i = word.letters, j, j
		default:
			i += n
		}
	}
	return dst
}

// isFlagStart reports dashes followed by a word: -v, --only-matching.
func isFlagStart(s string) bool {
	if len(s) > 1 && s[1] == '-' {
		return len(s) > 2 && isWordStart(s[2:])
	}
	return len(s) > 1 && isWordStart(s[1:])
}

func isWordStart(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return isWordRune(r)
}

// wordEnd returns the end of the word starting at i: word runes joined by
// single connectors, with leading dashes. A connector must be followed by a
// word rune, so a full stop ends a word.
func wordEnd(text string, i int) int {
	for i < len(text) && text[i] == '-' {
		i++
	}
	for i < len(text) {
		r, n := utf8.DecodeRuneInString(text[i:])
		if isWordRune(r) {
			i += n
			continue
		}
		if isConnector(r) && i+n < len(text) && isWordStart(text[i+n:]) {
			i += n
			continue
		}
		break
	}
	return i
}

// wordInfo says what a word can contribute to a pair with its neighbour.
type wordInfo struct {
	letters string // folded, when the word is one run of letters
	digits  string // when the word is one run of digits
}

// appendWord appends the terms of one word (see AppendTokens).
func appendWord(dst []string, raw string) ([]string, wordInfo) {
	// Fast path for most of prose: lower-case ASCII letters, or digits.
	switch asciiClass(raw) {
	case 'a':
		if stopWords[raw] {
			return dst, wordInfo{}
		}
		return append(dst, clip(stem(raw))), wordInfo{letters: raw}
	case '0':
		return append(dst, clip(raw)), wordInfo{digits: raw}
	}
	start := len(dst)
	add := func(t string) {
		if t == "" {
			return
		}
		t = clip(t)
		if !slices.Contains(dst[start:], t) {
			dst = append(dst, t)
		}
	}
	bare := strings.TrimLeft(raw, "-")
	whole := fold(raw)
	parts := splitParts(bare)
	var info wordInfo
	if len(parts) == 1 && parts[0] == bare {
		// A plain word: one term unless it is a stop word.
		stop := stopWords[whole]
		if isAllDigits(bare) {
			info.digits = fold(bare)
		} else if isAllLetters(bare) && !stop {
			info.letters = whole
		}
		switch {
		case stop:
		case bare != raw: // a flag: -v, --verbose
			add(whole)
		default:
			add(stem(whole))
		}
		if bare != raw {
			addPart(add, fold(bare))
		}
		return dst, info
	}
	add(whole)
	if bare != raw {
		add(fold(bare))
	}
	add(fold(strings.Join(parts, "")))
	if len(parts) > maxParts {
		parts = parts[:maxParts] // a longer run is data, not a name
	}
	for _, p := range parts {
		if f := fold(p); !stopWords[f] {
			addPart(add, f)
		}
	}
	return dst, info
}

// addPart adds a folded part of an identifier as it is and its stem, so
// both the identifier and the plain word find it.
func addPart(add func(string), part string) {
	add(part)
	add(stem(part))
}

// stem is the English Snowball (Porter2) stem of a folded word of ASCII
// letters; any other word (digits, accents, other scripts, where English
// suffix rules do not fit) is kept as it is.
func stem(w string) string {
	if len(w) <= 2 {
		return w
	}
	for i := 0; i < len(w); i++ {
		if c := w[i]; c < 'a' || c > 'z' {
			return w
		}
	}
	if s, ok := stems.Load(w); ok {
		return s.(string)
	}
	s := strings.Clone(english.Stem(w, true))
	if stemsHeld.Load() < maxStems {
		// Cloned: w may be a slice of a whole document.
		if _, had := stems.LoadOrStore(strings.Clone(w), s); !had {
			stemsHeld.Add(1)
		}
	}
	return s
}

// stems caches the stems of the words seen, up to maxStems of them: the
// stemmer allocates and costs about 3 µs a word, and prose repeats a few
// thousand words (without the cache, stemming tripled the CPU time of
// building a keyword segment).
var (
	stems     sync.Map // word → stem
	stemsHeld atomic.Int64
)

// maxStems bounds the cache at a few MB; words past it are stemmed each
// time.
const maxStems = 1 << 17

// asciiClass returns 'a' for a word of lower-case ASCII letters only, '0'
// for ASCII digits only, and 0 otherwise.
func asciiClass(w string) byte {
	var class byte
	for i := 0; i < len(w); i++ {
		c := w[i]
		var k byte
		switch {
		case 'a' <= c && c <= 'z':
			k = 'a'
		case '0' <= c && c <= '9':
			k = '0'
		default:
			return 0
		}
		if class != 0 && k != class {
			return 0
		}
		class = k
	}
	return class
}

// splitParts cuts an identifier at connectors, lower-to-upper case changes
// (camelCase, HTTPServer) and letter/digit changes (rfc7807).
func splitParts(s string) []string {
	var parts []string
	begin := 0
	var prev, prevPrev rune
	for i, r := range s {
		if isConnector(r) {
			if i > begin {
				parts = append(parts, s[begin:i])
			}
			begin = i + utf8.RuneLen(r)
			prev, prevPrev = 0, 0
			continue
		}
		if i > begin && prev != 0 && !unicode.Is(unicode.Mn, r) {
			// HTTPServer: cut before the last upper of a run followed by lower.
			acronymEnd := unicode.IsUpper(prevPrev) && unicode.IsUpper(prev) && unicode.IsLower(r)
			if unicode.IsLower(prev) && unicode.IsUpper(r) || unicode.IsDigit(prev) != unicode.IsDigit(r) || acronymEnd {
				at := i
				if acronymEnd {
					at = i - utf8.RuneLen(prev)
				}
				if at > begin {
					parts = append(parts, s[begin:at])
					begin = at
				}
			}
		}
		if !unicode.Is(unicode.Mn, r) {
			prevPrev, prev = prev, r
		}
	}
	if begin < len(s) {
		parts = append(parts, s[begin:])
	}
	return parts
}

func isAllDigits(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsDigit(r) })
}

func isAllLetters(s string) bool {
	return s != "" && !strings.ContainsFunc(s, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) })
}

// fold lower-cases and strips accents: compatibility decomposition (which
// also maps full-width letters and ligatures), marks removed, recomposed.
func fold(s string) string {
	ascii := true
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			ascii = false
			break
		}
	}
	if ascii {
		return strings.ToLower(s)
	}
	d := norm.NFKD.String(s)
	var b strings.Builder
	b.Grow(len(d))
	for _, r := range d {
		switch {
		case unicode.Is(unicode.Mn, r):
		case r == 'ß' || r == 'ẞ':
			b.WriteString("ss")
		default:
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return norm.NFC.String(b.String())
}

// clip cuts a term to MaxTokenBytes at a rune boundary.
func clip(t string) string {
	if len(t) <= MaxTokenBytes {
		return t
	}
	cut := MaxTokenBytes
	for cut > 0 && !utf8.RuneStart(t[cut]) {
		cut--
	}
	return t[:cut]
}

// appendBigrams appends overlapping pairs of characters; a lone character
// stands for itself.
func appendBigrams(dst []string, run string) []string {
	first, n := utf8.DecodeRuneInString(run)
	if n == len(run) {
		if first != utf8.RuneError {
			return append(dst, run)
		}
		return dst
	}
	for i := 0; i < len(run); {
		_, n1 := utf8.DecodeRuneInString(run[i:])
		if i+n1 >= len(run) {
			break
		}
		_, n2 := utf8.DecodeRuneInString(run[i+n1:])
		dst = append(dst, run[i:i+n1+n2])
		i += n1
	}
	return dst
}

// stopWords are left out of the index and of queries: they are in nearly
// every chunk, so they rank nothing and cost the most postings. A query of
// stop words only has no keyword terms and gets no keyword hits. The list
// is English only: the function words of other languages (der, und, の,
// 的) stay in the index, where BM25's idf ranks them down, so no word of a
// German or Chinese text is lost except one spelt like an English stop
// word (German in, an, was).
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a an and are as at be been but by can could did do does
		for from had has have he her his how i if in into is it its me my no not of on or our
		she so than that the their them then there these they this those to too us was we were
		what when where which who whom why will with would you your`) {
		m[w] = true
	}
	return m
}()
