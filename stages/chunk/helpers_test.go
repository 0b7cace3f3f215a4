package chunk

import (
	"fmt"
	"strings"
	"testing"
	"unicode"
)

// pieceCounter is a small deterministic stand-in for WordPiece, used where
// tests need to reason about counts by hand: a run of letters or digits is
// one piece per 4 code points, or a single [UNK] when longer than longWord
// (as WordPiece does past max_input_chars_per_word, which makes counts
// non-monotone in the prefix); every other non-space code point (punctuation,
// CJK, emoji) is one piece.
type pieceCounter struct{ longWord int }

func (pc pieceCounter) Count(text string) int {
	long := pc.longWord
	if long == 0 {
		long = 100
	}
	n, run := 0, 0
	flush := func() {
		switch {
		case run > long:
			n++
		case run > 0:
			n += (run + 3) / 4
		}
		run = 0
	}
	for _, r := range text {
		switch {
		case isSpace(r):
			flush()
		case (unicode.IsLetter(r) || unicode.IsDigit(r)) && !isCJK(r):
			run++
		default:
			flush()
			n++
		}
	}
	flush()
	return n
}

// checkChunks asserts every invariant Split promises and returns a
// description of the first violation ("" if none), so tests and the fuzz
// target share one definition.
func checkChunks(text string, cfg Config, tc TokenCounter, chunks []Chunk) string {
	runes := []rune(text)
	if cfg.Size < 1 {
		cfg.Size = Default.Size
	}
	cfg.Size = min(cfg.Size, 1<<30)
	overlap := max(0, min(cfg.Overlap, cfg.Size-1))
	limit := 0
	if cfg.MaxTokens > 0 {
		limit = max(1, cfg.MaxTokens-2)
	}
	covered := make([]int, len(runes)+1) // difference array
	line := 1
	lineAt := 0
	for i, c := range chunks {
		if c.Index != i {
			return fmt.Sprintf("chunk %d: Index %d", i, c.Index)
		}
		if c.CharStart < 0 || c.CharStart >= c.CharEnd || c.CharEnd > len(runes) {
			return fmt.Sprintf("chunk %d: bad range [%d,%d) of %d", i, c.CharStart, c.CharEnd, len(runes))
		}
		if c.Text != string(runes[c.CharStart:c.CharEnd]) {
			return fmt.Sprintf("chunk %d: Text %q != runes[%d:%d]", i, c.Text, c.CharStart, c.CharEnd)
		}
		if isSpace(runes[c.CharStart]) || isSpace(runes[c.CharEnd-1]) {
			return fmt.Sprintf("chunk %d: starts or ends with space: %q", i, c.Text)
		}
		if n := c.CharEnd - c.CharStart; n > cfg.Size {
			return fmt.Sprintf("chunk %d: %d code points > Size %d", i, n, cfg.Size)
		}
		if i > 0 {
			p := chunks[i-1]
			if c.CharStart <= p.CharStart || c.CharEnd <= p.CharEnd {
				return fmt.Sprintf("chunk %d [%d,%d) makes no progress after [%d,%d)", i, c.CharStart, c.CharEnd, p.CharStart, p.CharEnd)
			}
			if ov := p.CharEnd - c.CharStart; ov > overlap {
				return fmt.Sprintf("chunk %d overlaps by %d > %d", i, ov, overlap)
			}
		}
		if limit > 0 && c.CharEnd-c.CharStart > 1 {
			if n := tc.Count(c.Text); n > limit {
				return fmt.Sprintf("chunk %d: %d tokens > %d: %q", i, n, limit, c.Text)
			}
		}
		for ; lineAt < c.CharStart; lineAt++ {
			if runes[lineAt] == '\n' {
				line++
			}
		}
		if c.LineStart != line {
			return fmt.Sprintf("chunk %d: LineStart %d, want %d", i, c.LineStart, line)
		}
		if want := line + strings.Count(c.Text, "\n"); c.LineEnd != want {
			return fmt.Sprintf("chunk %d: LineEnd %d, want %d", i, c.LineEnd, want)
		}
		covered[c.CharStart]++
		covered[c.CharEnd]--
	}
	depth := 0
	for i, r := range runes {
		depth += covered[i]
		if depth == 0 && !isSpace(r) {
			return fmt.Sprintf("code point %d (%q) is in no chunk", i, r)
		}
	}
	return ""
}

// mustCheck fails t on any invariant violation.
func mustCheck(t testing.TB, text string, cfg Config, tc TokenCounter, chunks []Chunk) {
	t.Helper()
	if msg := checkChunks(text, cfg, tc, chunks); msg != "" {
		t.Fatal(msg)
	}
}
