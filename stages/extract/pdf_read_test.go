package extract

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// pageTexts splits doc.Text at PageStarts (code-point offsets).
func pageTexts(t *testing.T, doc *Document) []string {
	t.Helper()
	runes := []rune(doc.Text)
	var pages []string
	for i, start := range doc.PageStarts {
		end := len(runes)
		if i+1 < len(doc.PageStarts) {
			end = doc.PageStarts[i+1]
		}
		if start > end || end > len(runes) {
			t.Fatalf("PageStarts %v out of order or past the text (%d code points)", doc.PageStarts, len(runes))
		}
		pages = append(pages, string(runes[start:end]))
	}
	return pages
}

// checkPDFInvariants holds for every document the PDF engine returns.
func checkPDFInvariants(t testing.TB, doc *Document) {
	t.Helper()
	if !utf8.ValidString(doc.Text) {
		t.Fatal("text is not valid UTF-8")
	}
	if !norm.NFC.IsNormalString(doc.Text) {
		t.Fatal("text is not NFC")
	}
	if strings.ContainsAny(doc.Text, "\x00\r") {
		t.Fatal("text holds NUL or CR")
	}
	n := utf8.RuneCountInString(doc.Text)
	for i, s := range doc.PageStarts {
		if s < 0 || s > n || (i > 0 && s <= doc.PageStarts[i-1]) {
			t.Fatalf("PageStarts %v not increasing within %d code points", doc.PageStarts, n)
		}
	}
}

// Every sentence of the source must come out with its words separated as
// written, on the page it was typeset on.
func TestReadPDFToolOutputs(t *testing.T) {
	ss := sourceSentences(t)
	files := append([]string{}, toolPDFs...)
	files = append(files, "encrypted-empty-user-password.pdf")
	for _, name := range files {
		t.Run(name, func(t *testing.T) {
			doc, err := Extract(context.Background(), filepath.Join("testdata/pdf", name), DefaultLimits, testPDF)
			if err != nil {
				t.Fatal(err)
			}
			checkPDFInvariants(t, doc)
			if len(doc.Skipped) != 0 {
				t.Errorf("skipped: %v", doc.Skipped)
			}
			pages := pageTexts(t, doc)
			if len(pages) != 3 {
				t.Fatalf("got %d pages, want 3", len(pages))
			}
			for i, p := range pages[:2] {
				if !strings.HasSuffix(p, "\n\n") || strings.HasSuffix(p, "\n\n\n") {
					t.Errorf("page %d does not end with exactly one blank line: %q", i+1, p[max(0, len(p)-20):])
				}
			}
			for _, s := range ss {
				if !strings.Contains(squash(pages[s.page-1]), s.text) {
					t.Errorf("page %d lacks %q", s.page, s.text)
				}
			}
			// Lines survive: the text is not one run-on line.
			if lines := strings.Count(doc.Text, "\n"); lines < 20 {
				t.Errorf("only %d line breaks", lines)
			}
		})
	}
}

func TestReadPDFFailures(t *testing.T) {
	for _, tc := range []struct {
		file, reason string
	}{
		{"testdata/hostile/encrypted-user-password.pdf", "encrypted PDF (password required)"},
		{"testdata/hostile/garbage.pdf", "corrupt PDF"},
		{"testdata/hostile/not-a-pdf.pdf", "corrupt PDF"},
		{"testdata/hostile/truncated.pdf", "corrupt PDF"}, // first half of river-pdflatex.pdf
	} {
		t.Run(filepath.Base(tc.file), func(t *testing.T) {
			doc, err := Extract(context.Background(), tc.file, DefaultLimits, testPDF)
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("got %v, %v; want a *FileError", doc, err)
			}
			if fe.Reason != tc.reason || fe.Path != tc.file {
				t.Fatalf("got reason %q path %q, want %q %q", fe.Reason, fe.Path, tc.reason, tc.file)
			}
		})
	}
}

func TestReadPDFImageOnly(t *testing.T) {
	doc, err := Extract(context.Background(), "testdata/pdf/image-only.pdf", DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "" || len(doc.PageStarts) != 1 || len(doc.Skipped) != 0 {
		t.Fatalf("got text %q, PageStarts %v, skipped %v; want one empty page", doc.Text, doc.PageStarts, doc.Skipped)
	}
}

// Page 2 of broken-page.pdf is the integer 42 instead of a page
// dictionary: it is skipped with its number, pages 1 and 3 are kept.
func TestReadPDFBrokenPageIsSkipped(t *testing.T) {
	doc, err := Extract(context.Background(), "testdata/hostile/broken-page.pdf", DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	checkPDFInvariants(t, doc)
	if doc.Text != "First page stands.\n\nThird page stands." {
		t.Errorf("text %q", doc.Text)
	}
	if len(doc.Skipped) != 1 || !strings.HasPrefix(doc.Skipped[0], "page 2: ") {
		t.Errorf("skipped %q, want one entry for page 2", doc.Skipped)
	}
	if len(doc.PageStarts) != 2 || doc.PageStarts[1] != len("First page stands.\n\n") {
		t.Errorf("PageStarts %v", doc.PageStarts)
	}
}

func TestReadPDFLimits(t *testing.T) {
	path := "testdata/pdf/river-pdflatex.pdf"
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	_, err = Extract(context.Background(), path, Limits{MaxFileBytes: fi.Size() - 1}, testPDF)
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "too large") {
		t.Errorf("file over MaxFileBytes: got %v", err)
	}
	_, err = Extract(context.Background(), path, Limits{MaxChars: 100}, testPDF)
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "exceeds 100 characters") {
		t.Errorf("text over MaxChars: got %v", err)
	}
}

// The extractor pool reads PDFs from two goroutines; -race checks the
// shared engine.
func TestReadPDFConcurrent(t *testing.T) {
	want, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 4)
	for range 4 {
		go func() {
			for range 3 {
				doc, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, testPDF)
				if err == nil && doc.Text != want.Text {
					err = errors.New("concurrent read gave different text")
				}
				if err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	for range 4 {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
}

// testPDF is the engine the package's tests share (the process exits
// without closing it, as a short-lived CLI would).
var testPDF = NewPDFEngine(PDFOptions{}, nil)

// newTestPDF is an engine of its own for a test that needs other options
// or closes it.
func newTestPDF(t *testing.T, opts PDFOptions) *PDFEngine {
	e := NewPDFEngine(opts, nil)
	t.Cleanup(func() { e.Close() })
	return e
}

// Close stops the engine; the next PDF starts it again.
func TestPDFEngineCloseRestarts(t *testing.T) {
	pdf := newTestPDF(t, PDFOptions{})
	if _, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, pdf); err != nil {
		t.Fatal(err)
	}
	if err := pdf.Close(); err != nil {
		t.Fatal(err)
	}
	if err := pdf.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
	doc, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, pdf)
	if err != nil || !strings.Contains(doc.Text, "River Restoration") {
		t.Fatalf("after Close: %v", err)
	}
}

// A cancelled context stops the read at once with its cause, and neither
// the wait for an instance nor the reading counts against the file.
func TestPDFCancel(t *testing.T) {
	pdf := newTestPDF(t, PDFOptions{})
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("reindex cancelled")
	cancel(stop)
	_, err := Extract(ctx, "testdata/pdf/river-groff.pdf", DefaultLimits, pdf)
	var fe *FileError
	if !errors.Is(err, stop) || errors.As(err, &fe) {
		t.Fatalf("got %v, want the cancel cause and no FileError", err)
	}
}

// A file that waits for the engine's only instance longer than its time
// limit is still read: the limit starts when it gets the instance.
func TestPDFDeadlineStartsAtInstance(t *testing.T) {
	const limit = 2 * time.Second
	short := newTestPDF(t, PDFOptions{FileTimeout: limit})
	if _, err := short.start(); err != nil {
		t.Fatal(err)
	}
	busy, err := short.run.pool.GetInstance(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, short)
		done <- err
	}()
	time.Sleep(limit + limit/2)
	busy.Close()
	if err := <-done; err != nil {
		t.Fatalf("a file that waited longer than its limit for an instance failed: %v", err)
	}
}

// A file past its deadline stops at the next page and leaves PDFium
// fit for the next file.
func TestReadPDFDeadlineStopsBetweenPages(t *testing.T) {
	data, err := os.ReadFile("testdata/pdf/river-groff.pdf")
	if err != nil {
		t.Fatal(err)
	}
	run, err := testPDF.start()
	if err != nil {
		t.Fatal(err)
	}
	inst, err := run.pool.GetInstance(time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer inst.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, reusable, err := pdfText(ctx, inst, data, DefaultLimits, run.mem); !errors.Is(err, context.Canceled) || !reusable {
		t.Fatalf("cancelled read: err %v, reusable %v; want context.Canceled, reusable", err, reusable)
	}
	doc, reusable, err := pdfText(context.Background(), inst, data, DefaultLimits, run.mem)
	if err != nil || !reusable || !strings.Contains(doc.Text, "River Restoration") {
		t.Fatalf("next read on the same instance: %v", err)
	}
}

// With Interruptible the engine is compiled with termination checks; the
// text must not change.
func TestReadPDFInterruptible(t *testing.T) {
	want, err := Extract(context.Background(), "testdata/pdf/river-ps2pdf.pdf", DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	got, err := Extract(context.Background(), "testdata/pdf/river-ps2pdf.pdf", DefaultLimits, newTestPDF(t, PDFOptions{Interruptible: true}))
	if err != nil {
		t.Fatal(err)
	}
	if got.Text != want.Text {
		t.Errorf("interruptible engine gave different text")
	}
}

// A file past its deadline is answered at once; its reading is abandoned,
// retires its instance when it ends, and the engine reads the next file.
func TestReadPDFPastDeadline(t *testing.T) {
	pdf := newTestPDF(t, PDFOptions{FileTimeout: time.Nanosecond})
	_, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, pdf)
	var fe *FileError
	if !errors.As(err, &fe) || !strings.Contains(fe.Reason, "took longer than 1ns") {
		t.Fatalf("got %v, want a FileError saying the PDF took longer than 1ns", err)
	}
	run, err := pdf.start()
	if err != nil {
		t.Fatal(err)
	}
	// The abandoned reading stops at its first page check.
	for i := 0; run.runaways.Load() != 0; i++ {
		if i == 1000 {
			t.Fatal("abandoned reading never ended")
		}
		time.Sleep(10 * time.Millisecond)
	}
	pdf.Close()
	doc, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, testPDF)
	if err != nil || !strings.Contains(doc.Text, "River Restoration") {
		t.Fatalf("next file: %v", err)
	}
}

// The compilation cache follows MICRO_RAG_CACHE_DIR and writes nothing
// under $HOME when it is set.
func TestPDFCacheFollowsCacheDir(t *testing.T) {
	cache, home := t.TempDir(), t.TempDir()
	t.Setenv("MICRO_RAG_CACHE_DIR", cache)
	t.Setenv("HOME", home)
	t.Setenv("XDG_CACHE_HOME", "")
	pdf := newTestPDF(t, PDFOptions{})
	if _, err := Extract(context.Background(), "testdata/pdf/river-groff.pdf", DefaultLimits, pdf); err != nil {
		t.Fatal(err)
	}
	if err := pdf.Close(); err != nil {
		t.Fatal(err)
	}
	if ents, err := os.ReadDir(filepath.Join(cache, "wazero")); err != nil || len(ents) == 0 {
		t.Fatalf("no compiled code under %s/wazero: %v", cache, err)
	}
	if ents, _ := os.ReadDir(home); len(ents) != 0 {
		t.Fatalf("wrote under HOME: %v", ents)
	}
}
