package extract

import (
	"fmt"
	"io"
	"strings"
	"unicode"
	"unicode/utf8"
)

// charBudget counts the characters a reader builds, as it builds them, so
// that a file whose references (an XLSX shared string used by every cell)
// or repeats (ODS number-columns-repeated) expand past Limits.MaxChars
// fails before the expansion is allocated. A nil budget is unlimited.
type charBudget struct{ left, limit int }

func newCharBudget(lim Limits) *charBudget {
	if lim.MaxChars <= 0 {
		return nil
	}
	return &charBudget{left: lim.MaxChars, limit: lim.MaxChars}
}

// take counts n more characters and reports whether they fit.
func (b *charBudget) take(n int) bool {
	if b == nil {
		return true
	}
	if n > b.left {
		b.left = -1
		return false
	}
	b.left -= n
	return true
}

// takeString counts the characters of s, times copies.
func (b *charBudget) takeString(s string, copies int) bool {
	if b == nil {
		return true
	}
	n := utf8.RuneCountInString(s)
	if copies > 1 && n > 0 && copies > b.left/n {
		return b.take(b.left + 1)
	}
	return b.take(n * max(copies, 1))
}

// err is a *textCapError once the budget is spent.
func (b *charBudget) err() error {
	if b != nil && b.left < 0 {
		return &textCapError{limit: b.limit}
	}
	return nil
}

// reader stops r with err once the budget is spent, so a parser stops at
// its next read instead of decoding the rest of the part.
func (b *charBudget) reader(r io.Reader) io.Reader {
	if b == nil {
		return r
	}
	return budgetReader{r, b}
}

type budgetReader struct {
	r io.Reader
	b *charBudget
}

func (r budgetReader) Read(p []byte) (int, error) {
	if err := r.b.err(); err != nil {
		return 0, err
	}
	return r.r.Read(p)
}

// textCapError is a file whose text passes Limits.MaxChars.
type textCapError struct{ limit int }

func (e *textCapError) Error() string {
	return fmt.Sprintf("extracted text exceeds %d characters", e.limit)
}

// collapseSpace is strings.Join(strings.Fields(s), " ") without the slice
// of fields, which for a 40 MB cell is 7 million string headers; s itself
// when it is already collapsed.
func collapseSpace(s string) string {
	clean := true
	prevSpace := true
	for i, r := range s {
		space := unicode.IsSpace(r)
		if space && (prevSpace || r != ' ' || i == len(s)-1) {
			clean = false
			break
		}
		prevSpace = space
	}
	if clean {
		return s
	}
	var b strings.Builder
	b.Grow(len(s))
	pending := false
	for _, r := range s {
		if unicode.IsSpace(r) {
			pending = b.Len() > 0
			continue
		}
		if pending {
			b.WriteByte(' ')
			pending = false
		}
		b.WriteRune(r)
	}
	return b.String()
}

// spaceWriter is collapseSpace streamed: it writes text to b in pieces with
// each run of white space as one space and none at either end, pending
// carrying a run across pieces.
type spaceWriter struct {
	b       *strings.Builder
	pending bool
}

// write appends without Grow: append grows a large buffer by a quarter,
// where Grow would double it.
func (w *spaceWriter) write(p []byte) {
	start := -1 // the first byte of the words not yet written
	for i := 0; i < len(p); {
		r, n := rune(p[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRune(p[i:])
		}
		if unicode.IsSpace(r) {
			if start >= 0 {
				w.b.Write(p[start:i])
				start = -1
			}
			w.pending = w.b.Len() > 0
		} else if start < 0 {
			if w.pending {
				w.b.WriteByte(' ')
				w.pending = false
			}
			start = i
		}
		i += n
	}
	if start >= 0 {
		w.b.Write(p[start:])
	}
}
