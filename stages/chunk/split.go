package chunk

import (
	"context"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"
)

// PrefixFitter is an optional speed-up a TokenCounter may offer: FitPrefix
// returns the byte length of the longest prefix of text that ends at a
// pre-token boundary and holds at most maxPieces tokens (0 if none does).
// Split still checks every chunk with Count, so an inexact answer only costs
// time.
type PrefixFitter interface {
	FitPrefix(text string, maxPieces int) int
}

// Cut-point search, as a percentage of the window: a paragraph break is taken
// anywhere in the last half of the window, other boundaries only in the last
// 40%. A paragraph break at mid-window beats a sentence end near its edge
// (paragraph first is the promised order: docs/decisions.md), while sentence
// and word cuts keep chunks close to the target size.
const (
	paraMinPercent = 50
	cutMinPercent  = 60
	// Hard cuts step back at most this far to keep a character whole.
	maxClusterBackoff = 16
	// Keeps Overlap*Size products far from overflow.
	maxSize = 1 << 30
)

// Cut levels, best last.
const (
	levelWord = iota
	levelLine
	levelSentence
	numLevels
)

// Split cuts normalised document text into overlapping chunks. It is
// deterministic, and its chunks:
//   - are non-empty, start and end on a non-space code point, and satisfy
//     Text == string([]rune(text)[CharStart:CharEnd]);
//   - are ordered, each starting and ending strictly after the previous one;
//   - together cover every non-space code point of text (whitespace-only or
//     empty text gives no chunks);
//   - are at most cfg.Size code points long and overlap the previous chunk by
//     at most cfg.Overlap code points;
//   - hold at most cfg.MaxTokens-2 tokens by tc (room for [CLS] and [SEP]),
//     unless a single code point alone is over that budget.
//
// A chunk ends, in order of preference, at a paragraph break (a blank line)
// in the last half of the window, else at a sentence end, a line break or a
// word boundary in the last 40%, else with a hard cut at the window's edge.
// The next chunk starts cfg.Overlap code points before the previous end,
// snapped forward to a sentence or line start in the first half of that
// overlap, else to the next word start; after a chunk shortened to fit the
// token budget the overlap shrinks in proportion, so progress stays steady.
//
// pageStarts are code-point offsets where pages begin (nil without pages).
// cfg.Size < 1 means Default.Size, and Size is capped at 1<<30; Overlap is clamped to [0, Size-1];
// MaxTokens <= 0 disables the token budget. tc may not be nil unless the
// budget is disabled. If tc implements PrefixFitter, Split uses it to find
// the token window faster.
func Split(text string, pageStarts []int, cfg Config, tc TokenCounter) []Chunk {
	out, _, _ := SplitLimit(context.Background(), text, pageStarts, cfg, tc, 0)
	return out
}

// SplitLimit is Split that stops after maxChunks chunks (0 = no limit),
// reporting truncated, and gives up with ctx's cause once ctx ends: one huge
// document must neither hold a cancelled reindex nor fill memory.
func SplitLimit(ctx context.Context, text string, pageStarts []int, cfg Config, tc TokenCounter, maxChunks int) (out []Chunk, truncated bool, err error) {
	if cfg.Size < 1 {
		cfg.Size = Default.Size
	}
	cfg.Size = min(cfg.Size, maxSize)
	cfg.Overlap = max(0, min(cfg.Overlap, cfg.Size-1))
	sp := splitter{text: text, cfg: cfg, tc: tc}
	if cfg.MaxTokens > 0 {
		sp.limit = max(1, cfg.MaxTokens-2)
		sp.fitter, _ = tc.(PrefixFitter)
	}
	// A window holds at most Size+1 code points, and never more than text has
	// bytes (a huge Size must not allocate a huge buffer).
	n := min(cfg.Size, len(text)) + 1
	sp.buf = make([]rune, 0, n)
	sp.off = make([]int, 0, n+1)
	sp.ctx, sp.max = ctx, maxChunks
	return sp.run(pageStarts)
}

// splitter holds one Split call's state. The current chunk's window is
// decoded into buf (code points from the chunk start) and off (their byte
// offsets in text, plus one past the end), so memory stays O(Size) whatever
// the document length.
type splitter struct {
	text   string
	cfg    Config
	tc     TokenCounter
	fitter PrefixFitter
	limit  int // token budget per chunk; 0 means none
	ctx    context.Context
	max    int // chunks at most; 0 means no limit

	buf []rune
	off []int
	eot bool // buf reaches the end of text
}

func (sp *splitter) run(pageStarts []int) ([]Chunk, bool, error) {
	text := sp.text
	sr, sb := skipSpace(text, 0, 0) // chunk start: code-point and byte offset
	if sb == len(text) {
		return nil, false, nil
	}
	qr, qb := sr, sb // first non-space code point not yet in a chunk
	lineAt, line := 0, 1
	var out []Chunk
	for {
		sp.load(sb)
		end, shrunk, ok := sp.cut(qr - sr + 1)
		if !ok {
			// The overlap left no room to reach new text within the window
			// or the token budget: start at the new text instead.
			sr, sb = qr, qb
			continue
		}
		eb := sp.off[end]
		line += strings.Count(text[lineAt:sb], "\n")
		lineAt = sb
		c := Chunk{
			Index:     len(out),
			Text:      text[sb:eb],
			CharStart: sr,
			CharEnd:   sr + end,
			Page:      pageOf(pageStarts, sr),
			LineStart: line,
		}
		c.LineEnd = line + strings.Count(c.Text, "\n")
		out = append(out, c)

		qr, qb = skipSpace(text, sr+end, eb)
		if qb == len(text) {
			return out, false, nil
		}
		if len(out) == sp.max {
			return out, true, nil
		}
		if len(out)%256 == 0 && sp.ctx.Err() != nil {
			return nil, false, context.Cause(sp.ctx)
		}
		if ns := sp.nextStart(end, shrunk); ns < end {
			sr, sb = sr+ns, sp.off[ns]
		} else {
			sr, sb = qr, qb
		}
	}
}

// skipSpace returns the code-point and byte offsets of the first non-space
// at or after (r, b), or the end of text.
func skipSpace(text string, r, b int) (int, int) {
	for b < len(text) {
		c, n := rune(text[b]), 1
		if c >= utf8.RuneSelf {
			c, n = utf8.DecodeRuneInString(text[b:])
		}
		if !isSpace(c) {
			break
		}
		r++
		b += n
	}
	return r, b
}

// pageOf is the 1-based page holding code point r, or 0 without pages.
func pageOf(pageStarts []int, r int) int {
	if pageStarts == nil {
		return 0
	}
	p := sort.Search(len(pageStarts), func(i int) bool { return pageStarts[i] > r })
	return max(p, 1)
}

// load decodes up to Size+1 code points starting at byte b: one past the
// window, so the cut search can see what follows a candidate end.
func (sp *splitter) load(b int) {
	text := sp.text
	sp.buf, sp.off = sp.buf[:0], sp.off[:0]
	for b < len(text) && len(sp.buf) <= sp.cfg.Size {
		c, n := rune(text[b]), 1
		if c >= utf8.RuneSelf {
			c, n = utf8.DecodeRuneInString(text[b:])
		}
		sp.buf = append(sp.buf, c)
		sp.off = append(sp.off, b)
		b += n
	}
	sp.off = append(sp.off, b)
	sp.eot = b == len(text)
}

// cut picks the end (exclusive, in buf) of the chunk starting at buf[0]. The
// chunk must reach at least minEnd so that it covers new text. It reports
// whether the token budget shortened the chunk, and false if no chunk
// reaching minEnd fits.
func (sp *splitter) cut(minEnd int) (end int, shrunk, ok bool) {
	w := min(sp.cfg.Size, len(sp.buf))
	if w < minEnd {
		return 0, false, false
	}
	if sp.eot && len(sp.buf) <= sp.cfg.Size {
		end = sp.trimEnd(len(sp.buf))
	} else {
		end = sp.best(w, minEnd)
	}
	if sp.limit == 0 {
		return end, false, true
	}
	for {
		n := sp.tc.Count(sp.text[sp.off[0]:sp.off[end]])
		if n <= sp.limit {
			break
		}
		shrunk = true
		if end <= minEnd {
			if minEnd > 1 {
				return 0, true, false
			}
			break // one code point over budget: nothing smaller exists
		}
		w = sp.fit(end, n)
		if w < minEnd {
			return 0, true, false
		}
		end = sp.best(w, minEnd) // <= w < end: the loop ends
	}
	return end, shrunk, true
}

// fit returns the largest window w < end whose prefix fits the token budget,
// given that the prefix of length end holds total > limit tokens. It
// assumes counts grow with the prefix (cut verifies the result).
func (sp *splitter) fit(end, total int) int {
	base := sp.off[0]
	if sp.fitter != nil {
		n := sp.fitter.FitPrefix(sp.text[base:sp.off[end]], sp.limit)
		// off is increasing: find the code point that ends at byte base+n.
		w := sort.SearchInts(sp.off[:end+1], base+n)
		if w > end || sp.off[w] != base+n {
			w-- // not on a code-point boundary: round down
		}
		if w >= 1 {
			return min(w, end-1)
		}
	}
	fits := func(w int) bool { return sp.tc.Count(sp.text[base:sp.off[w]]) <= sp.limit }
	// Tokens grow about in proportion to length: gallop from that estimate,
	// then bisect, so most searches cost a few Counts rather than log2(end).
	lo, hi := 1, end-1 // prefix lo fits (assumed for 1), hi+1 does not
	if est := end * sp.limit / total; est > lo && est < hi {
		step := max(4, est/32)
		if fits(est) {
			lo = est
			for lo+step <= hi && fits(lo+step) {
				lo += step
				step *= 2
			}
			hi = min(hi, lo+step-1)
		} else {
			hi = est - 1
			for hi-step > lo && !fits(hi-step) {
				hi -= step + 1
				step *= 2
			}
			lo = max(lo, hi-step)
		}
	}
	for lo < hi {
		mid := (lo + hi + 1) / 2
		if fits(mid) {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return lo
}

// best picks the cut point in the window buf[:w] (w < len(buf)) by boundary
// preference, never before minEnd, and returns it with trailing space
// trimmed.
func (sp *splitter) best(w, minEnd int) int {
	buf := sp.buf
	loPara := max(minEnd, w*paraMinPercent/100, 1)
	loCut := max(minEnd, w*cutMinPercent/100, 1)
	var found [numLevels]int
	for i := range found {
		found[i] = -1
	}
	// nl counts (up to 2) the newlines in the space run starting at c.
	nl := sp.newlinesFrom(w)
	for c := w; c >= loPara; c-- {
		prev, cur := buf[c-1], buf[c]
		if !isSpace(prev) {
			if isSpace(cur) {
				if nl >= 2 {
					return c // the latest paragraph break: best there is
				}
				if c >= loCut {
					switch {
					case found[levelSentence] < 0 && sp.sentenceEnd(c):
						found[levelSentence] = c
					case found[levelLine] < 0 && nl == 1:
						found[levelLine] = c
					case found[levelWord] < 0:
						found[levelWord] = c
					}
				}
			} else if c >= loCut && cjkBoundary(prev, cur) {
				if found[levelSentence] < 0 && sp.cjkSentenceEnd(c) {
					found[levelSentence] = c
				} else if found[levelWord] < 0 {
					found[levelWord] = c
				}
			}
		}
		if isSpace(prev) {
			if prev == '\n' && nl < 2 {
				nl++
			}
		} else {
			nl = 0
		}
	}
	for l := numLevels - 1; l >= 0; l-- {
		if found[l] >= 0 {
			return found[l]
		}
	}
	return sp.trimEnd(sp.hardCut(w, loCut))
}

// newlinesFrom counts newlines (up to 2) in the space run starting at buf[w],
// reading on past buf when the run goes on.
func (sp *splitter) newlinesFrom(w int) int {
	nl := 0
	for _, r := range sp.buf[w:] {
		if !isSpace(r) {
			return nl
		}
		if r == '\n' {
			if nl++; nl == 2 {
				return nl
			}
		}
	}
	text := sp.text
	for b := sp.off[len(sp.buf)]; b < len(text); {
		r, n := utf8.DecodeRuneInString(text[b:])
		if !isSpace(r) {
			break
		}
		if r == '\n' {
			if nl++; nl == 2 {
				break
			}
		}
		b += n
	}
	return nl
}

// hardCut cuts at w, stepping back a little (not below lo) so as not to
// split a character from its combining marks or joiners.
func (sp *splitter) hardCut(w, lo int) int {
	for c := w; c > lo && c > w-maxClusterBackoff; c-- {
		if clusterBreak(sp.buf[c-1], sp.buf[c]) {
			return c
		}
	}
	return w
}

// trimEnd moves end back over trailing space; buf[0] is never space.
func (sp *splitter) trimEnd(end int) int {
	for end > 1 && isSpace(sp.buf[end-1]) {
		end--
	}
	return end
}

// sentenceEnd reports whether buf[:c] ends a sentence, given that buf[c] is
// space: a terminator, maybe followed by closing quotes or brackets, that is
// not the period of an abbreviation and not followed by a lower-case word.
func (sp *splitter) sentenceEnd(c int) bool {
	buf := sp.buf
	j := c - 1
	for k := 0; k < 3 && j > 0 && isCloser(buf[j]); k++ {
		j--
	}
	switch buf[j] {
	case '!', '?':
	case '.':
		k := j
		for k > 0 && j-k < 12 && !isSpace(buf[k-1]) {
			k--
		}
		if isAbbreviation(buf[k:j]) {
			return false
		}
	default:
		return isCJKTerminator(buf[j])
	}
	return !sp.lowerNext(c)
}

// cjkSentenceEnd reports whether buf[:c] ends with a CJK full stop (which
// needs no following space), maybe followed by closing brackets.
func (sp *splitter) cjkSentenceEnd(c int) bool {
	j := c - 1
	for k := 0; k < 3 && j > 0 && isCloser(sp.buf[j]); k++ {
		j--
	}
	return isCJKTerminator(sp.buf[j])
}

// lowerNext reports whether the first non-space after buf[c] (looking a few
// code points ahead) is a lower-case letter: "e.g. this" goes on.
func (sp *splitter) lowerNext(c int) bool {
	for i := c; i < len(sp.buf) && i < c+8; i++ {
		if r := sp.buf[i]; !isSpace(r) {
			return unicode.IsLower(r)
		}
	}
	return false
}

// nextStart returns where, in buf, the chunk after buf[:end] starts: the
// overlap back from end, snapped forward to a sentence or line start in the
// first half of the overlap, else to the first word start. end means no
// overlap (start at the next non-space instead).
func (sp *splitter) nextStart(end int, shrunk bool) int {
	ov := sp.cfg.Overlap
	if shrunk {
		ov = ov * end / sp.cfg.Size
	}
	ov = min(ov, end-1)
	if ov <= 0 {
		return end
	}
	buf := sp.buf
	p := end - ov
	// Best: a sentence or line start in the first half of the overlap, so
	// the chunk begins cleanly and still overlaps by at least ov/2.
	for i := p; i <= p+ov/2; i++ {
		cur, prev := buf[i], buf[i-1]
		switch {
		case isSpace(cur):
		case isSpace(prev):
			c := i - 1
			for isSpace(buf[c-1]) { // buf[0] is not space
				c--
			}
			if sp.sentenceEnd(c) || slices.Contains(buf[c:i], '\n') {
				return i
			}
		case cjkBoundary(prev, cur) && sp.cjkSentenceEnd(i):
			return i
		}
	}
	for i := p; i < end; i++ {
		if cur, prev := buf[i], buf[i-1]; !isSpace(cur) && (isSpace(prev) || cjkBoundary(prev, cur)) {
			return i
		}
	}
	// No word starts in the overlap. If the chunk was cut inside a long word
	// (a hash, base64), overlap within it, whole characters only; otherwise
	// its last word ended properly and the next chunk starts after it.
	if isSpace(buf[end]) || cjkBoundary(buf[end-1], buf[end]) {
		return end
	}
	for i := p; i < end; i++ {
		if cur, prev := buf[i], buf[i-1]; !isSpace(cur) && clusterBreak(prev, cur) {
			return i
		}
	}
	return end
}
