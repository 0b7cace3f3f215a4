package extract

import (
	"bytes"
	"cmp"
	"compress/gzip"
	"errors"
	"io"
	"io/fs"
	"path"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

func init() { readers[".gz"] = readGzip }

// GzipInner is the extension a gzip-compressed file is read by: that of
// its name without ".gz" (TextExt: "README.gz" is text). ok is false for
// what has no reader here: a tar archive, a PDF, another compression.
func GzipInner(name string) (ext string, ok bool) {
	inner := name[:len(name)-len(path.Ext(name))]
	ext = TextExt(inner, strings.ToLower(path.Ext(inner)))
	_, ok = readers[ext]
	return ext, ok && ext != ".gz" && ext != ".tar"
}

// readGzip inflates a gzip-compressed document (at most MaxFileBytes of
// it: a bomb stops there) and reads it with the reader of its inner name.
func readGzip(p string, f File, lim Limits) (*Document, error) {
	if _, err := checkSize(p, f, lim); err != nil {
		return nil, err
	}
	ext, ok := GzipInner(path.Base(p))
	if !ok {
		return nil, &FileError{Path: p, Reason: "compressed file of a type with no reader"}
	}
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, &FileError{Path: p, Reason: "not a gzip file", Err: err}
	}
	defer zr.Close()
	limit := cmp.Or(max(lim.MaxFileBytes, 0), DefaultLimits.MaxFileBytes)
	var buf bytes.Buffer
	n, err := buf.ReadFrom(io.LimitReader(zr, limit+1))
	switch {
	case n > limit:
		return nil, &FileError{Path: p, Reason: "decompressed file too large: over the limit " + bytesize.Format(limit)}
	case errors.Is(err, gzip.ErrChecksum), errors.Is(err, gzip.ErrHeader), errors.Is(err, io.ErrUnexpectedEOF):
		return nil, &FileError{Path: p, Reason: "corrupt gzip file", Err: err}
	case err != nil:
		return nil, &FileError{Path: p, Reason: "read failed", Err: err}
	}
	// The inner reader sees the inner name (a flat ODF is told by it);
	// failures name the file on disk.
	inner := strings.TrimSuffix(p, path.Ext(p))
	doc, err := readers[ext](inner, &memFile{Reader: bytes.NewReader(buf.Bytes()), name: path.Base(inner)}, lim)
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = p
	}
	return doc, err
}

// memFile is decompressed content as a File.
type memFile struct {
	*bytes.Reader
	name string
}

func (m *memFile) Stat() (fs.FileInfo, error) { return memInfo{m}, nil }

type memInfo struct{ m *memFile }

func (i memInfo) Name() string       { return i.m.name }
func (i memInfo) Size() int64        { return i.m.Size() }
func (i memInfo) Mode() fs.FileMode  { return 0o444 }
func (i memInfo) ModTime() time.Time { return time.Time{} }
func (i memInfo) IsDir() bool        { return false }
func (i memInfo) Sys() any           { return nil }
