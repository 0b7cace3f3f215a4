package extract

import "io"

// maxTextRun is the longest text run splitText lets through in one piece.
const maxTextRun = 256 << 10

// splitText writes an empty CDATA section into every text run of the XML
// in r each maxTextRun bytes, and splits a CDATA section as long in two. encoding/xml buffers a whole run as one
// token, growing its buffer by doubling: a 40 MB cell held 64 MB in the
// decoder beside the cell's own copy. Split, the decoder holds a piece and
// the reader sees the run as consecutive CharData tokens. A split falls
// at the end of a character outside an entity reference, not after a CR or
// ']', so no character, reference, line end or "]]>" is cut; a DOCTYPE
// stops splitting (its internal subset is not tracked).
func splitText(r io.Reader) io.Reader { return &textSplitter{r: r} }

type splitState int

const (
	inText      splitState = iota
	afterLT                // the byte after '<'
	afterBang              // the byte after "<!"
	inTag                  // a start or end tag, quote the open quote
	inPI                   // <? … ?>
	inComment              // <!-- … -->
	inCDATA                // <![CDATA[ … ]]>
	passThrough            // after a DOCTYPE
)

type textSplitter struct {
	r      io.Reader
	err    error
	in     [32 << 10]byte
	buf    []byte // scanned bytes with the splits, not yet read
	out    []byte // the unread part of buf
	state  splitState
	quote  byte
	entity bool
	cont   int     // continuation bytes still to come of a UTF-8 character
	run    int     // bytes of the text run since the last split
	last   [2]byte // the two bytes before, for the ends of comments, PIs, CDATA
}

var (
	emptyCDATA = []byte("<![CDATA[]]>")
	cdataSplit = []byte("]]><![CDATA[")
)

// splits counts b into the run and reports whether the run is due a split
// after it: b ends a character and is not a CR or ']'.
func (s *textSplitter) splits(b byte) bool {
	switch {
	case b >= 0xF0:
		s.cont = 3
	case b >= 0xE0:
		s.cont = 2
	case b >= 0xC0:
		s.cont = 1
	case b >= 0x80:
		s.cont = max(s.cont-1, 0)
	}
	s.run++
	return s.run >= maxTextRun && s.cont == 0 && b != '\r' && b != ']'
}

func (s *textSplitter) Read(p []byte) (int, error) {
	for len(s.out) == 0 {
		if s.err != nil {
			return 0, s.err
		}
		var n int
		n, s.err = s.r.Read(s.in[:])
		s.buf = s.scan(s.in[:n], s.buf[:0])
		s.out = s.buf
	}
	n := copy(p, s.out)
	s.out = s.out[n:]
	return n, nil
}

// scan appends in to out with the splits, moving the state past in.
func (s *textSplitter) scan(in, out []byte) []byte {
	if s.state == passThrough {
		return append(out, in...)
	}
	for _, b := range in {
		out = append(out, b)
		switch s.state {
		case inText:
			switch {
			case b == '<':
				s.state, s.run, s.entity = afterLT, 0, false
			case b == '&':
				s.entity = true
			case b == ';':
				s.entity = false
			}
			if s.state == inText && s.splits(b) && !s.entity {
				out = append(out, emptyCDATA...)
				s.run = 0
			}
		case afterLT:
			switch b {
			case '!':
				s.state = afterBang
			case '?':
				s.state = inPI
			default:
				s.state, s.quote = inTag, 0
			}
		case afterBang:
			switch b {
			case '-':
				s.state = inComment
			case '[':
				s.state = inCDATA
			default:
				s.state = passThrough
			}
		case inTag:
			switch {
			case s.quote != 0:
				if b == s.quote {
					s.quote = 0
				}
			case b == '"' || b == '\'':
				s.quote = b
			case b == '>':
				s.state = inText
			}
		case inPI:
			if b == '>' && s.last[1] == '?' {
				s.state = inText
			}
		case inComment:
			if b == '>' && s.last == [2]byte{'-', '-'} {
				s.state = inText
			}
		case inCDATA:
			if b == '>' && s.last == [2]byte{']', ']'} {
				s.state, s.run = inText, 0
			} else if s.splits(b) {
				out = append(out, cdataSplit...)
				s.run = 0
			}
		case passThrough:
		}
		s.last = [2]byte{s.last[1], b}
	}
	return out
}
