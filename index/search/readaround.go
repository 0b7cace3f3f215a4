package search

import (
	"errors"
	"fmt"
	"sort"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// ErrNotIndexed means a path names no indexed document.
var ErrNotIndexed = errors.New("no such document in the index")

// ErrNoChunk means a chunk number past a document's last chunk: a URI from
// a search made before the file shrank names one.
var ErrNoChunk = errors.New("no such chunk in the document")

type noChunkError struct {
	path string
	n, i int
}

func (e noChunkError) Error() string {
	if e.n == 0 {
		return fmt.Sprintf("%q has no chunks (no text was indexed from it); there is no chunk %d", e.path, e.i)
	}
	return fmt.Sprintf("%q has chunks 0 to %d; there is no chunk %d", e.path, e.n-1, e.i)
}

func (e noChunkError) Is(target error) bool { return target == ErrNoChunk }

// DocumentCharLimit bounds a whole-document read, in code points of
// extracted text (about 25,000 model tokens); the rest is read chunk by chunk.
const DocumentCharLimit = 100_000

// Text is a stretch of one document's extracted text, rebuilt from the
// indexed chunks (see joinChunks): what search ranked, not a fresh read of
// the file.
type Text struct {
	Path       string
	Ext        string
	Mtime      float64
	Text       string
	FirstChunk int // chunks FirstChunk..LastChunk are in Text
	LastChunk  int
	Chunks     int // chunks the document has
	CharStart  int
	CharEnd    int
	// Truncated is set when a document read stopped at DocumentCharLimit;
	// the text continues with chunk LastChunk+1.
	Truncated bool
}

// DocumentInfo describes one indexed document.
type DocumentInfo struct {
	Path   string
	Ext    string
	Mtime  float64
	Size   int64
	Chunks int
}

// indexedFile returns path's entry in snap.
func indexedFile(snap index.View, path string) (*schema.FileEntry, error) {
	f, ok := snap.File(path)
	if !ok {
		return nil, fmt.Errorf("%q: %w", path, ErrNotIndexed)
	}
	return f, nil
}

// ReadChunk returns chunk i of path in snap with up to around chunks on each side,
// overlaps written once, PDF pages marked.
func ReadChunk(snap index.View, path string, i, around int) (Text, error) {
	f, err := indexedFile(snap, path)
	if err != nil {
		return Text{}, err
	}
	n := len(f.ChunkIDs)
	if i < 0 || i >= n {
		return Text{}, noChunkError{path, n, i}
	}
	first, last := max(0, i-around), min(n-1, i+around)
	recs := make([]schema.Record, 0, last-first+1)
	for c := first; c <= last; c++ {
		rec, _, err := snap.FileChunk(path, c)
		if err != nil {
			return Text{}, err
		}
		recs = append(recs, rec)
	}
	return textOf(f, recs, n), nil
}

// ReadDocument returns the whole extracted text of path in snap, PDF pages marked,
// cut after the last chunk that ends within DocumentCharLimit code points.
func ReadDocument(snap index.View, path string) (Text, error) {
	f, err := indexedFile(snap, path)
	if err != nil {
		return Text{}, err
	}
	n := len(f.ChunkIDs)
	var recs []schema.Record
	for c := 0; c < n; c++ {
		rec, _, err := snap.FileChunk(path, c)
		if err != nil {
			return Text{}, err
		}
		if c > 0 && rec.CharEnd > DocumentCharLimit {
			break
		}
		recs = append(recs, rec)
	}
	t := textOf(f, recs, n)
	t.Truncated = len(recs) < n
	return t, nil
}

// textOf joins recs (consecutive chunks of f), PDF pages marked.
func textOf(f *schema.FileEntry, recs []schema.Record, chunks int) Text {
	t := Text{Path: f.Path, Ext: f.Ext, Mtime: f.Mtime, Chunks: chunks}
	if len(recs) == 0 {
		return t // a file with no text has no chunks
	}
	first, last := recs[0], recs[len(recs)-1]
	var pages []int
	if first.Page > 0 {
		pages = pageStartsOf(f, recs)
	}
	t.Text = joinChunks(recs, pages)
	t.FirstChunk, t.LastChunk = first.ChunkIndex, last.ChunkIndex
	t.CharStart, t.CharEnd = first.CharStart, last.CharEnd
	return t
}

// Documents lists snap's documents in byte order of their paths, starting
// after the path after ("" = from the first), at most limit of them. more
// says whether documents follow.
func Documents(snap index.View, after string, limit int) (docs []DocumentInfo, more bool) {
	paths := snap.Paths()
	i := 0
	if after != "" {
		i = sort.SearchStrings(paths, after)
		if i < len(paths) && paths[i] == after {
			i++
		}
	}
	end := min(len(paths), i+limit)
	for _, p := range paths[i:end] {
		f, _ := snap.File(p)
		docs = append(docs, DocumentInfo{Path: p, Ext: f.Ext, Mtime: f.Mtime, Size: f.Size, Chunks: len(f.ChunkIDs)})
	}
	return docs, end < len(paths)
}
