// Package extract turns one file into normalised text: UTF-8, NFC, "\n" line
// ends, no NUL bytes. Each format has its own reader; Extract picks one by
// extension and turns any panic of a third-party parser into a per-file error.
package extract

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime/debug"
	"strings"
)

// Document is the extracted, normalised text of one file.
type Document struct {
	Text string
	// PageStarts[i] is the code-point offset in Text where page i+1 begins.
	// Nil for formats without pages.
	PageStarts []int
	// Skipped lists parts that could not be read (for example a PDF page),
	// each with its reason; the rest of the document is kept.
	Skipped []string
}

// Limits bound the work one file may cause.
type Limits struct {
	MaxFileBytes int64 // size on disk; 0 = no limit
	MaxChars     int   // code points of extracted text; 0 = no limit
	// MaxDecodedBytes bounds what a PDF's compressed streams decode to,
	// summed over the file; images and attachments are not counted.
	// 0 = no limit.
	MaxDecodedBytes int64
	// MaxPartBytes caps what one part of a zip-based document (DOCX,
	// OpenDocument, PPTX, XLSX, EPUB) inflates to. encoding/xml reads about
	// 20 MB/s, so it also bounds the time one file can take. 0 = the
	// default: a zip bomb guard is never off.
	MaxPartBytes int64
	// MaxZipBytes caps what all parts of one zip-based document together
	// inflate to; 0 = the default.
	MaxZipBytes int64
}

// The default limits, in one place.
const (
	defaultFileBytes    = 256 << 20
	defaultChars        = 64 << 20
	defaultDecodedBytes = 512 << 20
	defaultPartBytes    = 64 << 20
	defaultZipBytes     = 128 << 20
)

// DefaultLimits suit document folders; larger files are reported, not read.
var DefaultLimits = Limits{MaxFileBytes: defaultFileBytes, MaxChars: defaultChars, MaxDecodedBytes: defaultDecodedBytes,
	MaxPartBytes: defaultPartBytes, MaxZipBytes: defaultZipBytes}

// partBytes is MaxPartBytes or its default.
func (l Limits) partBytes() int64 { return cmp.Or(max(l.MaxPartBytes, 0), defaultPartBytes) }

// zipBytes is MaxZipBytes or its default.
func (l Limits) zipBytes() int64 { return cmp.Or(max(l.MaxZipBytes, 0), defaultZipBytes) }

// File is an open document. The reindex opens it through an os.Root and
// the readers read this handle, never a path, so what is read is what was
// opened and checked.
type File interface {
	io.Reader
	io.ReaderAt
	Stat() (fs.FileInfo, error)
}

// reader reads one format from f; name is for messages. It may panic;
// Read recovers.
type reader func(name string, f File, lim Limits) (*Document, error)

// readers are the formats read in Go; PDFs go to the PDFEngine. Plain
// text formats are added by plain.go, the office formats by their files.
var readers = map[string]reader{
	".txt":  readText,
	".md":   readText,
	".docx": readDOCX,
	".html": readHTML,
	".htm":  readHTML,
	".csv":  readCSV,
	".tsv":  readCSV,
}

// Supported reports whether ext (with its dot, any case) has a reader.
func Supported(ext string) bool {
	ext = strings.ToLower(ext)
	_, ok := readers[ext]
	return ok || ext == ".pdf"
}

// FileError is a per-file failure: the file is skipped, the run goes on.
type FileError struct {
	Path   string
	Reason string
	Err    error
}

func (e *FileError) Error() string {
	if e.Err != nil {
		return fmt.Sprintf("%s: %s: %v", e.Path, e.Reason, e.Err)
	}
	return fmt.Sprintf("%s: %s", e.Path, e.Reason)
}

func (e *FileError) Unwrap() error { return e.Err }

// Extract opens path and reads it with Read.
func Extract(ctx context.Context, path string, lim Limits, pdf *PDFEngine) (*Document, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, &FileError{Path: path, Reason: "cannot open file", Err: err}
	}
	defer f.Close()
	return Read(ctx, path, f, lim, pdf)
}

// Read reads the open file f with the reader for the extension of name;
// PDFs go to pdf, which may be nil when no PDF is expected. Every failure
// of the file, including a parser panic, comes back as a *FileError naming
// name; a cancelled ctx comes back as its cause.
func Read(ctx context.Context, name string, f File, lim Limits, pdf *PDFEngine) (doc *Document, err error) {
	path := name
	ext := TextExt(path, strings.ToLower(filepath.Ext(path)))
	r, ok := readers[ext]
	if ext == ".pdf" {
		if pdf == nil {
			return nil, &FileError{Path: path, Reason: "no PDF engine"}
		}
		r, ok = func(path string, f File, lim Limits) (*Document, error) { return pdf.read(ctx, path, f, lim) }, true
	}
	if !ok {
		return nil, &FileError{Path: path, Reason: "unsupported file type"}
	}
	// A file of no bytes holds no text, whatever its format promises (a
	// "New Word document" placeholder): empty, not corrupt.
	if fi, err := f.Stat(); err == nil && fi.Size() == 0 {
		return &Document{}, nil
	}
	defer func() {
		if p := recover(); p != nil {
			doc = nil
			err = &FileError{Path: path, Reason: "parser panic", Err: fmt.Errorf("%v\n%s", p, debug.Stack())}
		}
	}()
	doc, err = r(path, f, lim)
	if err != nil {
		if ctx.Err() != nil && errors.Is(err, context.Cause(ctx)) {
			return nil, err
		}
		if _, ok := err.(*FileError); !ok {
			err = &FileError{Path: path, Reason: "read failed", Err: err}
		}
		return nil, err
	}
	return doc, nil
}

// Checksum is "sha256:<hex>" of the normalised text, so a file saved again
// with the same content is recognised as unchanged.
func Checksum(text string) string {
	sum := sha256.Sum256([]byte(text))
	return "sha256:" + hex.EncodeToString(sum[:])
}
