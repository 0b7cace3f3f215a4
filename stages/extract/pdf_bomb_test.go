package extract

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"flag"
	"io"
	"os"
	"strings"
	"testing"
)

// bombPDF is a 7 KB PDF whose one content stream, zlib inside zlib,
// inflates to 1,500 MiB of zeros: what an outside tester's 2.3 MB file did
// in a single layer (5.2 GB of RSS, and "added" with no text). Rewrite it
// with go test -run TestBombPDFFile -args -update-bomb.
const bombPDF = "testdata/hostile/bomb-1500m.pdf"

var updateBomb = flag.Bool("update-bomb", false, "rewrite "+bombPDF)

func TestBombPDFFile(t *testing.T) {
	if *updateBomb {
		z := zlibBytes(zlibZeros(1500 << 20))
		pdf := onePagePDF([][]byte{streamObj("/Filter [/FlateDecode /FlateDecode]", z)})
		if err := os.WriteFile(bombPDF, pdf, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, err := os.ReadFile(bombPDF)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) > 16<<10 {
		t.Fatalf("%s is %d bytes; the point is a small file", bombPDF, len(data))
	}
	if raceEnabled {
		t.Skip("inflating 1.5 GB under the race detector takes half a minute")
	}
	start := bytes.Index(data, []byte("stream\n")) + len("stream\n")
	outer, err := zlib.NewReader(bytes.NewReader(data[start:]))
	if err != nil {
		t.Fatal(err)
	}
	inner, err := zlib.NewReader(outer)
	if err != nil {
		t.Fatal(err)
	}
	if n, err := io.Copy(io.Discard, inner); n != 1500<<20 || err != nil {
		t.Fatalf("the bomb inflates to %d bytes (%v), want 1500 MiB", n, err)
	}
}

// With the default limits the bomb fails with its reason before PDFium
// sees it.
func TestReadPDFBomb(t *testing.T) {
	_, err := Extract(context.Background(), bombPDF, DefaultLimits, testPDF)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Path != bombPDF || fe.Reason != "decoded streams exceed 512 MB" {
		t.Fatalf("got %v, want a FileError: decoded streams exceed 512 MB", err)
	}
}

// noStreamBudget is DefaultLimits without the stream check, to reach
// PDFium's own memory limit.
var noStreamBudget = Limits{MaxFileBytes: DefaultLimits.MaxFileBytes, MaxChars: DefaultLimits.MaxChars}

// Past the stream check, PDFium's memory limit holds: the file fails
// with that reason, its growth was refused rather than granted, and the
// engine reads the next file. With two instances the refusal count is
// shared, and the file's own failure is what ties it to the file.
func TestReadPDFMemoryLimit(t *testing.T) {
	for _, instances := range []int{1, 2} {
		pdf := newTestPDF(t, PDFOptions{MemoryLimitBytes: 64 << 20, Instances: instances})
		_, err := Extract(context.Background(), bombPDF, noStreamBudget, pdf)
		var fe *FileError
		if !errors.As(err, &fe) || fe.Reason != "PDF needs more than 64 MB of memory (page 1)" {
			t.Fatalf("%d instances: got %v, want a FileError: PDF needs more than 64 MB of memory (page 1)", instances, err)
		}
		if n := pdf.run.mem.refusals(); n == 0 {
			t.Fatalf("%d instances: no memory growth was refused", instances)
		}
		doc, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, pdf)
		if err != nil || !strings.Contains(doc.Text, "River Restoration") {
			t.Fatalf("%d instances: next file: %v", instances, err)
		}
	}
}

// Pages read before PDFium runs out of memory are kept; the rest are
// listed as not read, with the reason.
func TestReadPDFMemoryLimitKeepsEarlierPages(t *testing.T) {
	data, err := os.ReadFile(bombPDF)
	if err != nil {
		t.Fatal(err)
	}
	bomb := data[strings.Index(string(data), "<< /Filter") : strings.Index(string(data), "endstream")+len("endstream")]
	page := func(contents string) []byte {
		return []byte("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 300 200] /Resources << /Font << /F1 4 0 R >> >> /Contents " + contents + " >>")
	}
	pdf := buildPDF(
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte("<< /Type /Pages /Kids [3 0 R 5 0 R 7 0 R] /Count 3 >>"),
		page("6 0 R"),
		[]byte("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"),
		page("8 0 R"),
		streamObj("", []byte("BT /F1 12 Tf 20 100 Td (First page stands.) Tj ET")),
		page("9 0 R"),
		bomb,
		streamObj("", []byte("BT /F1 12 Tf 20 100 Td (Third page is not read.) Tj ET")),
	)
	pdfEngine := newTestPDF(t, PDFOptions{MemoryLimitBytes: 64 << 20})
	doc, err := pdfEngine.readBytes(context.Background(), "partial.pdf", pdf, noStreamBudget)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "First page stands." || len(doc.Skipped) != 1 ||
		!strings.HasPrefix(doc.Skipped[0], "pages 2-3: not read: PDF needs more than 64 MB of memory") {
		t.Fatalf("text %q, skipped %q", doc.Text, doc.Skipped)
	}
}

// A PDF whose pages all fail to load yields nothing to index: it fails,
// rather than counting as read with no text.
func TestReadPDFNoPageReadable(t *testing.T) {
	pdf := buildPDF(
		[]byte("<< /Type /Catalog /Pages 2 0 R >>"),
		[]byte("<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>"),
		[]byte("42"),
		[]byte("(not a page)"),
	)
	doc, err := testPDF.readBytes(context.Background(), "pageless.pdf", pdf, DefaultLimits)
	var fe *FileError
	if !errors.As(err, &fe) || fe.Reason != "no page could be read: page 1: page cannot be loaded" {
		t.Fatalf("got %+v, %v; want a FileError: no page could be read", doc, err)
	}
}
