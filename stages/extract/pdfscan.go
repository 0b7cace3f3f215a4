package extract

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"context"
	"encoding/ascii85"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// checkPDFStreams decodes, before PDFium sees the file, every stream that
// PDFium could decode while reading text, counting the output against
// budget and keeping none of it. A few MB of zlib can inflate to gigabytes
// inside PDFium; this turns such a file away in a second with a plain
// reason. It reads the raw bytes, so it does not see into encrypted
// streams: the memory limit of PDFium's instance is the bound there.
// Images and attachments are left out: text extraction does not decode
// them, and scanned pages legitimately inflate to gigabytes.
func checkPDFStreams(ctx context.Context, data []byte, budget int64) error {
	var sc streamScan
	c := &decodeCounter{left: budget}
	buf := make([]byte, 32<<10)
	for pos := 0; ; {
		start, end, dict, ok := nextStream(data, pos)
		if !ok {
			return nil
		}
		pos = end
		if err := ctx.Err(); err != nil {
			return err
		}
		r := sc.decoder(data[start:end], dict)
		if r == nil {
			continue
		}
		// A decoding error ends this stream's count: PDFium stops there
		// too, or reads less.
		if _, err := io.CopyBuffer(c, r, buf); errors.Is(err, errDecodeBudget) {
			return &FileError{Reason: fmt.Sprintf("decoded streams exceed %s", bytesize.Format(budget))}
		}
	}
}

// streamScan holds what checkPDFStreams reuses from stream to stream.
type streamScan struct {
	z     io.ReadCloser // zlib state is tens of KB; files hold thousands of streams
	zUsed bool          // z is in the chain being built
}

var errDecodeBudget = errors.New("decode budget spent")

// decodeCounter is an io.Writer that only counts, up to a budget.
type decodeCounter struct{ left int64 }

func (c *decodeCounter) Write(p []byte) (int, error) {
	c.left -= int64(len(p))
	if c.left < 0 {
		return 0, errDecodeBudget
	}
	return len(p), nil
}

// nextStream finds the first stream whose keyword is at or after pos: its
// data is data[start:end] and dict its parsed dictionary (nil when it
// cannot be parsed). Its dictionary is looked for after pos only, so that
// a file is read about once however many streams it holds.
func nextStream(data []byte, pos int) (start, end int, dict map[string]pdfValue, ok bool) {
	from := pos
	for {
		i := bytes.Index(data[pos:], []byte("stream"))
		if i < 0 {
			return 0, 0, nil, false
		}
		kw := pos + i
		pos = kw + len("stream")
		if kw >= 3 && string(data[kw-3:kw]) == "end" {
			continue
		}
		// The keyword ends its line; PDFium also takes a lone CR.
		start = pos
		if start < len(data) && data[start] == '\r' {
			start++
		}
		if start < len(data) && data[start] == '\n' {
			start++
		}
		if start == pos {
			continue
		}
		dict = streamDict(data[from:kw])
		end = start + bytes.Index(data[start:], []byte("endstream"))
		if end < start {
			end = len(data)
		}
		// Like PDFium, trust /Length only where "endstream" follows it.
		if n, ok := dict["Length"].(pdfInt); ok && n >= 0 && int64(n) <= int64(end-start) {
			after := bytes.TrimLeft(data[start+int(n):end], " \t\r\n\f\x00")
			if len(after) == 0 {
				end = start + int(n)
			}
		}
		return start, end, dict, true
	}
}

// streamDict parses the dictionary of a stream whose keyword follows
// before: the one after the last object header "n g obj" that reaches
// the keyword.
func streamDict(before []byte) map[string]pdfValue {
	for end, tries := len(before), 0; tries < 8; {
		i := bytes.LastIndex(before[:end], []byte("obj"))
		if i < 0 {
			return nil
		}
		end = i
		if !isObjHeader(before, i) {
			continue // "endobj", or "obj" inside a name
		}
		tries++
		l := &pdfLexer{b: before[i+len("obj"):]}
		d, ok := l.value(0).(pdfDict)
		if l.skipSpace(); ok && l.i == len(l.b) {
			return d
		}
		// A header inside a string of the dictionary: look further back.
	}
	return nil
}

// isObjHeader reports whether the "obj" at b[i:] ends "n g obj".
func isObjHeader(b []byte, i int) bool {
	if i+3 < len(b) && !isPDFSpace(b[i+3]) && !isPDFDelim(b[i+3]) {
		return false
	}
	j := i
	for range 2 { // the generation, then the object number
		k := j
		for k > 0 && isPDFSpace(b[k-1]) {
			k--
		}
		d := k
		for d > 0 && '0' <= b[d-1] && b[d-1] <= '9' {
			d--
		}
		if d == k {
			return false
		}
		j = d
	}
	return true
}

// decoder returns a reader of what PDFium would decode from data,
// or nil for a stream not to count: no filter, an image or attachment, or
// a first filter this check does not decode. A dictionary that cannot be
// read, or a filter given by reference, is tried as zlib, the one filter
// of the bombs seen.
func (sc *streamScan) decoder(data []byte, dict map[string]pdfValue) io.Reader {
	sc.zUsed = false
	var r io.Reader = bytes.NewReader(data)
	if dict == nil {
		return sc.flate(r)
	}
	if dict["Subtype"] == pdfName("Image") || dict["Type"] == pdfName("EmbeddedFile") {
		return nil
	}
	var filters []pdfValue
	switch f := dict["Filter"].(type) {
	case nil:
		return nil
	case pdfArray:
		filters = f
	default:
		filters = []pdfValue{f}
	}
	parms, _ := dict["DecodeParms"].(pdfArray)
	for i, f := range filters {
		var p pdfDict
		if i < len(parms) {
			p, _ = parms[i].(pdfDict)
		} else if len(filters) == 1 {
			p, _ = dict["DecodeParms"].(pdfDict)
		}
		next := sc.filter(r, f, p)
		if next == nil {
			if i == 0 {
				return nil
			}
			// An image codec or encryption after a decodable filter:
			// count what reaches it.
			return r
		}
		r = next
	}
	return r
}

// filter wraps r in the decoder for filter f (full or abbreviated
// name, as PDFium accepts both), or returns nil.
func (sc *streamScan) filter(r io.Reader, f pdfValue, parms pdfDict) io.Reader {
	name, ok := f.(pdfName)
	if !ok {
		return sc.flate(r)
	}
	switch name {
	case "FlateDecode", "Fl":
		return sc.flate(r)
	case "LZWDecode", "LZW":
		early := 1
		if e, ok := parms["EarlyChange"].(pdfInt); ok && e == 0 {
			early = 0
		}
		return newPieceReader(r, newLZW(early))
	case "RunLengthDecode", "RL":
		return newPieceReader(r, &runLength{})
	case "ASCIIHexDecode", "AHx":
		return newPieceReader(r, &asciiHex{})
	case "ASCII85Decode", "A85":
		return ascii85.NewDecoder(newPieceReader(r, &untilTilde{}))
	}
	return nil
}

// flate is a zlib reader of r, or an empty reader when r does not start
// with a zlib header. The first in a chain reuses the scan's reader.
func (sc *streamScan) flate(r io.Reader) io.Reader {
	if sc.z != nil && !sc.zUsed {
		if sc.z.(zlib.Resetter).Reset(r, nil) != nil {
			return bytes.NewReader(nil)
		}
		sc.zUsed = true
		return sc.z
	}
	z, err := zlib.NewReader(r)
	if err != nil {
		return bytes.NewReader(nil)
	}
	if !sc.zUsed {
		sc.z, sc.zUsed = z, true
	}
	return z
}

// pieceReader is an io.Reader over a decoder that yields its output a
// piece at a time.
type pieceReader struct {
	in   *bufio.Reader
	d    pieceDecoder
	out  []byte // decoded, not yet read
	done bool
}

// pieceDecoder decodes the next piece of in; done means the data ended
// (piece may still hold its last bytes). A piece is valid until the next
// call.
type pieceDecoder interface {
	next(in *bufio.Reader) (piece []byte, done bool)
}

func newPieceReader(r io.Reader, d pieceDecoder) *pieceReader {
	return &pieceReader{in: bufio.NewReader(r), d: d}
}

func (p *pieceReader) Read(b []byte) (int, error) {
	for len(p.out) == 0 {
		if p.done {
			return 0, io.EOF
		}
		p.out, p.done = p.d.next(p.in)
	}
	n := copy(b, p.out)
	p.out = p.out[n:]
	return n, nil
}

// runLength decodes RunLengthDecode: a length byte n below 128 is
// followed by n+1 literal bytes, above 128 by one byte to repeat 257-n
// times; 128 ends the data.
type runLength struct{ buf [128]byte }

func (d *runLength) next(in *bufio.Reader) ([]byte, bool) {
	c, err := in.ReadByte()
	if err != nil || c == 128 {
		return nil, true
	}
	if c < 128 {
		n, err := io.ReadFull(in, d.buf[:int(c)+1])
		return d.buf[:n], err != nil
	}
	b, err := in.ReadByte()
	if err != nil {
		return nil, true
	}
	run := d.buf[:257-int(c)]
	for i := range run {
		run[i] = b
	}
	return run, false
}

// asciiHex decodes ASCIIHexDecode: pairs of hex digits, white space
// skipped, ">" ends the data, a lone last digit is followed by 0.
type asciiHex struct{ buf [256]byte }

func (d *asciiHex) next(in *bufio.Reader) ([]byte, bool) {
	n, half, have := 0, byte(0), false
	for n < len(d.buf) { // ends right after a whole byte
		c, err := in.ReadByte()
		if err != nil || c == '>' {
			if have {
				d.buf[n] = half << 4
				n++
			}
			return d.buf[:n], true
		}
		var v byte
		switch {
		case '0' <= c && c <= '9':
			v = c - '0'
		case 'a' <= c && c <= 'f':
			v = c - 'a' + 10
		case 'A' <= c && c <= 'F':
			v = c - 'A' + 10
		default:
			continue // white space, or junk PDFium skips as well
		}
		if have {
			d.buf[n] = half<<4 | v
			n++
		}
		half, have = v, !have
	}
	return d.buf[:n], false
}

// untilTilde passes its input on up to the "~" of ASCII85's "~>" end
// mark, which encoding/ascii85 does not know.
type untilTilde struct{ buf [256]byte }

func (d *untilTilde) next(in *bufio.Reader) ([]byte, bool) {
	n := 0
	for n < len(d.buf) {
		c, err := in.ReadByte()
		if err != nil || c == '~' {
			return d.buf[:n], true
		}
		d.buf[n] = c
		n++
	}
	return d.buf[:n], false
}

// lzw decodes LZWDecode: MSB-first codes of 9 to 12 bits, 256 clears the
// table, 257 ends the data; with early change (PDF's default) the code
// width grows one code sooner.
type lzw struct {
	early  int
	bits   uint32
	nbits  uint
	width  uint
	entry  int // the next table entry
	prev   int // the previous code, -1 after a clear
	prefix [4096]uint16
	suffix [4096]byte
	length [4096]uint16
	stack  [4096]byte
	kwk    [4097]byte
}

func newLZW(early int) *lzw {
	d := &lzw{early: early}
	for i := range 256 {
		d.suffix[i], d.length[i] = byte(i), 1
	}
	d.clear()
	return d
}

func (d *lzw) clear() { d.width, d.entry, d.prev = 9, 258, -1 }

func (d *lzw) code(in *bufio.Reader) (int, bool) {
	for d.nbits < d.width {
		c, err := in.ReadByte()
		if err != nil {
			return 0, false
		}
		d.bits = d.bits<<8 | uint32(c)
		d.nbits += 8
	}
	d.nbits -= d.width
	return int(d.bits>>d.nbits) & (1<<d.width - 1), true
}

// expand writes the string of code c into the stack and returns it.
func (d *lzw) expand(c int) []byte {
	n := int(d.length[c])
	s := d.stack[len(d.stack)-n:]
	for i := n - 1; i >= 0; i-- {
		s[i] = d.suffix[c]
		c = int(d.prefix[c])
	}
	return s
}

func (d *lzw) next(in *bufio.Reader) ([]byte, bool) {
	c, ok := d.code(in)
	switch {
	case !ok || c == 257:
		return nil, true
	case c == 256:
		d.clear()
		return nil, false
	}
	var s []byte
	switch {
	case c < d.entry:
		s = d.expand(c)
	case c == d.entry && d.prev >= 0:
		// The code being defined: the previous string plus its own
		// first byte.
		ps := d.expand(d.prev)
		k := copy(d.kwk[:], ps)
		d.kwk[k] = ps[0]
		s = d.kwk[:k+1]
	default:
		return nil, true // corrupt: PDFium stops here too
	}
	if d.prev >= 0 && d.entry < 4096 {
		d.prefix[d.entry] = uint16(d.prev)
		d.suffix[d.entry] = s[0]
		d.length[d.entry] = d.length[d.prev] + 1
		d.entry++
	}
	if d.entry+d.early >= 1<<d.width && d.width < 12 {
		d.width++
	}
	d.prev = c
	return s, false
}

// pdfValue is a parsed PDF object: pdfName, pdfInt, pdfArray, pdfDict, or
// pdfOther for anything this check does not need.
type pdfValue any

type (
	pdfName  string
	pdfInt   int64
	pdfArray []pdfValue
	pdfDict  map[string]pdfValue
	pdfOther struct{}
)

// pdfLexer reads PDF objects from b: enough syntax to find a stream's
// filters, nothing more.
type pdfLexer struct {
	b []byte
	i int
}

// maxPDFNesting bounds the depth of arrays and dictionaries it follows.
const maxPDFNesting = 32

func isPDFSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func isPDFDelim(c byte) bool {
	return strings.IndexByte("()<>[]{}/%", c) >= 0
}

func (l *pdfLexer) skipSpace() {
	for l.i < len(l.b) {
		switch c := l.b[l.i]; {
		case isPDFSpace(c):
			l.i++
		case c == '%':
			for l.i < len(l.b) && l.b[l.i] != '\n' && l.b[l.i] != '\r' {
				l.i++
			}
		default:
			return
		}
	}
}

// value reads one object; a reference "n g R" reads as pdfOther, and
// anything unreadable as nil.
func (l *pdfLexer) value(depth int) pdfValue {
	l.skipSpace()
	if l.i >= len(l.b) || depth > maxPDFNesting {
		return nil
	}
	switch c := l.b[l.i]; {
	case c == '/':
		return l.name()
	case c == '<' && l.i+1 < len(l.b) && l.b[l.i+1] == '<':
		l.i += 2
		d := pdfDict{}
		for {
			l.skipSpace()
			if l.i+1 < len(l.b) && l.b[l.i] == '>' && l.b[l.i+1] == '>' {
				l.i += 2
				return d
			}
			k, ok := l.value(depth + 1).(pdfName)
			if !ok {
				return nil
			}
			v := l.value(depth + 1)
			if v == nil {
				return nil
			}
			d[string(k)] = v
		}
	case c == '[':
		l.i++
		var a pdfArray
		for {
			l.skipSpace()
			if l.i < len(l.b) && l.b[l.i] == ']' {
				l.i++
				return a
			}
			v := l.value(depth + 1)
			if v == nil {
				return nil
			}
			a = append(a, v)
		}
	case c == '(':
		return l.literal()
	case c == '<':
		j := bytes.IndexByte(l.b[l.i:], '>')
		if j < 0 {
			return nil
		}
		l.i += j + 1
		return pdfOther{}
	case isPDFDelim(c):
		return nil
	}
	tok := l.regular()
	n, err := strconv.ParseInt(string(tok), 10, 64)
	if err != nil {
		return pdfOther{} // a real, true, false, null
	}
	// "n g R" is a reference.
	save := l.i
	l.skipSpace()
	if g := l.regular(); len(g) > 0 {
		if _, err := strconv.Atoi(string(g)); err == nil {
			l.skipSpace()
			if r := l.regular(); string(r) == "R" {
				return pdfOther{}
			}
		}
	}
	l.i = save
	return pdfInt(n)
}

func (l *pdfLexer) regular() []byte {
	j := l.i
	for l.i < len(l.b) && !isPDFSpace(l.b[l.i]) && !isPDFDelim(l.b[l.i]) {
		l.i++
	}
	return l.b[j:l.i]
}

// name reads a name with its #xx escapes decoded, so that
// "/Fl#61teDecode" is FlateDecode, as PDFium reads it.
func (l *pdfLexer) name() pdfName {
	l.i++
	raw := l.regular()
	if bytes.IndexByte(raw, '#') < 0 {
		return pdfName(raw)
	}
	out := make([]byte, 0, len(raw))
	for k := 0; k < len(raw); k++ {
		if raw[k] == '#' && k+2 < len(raw) {
			if v, err := strconv.ParseUint(string(raw[k+1:k+3]), 16, 8); err == nil {
				out = append(out, byte(v))
				k += 2
				continue
			}
		}
		out = append(out, raw[k])
	}
	return pdfName(out)
}

// literal skips a (string), with nested parentheses and escapes.
func (l *pdfLexer) literal() pdfValue {
	depth := 0
	for ; l.i < len(l.b); l.i++ {
		switch l.b[l.i] {
		case '\\':
			l.i++
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.i++
				return pdfOther{}
			}
		}
	}
	return nil
}
