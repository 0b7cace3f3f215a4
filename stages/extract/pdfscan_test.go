package extract

import (
	"bytes"
	"context"
	"encoding/ascii85"
	"encoding/hex"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// lzwEncode is PDF's LZWDecode in reverse, with the given EarlyChange. It
// clears the table before it fills.
func lzwEncode(p []byte, early int) []byte {
	var out []byte
	var acc uint64
	var nacc uint
	width := uint(9)
	put := func(code int) {
		acc = acc<<width | uint64(code)
		nacc += width
		for nacc >= 8 {
			nacc -= 8
			out = append(out, byte(acc>>nacc))
		}
	}
	type key struct {
		prefix int
		b      byte
	}
	table := map[key]int{}
	next := 258
	put(256)
	if len(p) == 0 {
		put(257)
		return out
	}
	w := int(p[0])
	for _, c := range p[1:] {
		if code, ok := table[key{w, c}]; ok {
			w = code
			continue
		}
		put(w)
		// The decoder learns this entry one code later, so it widens
		// its codes when the entry's own number reaches the limit.
		table[key{w, c}] = next
		if next+early >= 1<<width && width < 12 {
			width++
		}
		next++
		w = int(c)
		if next+early >= 4094 {
			put(256)
			clear(table)
			next, width = 258, 9
		}
	}
	put(w)
	put(257)
	if nacc > 0 {
		out = append(out, byte(acc<<(8-nacc)))
	}
	return out
}

// runLengthZeros is n zero bytes in RunLengthDecode.
func runLengthZeros(n int) []byte {
	var out []byte
	for ; n >= 128; n -= 128 {
		out = append(out, 129, 0)
	}
	switch {
	case n == 1:
		out = append(out, 0, 0)
	case n > 1:
		out = append(out, byte(257-n), 0)
	}
	return append(out, 128)
}

func ascii85Bytes(p []byte) []byte {
	out := make([]byte, ascii85.MaxEncodedLen(len(p)))
	return append(out[:ascii85.Encode(out, p)], "~>"...)
}

// Each filter checkPDFStreams decodes is counted to the byte: a content
// stream of exactly size decoded bytes passes a budget of size and fails
// one of size-1.
func TestPDFStreamBudgetCountsEveryFilter(t *testing.T) {
	const size = 1<<20 + 3
	zeros := make([]byte, size)
	z := zlibZeros(size)
	for _, tc := range []struct {
		name, dict string
		data       []byte
	}{
		{"flate", "/Filter /FlateDecode", z},
		{"abbreviated", "/Filter /Fl", z},
		{"escaped name", "/Filter /Fl#61teDecode", z},
		{"array", "/Filter [/FlateDecode]", z},
		{"flate twice", "/Filter [/FlateDecode /FlateDecode]", zlibBytes(z)},
		{"filter by reference", "/Filter 9 0 R", z},
		{"unreadable dictionary", "/Filter /FlateDecode /Odd {", z},
		{"hex then flate", "/Filter [/ASCIIHexDecode /FlateDecode]", []byte(hex.EncodeToString(z) + ">")},
		{"ascii85 then flate", "/Filter [/A85 /Fl] /DecodeParms [null null]", ascii85Bytes(z)},
		{"ascii85", "/Filter /ASCII85Decode", ascii85Bytes(zeros)},
		{"run length", "/Filter /RunLengthDecode", runLengthZeros(size)},
		{"lzw", "/Filter /LZWDecode", lzwEncode(zeros, 1)},
		{"lzw without early change", "/Filter /LZWDecode /DecodeParms << /EarlyChange 0 >>", lzwEncode(zeros, 0)},
		{"lzw parameters in an array", "/Filter [/LZW] /DecodeParms [<< /EarlyChange 0 >>]", lzwEncode(zeros, 0)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := onePagePDF([][]byte{streamObj(tc.dict, tc.data)})
			if err := checkPDFStreams(context.Background(), pdf, size); err != nil {
				t.Fatalf("budget of exactly the decoded size: %v", err)
			}
			err := checkPDFStreams(context.Background(), pdf, size-1)
			var fe *FileError
			if !errors.As(err, &fe) || fe.Reason != "decoded streams exceed "+bytesize.Format(size-1) {
				t.Fatalf("budget one byte short: got %v", err)
			}
		})
	}
}

// A /Length that stops short of "endstream" is not believed, as PDFium
// does not believe it.
func TestPDFStreamBudgetIgnoresShortLength(t *testing.T) {
	obj := append([]byte("<< /Filter /FlateDecode /Length 10 >>\nstream\n"), zlibZeros(1<<20)...)
	pdf := onePagePDF([][]byte{append(obj, "\nendstream"...)})
	if err := checkPDFStreams(context.Background(), pdf, 1<<20-1); err == nil {
		t.Fatal("a stream of 1 MiB counted as its first 10 bytes")
	}
}

// The budget is for the whole file, not per stream.
func TestPDFStreamBudgetSumsStreams(t *testing.T) {
	half := streamObj("/Filter /FlateDecode", zlibZeros(600<<10))
	pdf := onePagePDF([][]byte{half, half})
	if err := checkPDFStreams(context.Background(), pdf, 1<<20); err == nil {
		t.Fatal("two streams of 600 KB passed a budget of 1 MB")
	}
	if err := checkPDFStreams(context.Background(), pdf, 1200<<10); err != nil {
		t.Fatal(err)
	}
}

// Images, attachments, unfiltered data and image codecs are not decoded
// for text, so they do not count.
func TestPDFStreamBudgetSkipsWhatTextDoesNotDecode(t *testing.T) {
	z := zlibZeros(1 << 20)
	for _, tc := range []struct {
		name, dict string
		data       []byte
	}{
		{"image", "/Type /XObject /Subtype /Image /Width 1024 /Height 1024 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode", z},
		{"attachment", "/Type /EmbeddedFile /Filter /FlateDecode", z},
		{"no filter", "", make([]byte, 1<<20)},
		{"image codec", "/Filter /DCTDecode", z},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pdf := onePagePDF([][]byte{[]byte("<< /Length 0 >>\nstream\n\nendstream")}, streamObj(tc.dict, tc.data))
			if err := checkPDFStreams(context.Background(), pdf, 4<<10); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// The LZW test encoder agrees with PDFium (which reads back the text), so
// the decoder's exact count on the same stream is PDFium's count too. The
// text is long enough for 12-bit codes and a table clear.
func TestPDFStreamLZWAgreesWithPDFium(t *testing.T) {
	rng := rand.New(rand.NewPCG(18, 4))
	var content bytes.Buffer
	var lines []string
	content.WriteString("BT /F1 4 Tf 5 TL 20 780 Td\n")
	for i := range 150 {
		line := fmt.Sprintf("line %d: survey %x %x of the gravel bar, stakes %x %d", i, rng.Uint64(), rng.Uint64(), rng.Uint64(), i*i)
		fmt.Fprintf(&content, "(%s) '\n", line)
		lines = append(lines, line)
	}
	content.WriteString("ET\n")
	for _, early := range []int{1, 0} {
		t.Run(fmt.Sprintf("EarlyChange=%d", early), func(t *testing.T) {
			enc := lzwEncode(content.Bytes(), early)
			// Filling the table once takes 5.3 KB of codes.
			if len(enc) < 6<<10 {
				t.Fatalf("only %d bytes encoded: too short to fill the table", len(enc))
			}
			pdf := onePagePDF([][]byte{streamObj(fmt.Sprintf("/Filter /LZWDecode /DecodeParms << /EarlyChange %d >>", early), enc)})
			doc, err := testPDF.readBytes(context.Background(), "lzw.pdf", pdf, DefaultLimits)
			if err != nil {
				t.Fatal(err)
			}
			if want := strings.Join(lines, "\n"); doc.Text != want {
				t.Fatalf("PDFium read\n%.300s\nwant\n%.300s", doc.Text, want)
			}
			n := int64(content.Len())
			if err := checkPDFStreams(context.Background(), pdf, n); err != nil {
				t.Fatalf("budget of the content's size: %v", err)
			}
			if err := checkPDFStreams(context.Background(), pdf, n-1); err == nil {
				t.Fatal("budget one byte short passed")
			}
		})
	}
}

// A dictionary found by "obj" inside a name or string, and "stream"
// inside "endstream", do not confuse the scan.
func TestPDFStreamDictionaryIsTheObjects(t *testing.T) {
	img := streamObj("/Type /XObject /Subtype /Image /Name /objects /Alt (1 0 obj) /Width 1024 /Height 1024 /ColorSpace /DeviceGray /BitsPerComponent 8 /Filter /FlateDecode",
		zlibZeros(1<<20))
	pdf := onePagePDF([][]byte{[]byte("<< /Length 0 >>\nstream\n\nendstream")}, img)
	if err := checkPDFStreams(context.Background(), pdf, 4<<10); err != nil {
		t.Fatalf("image with \"obj\" in its dictionary counted: %v", err)
	}
}
