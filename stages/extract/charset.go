package extract

import (
	"bufio"
	"bytes"
	"errors"
	"io"
	"unicode/utf8"
	"unsafe"

	"github.com/gogs/chardet"
	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
	"golang.org/x/text/encoding/htmlindex"
	"golang.org/x/text/encoding/unicode"
	"golang.org/x/text/encoding/unicode/utf32"
)

// errBinary marks bytes that are not text in any encoding we try.
var errBinary = errors.New("binary file")

const (
	sniffBytes  = 8 << 10  // prefix inspected for UTF-16 and binary content
	detectBytes = 64 << 10 // prefix given to chardet
)

var (
	utf16LE = unicode.UTF16(unicode.LittleEndian, unicode.IgnoreBOM)
	utf16BE = unicode.UTF16(unicode.BigEndian, unicode.IgnoreBOM)
	utf32LE = utf32.UTF32(utf32.LittleEndian, utf32.IgnoreBOM)
	utf32BE = utf32.UTF32(utf32.BigEndian, utf32.IgnoreBOM)
)

// decodeBytes turns the bytes of a text file into UTF-8. Order: byte order
// mark, BOM-less UTF-16, binary check, valid UTF-8, charset detection,
// windows-1252. Invalid bytes become U+FFFD. It fails only with errBinary.
func decodeBytes(b []byte) (string, error) {
	if len(b) == 0 {
		return "", nil
	}
	if enc, n := bomEncoding(b); enc != nil {
		return decodeWith(enc, b[n:]), nil
	}
	if enc := sniffUTF16(b); enc != nil {
		return decodeWith(enc, b), nil
	}
	if looksBinary(b) {
		return "", errBinary
	}
	if utf8.Valid(b) {
		// No copy: every caller hands over a buffer it never writes again,
		// and a second copy of a 256 MB file is what would break the
		// memory bound (docs/command-line.md: Ignore rules, per-file limits).
		return unsafe.String(unsafe.SliceData(b), len(b)), nil
	}
	return decodeWith(detectLegacy(b), b), nil
}

// bomEncoding returns the encoding a byte order mark names and the mark's
// length. UTF-32LE is tested before UTF-16LE because its mark starts alike.
func bomEncoding(b []byte) (encoding.Encoding, int) {
	switch {
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE, 0, 0}):
		return utf32LE, 4
	case bytes.HasPrefix(b, []byte{0, 0, 0xFE, 0xFF}):
		return utf32BE, 4
	case bytes.HasPrefix(b, []byte{0xEF, 0xBB, 0xBF}):
		return unicode.UTF8, 3
	case bytes.HasPrefix(b, []byte{0xFE, 0xFF}):
		return utf16BE, 2
	case bytes.HasPrefix(b, []byte{0xFF, 0xFE}):
		return utf16LE, 2
	}
	return nil, 0
}

// sniffUTF16 recognises UTF-16 without a byte order mark. Text in Latin,
// Cyrillic, Greek and similar scripts puts NUL in the high byte of spaces,
// digits and punctuation, so one parity of positions holds many NULs and
// the other almost none. A candidate is accepted only if it decodes to
// clean text, which rules out binary files with a similar NUL pattern.
func sniffUTF16(b []byte) encoding.Encoding {
	n := min(len(b), sniffBytes) &^ 1
	if n < 4 {
		return nil
	}
	var even, odd int
	for i := 0; i < n; i += 2 {
		if b[i] == 0 {
			even++
		}
		if b[i+1] == 0 {
			odd++
		}
	}
	units := n / 2
	var enc encoding.Encoding
	switch {
	case odd*10 >= units && even*50 <= units:
		enc = utf16LE
	case even*10 >= units && odd*50 <= units:
		enc = utf16BE
	default:
		return nil
	}
	out, err := enc.NewDecoder().Bytes(b[:n])
	if err != nil || !cleanText(string(out)) {
		return nil
	}
	return enc
}

// cleanText reports whether at most 2% of the runes of s are replacement
// characters or control characters other than ordinary white space.
func cleanText(s string) bool {
	var total, bad int
	for _, r := range s {
		total++
		if r == utf8.RuneError || (r < 0x20 && !isSpaceControl(r)) || (r >= 0x7F && r < 0xA0) {
			bad++
		}
	}
	return bad*50 <= total
}

func isSpaceControl(r rune) bool {
	return r == '\t' || r == '\n' || r == '\v' || r == '\f' || r == '\r' || r == 0x1B
}

// looksBinary reports whether any 8 KB block of b has more than about 3%
// NUL or control bytes no text encoding uses (ESC is allowed for
// ISO-2022). Every block counts, so text with a binary tail is binary.
func looksBinary(b []byte) bool { return binaryBlocks(b, int64(len(b))) }

// binaryBlocks is looksBinary for b, a part of a file of size bytes that
// starts at a block boundary. A short last block is measured against a
// whole one, so a few stray bytes at a file's end do not make it binary.
func binaryBlocks(b []byte, size int64) bool {
	for off := 0; off < len(b); off += sniffBytes {
		block := b[off:min(off+sniffBytes, len(b))]
		var ctrl int
		for _, c := range block {
			if (c < 0x20 && !isSpaceControl(rune(c))) || c == 0x7F {
				ctrl++
			}
		}
		if ctrl*32 > max(len(block), int(min(size, sniffBytes))) {
			return true
		}
	}
	return false
}

// detectLegacy picks the encoding of bytes that are not valid UTF-8.
// Mostly-UTF-8 text with a few bad bytes stays UTF-8 (decoded with
// replacement); otherwise chardet guesses, and windows-1252 is the fallback.
func detectLegacy(b []byte) encoding.Encoding {
	sample := b[:min(len(b), detectBytes)]
	if mostlyUTF8(sample) {
		return unicode.UTF8
	}
	res, err := chardet.NewTextDetector().DetectBest(sample)
	if err != nil || res == nil || res.Charset == "UTF-8" {
		// Not mostly UTF-8, whatever chardet says: windows-1252 keeps
		// every byte readable.
		return charmap.Windows1252
	}
	return lookupCharset(res.Charset)
}

// mostlyUTF8 reports whether valid multi-byte UTF-8 sequences outnumber
// invalid bytes: legacy 8-bit text almost never forms such sequences.
func mostlyUTF8(b []byte) bool {
	var multi, bad int
	for len(b) > 0 {
		r, size := utf8.DecodeRune(b)
		switch {
		case r == utf8.RuneError && size == 1:
			bad++
		case size > 1:
			multi++
		}
		b = b[size:]
	}
	return multi > bad
}

// lookupCharset resolves a charset name or label, falling back to
// windows-1252. The WHATWG "replacement" encoding (for ISO-2022-KR/CN and
// similar) would turn the whole file into one U+FFFD, so it is refused.
func lookupCharset(name string) encoding.Encoding {
	if enc, ok := charsetByName(name); ok {
		return enc
	}
	return charmap.Windows1252
}

// charsetByName resolves a WHATWG label; ok is false for unknown labels and
// for the "replacement" encoding.
func charsetByName(name string) (encoding.Encoding, bool) {
	enc, err := htmlindex.Get(name)
	if err != nil || enc == nil || enc == encoding.Replacement {
		return nil, false
	}
	return enc, true
}

// decodeWith decodes b, replacing invalid sequences with U+FFFD. Should a
// decoder still fail, windows-1252 (which maps every byte) is used.
func decodeWith(enc encoding.Encoding, b []byte) string {
	out, err := enc.NewDecoder().Bytes(b)
	if err != nil {
		out, _ = charmap.Windows1252.NewDecoder().Bytes(b)
	}
	return string(out)
}

// utf8File reports whether f is UTF-8 text (with or without a byte order
// mark), read in blocks: such a file can be parsed as it streams.
func utf8File(f File, size int64) bool {
	buf := make([]byte, 64<<10)
	keep := 0 // bytes of a code point cut by the block's end, moved to the front
	for off := int64(0); off < size; {
		n, err := f.ReadAt(buf[keep:], off)
		if n == 0 && err != nil {
			return false
		}
		b := buf[:keep+n]
		if off == 0 {
			if enc, _ := bomEncoding(b); enc != nil && !bytes.HasPrefix(b, []byte("\uFEFF")) {
				return false
			}
			if sniffUTF16(b) != nil {
				return false
			}
		}
		if binaryBlocks(b[keep:], size) { // blocks of the whole file, as decodeBytes sees it
			return false
		}
		off += int64(n)
		cut := 0
		if off < size {
			// Up to 3 trailing bytes may start a code point the next block ends.
			for cut < 3 && cut < len(b) && !utf8.RuneStart(b[len(b)-1-cut]) {
				cut++
			}
			if cut < len(b) && !utf8.FullRune(b[len(b)-1-cut:]) {
				cut++
			} else {
				cut = 0
			}
		}
		if !utf8.Valid(b[:len(b)-cut]) {
			return false
		}
		keep = copy(buf, b[len(b)-cut:])
	}
	return keep == 0
}

// utf8Stream returns a buffered reader over f's text, past a UTF-8 byte
// order mark, when f is UTF-8 throughout; nil when it must be decoded
// whole. A reader that streams holds a block at a time, not the file.
func utf8Stream(f File, size int64) *bufio.Reader {
	if !utf8File(f, size) {
		return nil
	}
	r := bufio.NewReaderSize(io.NewSectionReader(f, 0, size), 64<<10)
	if bom, err := r.Peek(3); err == nil && string(bom) == "\uFEFF" {
		r.Discard(3)
	}
	return r
}
