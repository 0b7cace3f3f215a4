package engine

import (
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// ErrNotIndexed means a path names no indexed document.
var ErrNotIndexed = errors.New("no such document in the index")

// ErrNoIndex means the index is not loaded yet (the model is still
// loading) or could not be loaded.
var ErrNoIndex = errors.New("the index is not loaded yet; try again in a few seconds")

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

// snapshot waits briefly for the store and takes the current snapshot; the
// caller releases it.
func (e *Engine) snapshot(ctx context.Context) (*index.Snapshot, error) {
	wctx, cancel := context.WithTimeout(ctx, ModelWait)
	err := e.WaitModel(wctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if failed := e.modelFailed(); failed != nil {
			return nil, failed // the cause and its fix, not "try again"
		}
		return nil, ErrNoIndex
	}
	snap := e.store.Acquire()
	if snap == nil {
		return nil, ErrNoIndex
	}
	return snap, nil
}

// indexedFile takes the current snapshot and path's entry in it; the caller
// releases the snapshot.
func (e *Engine) indexedFile(ctx context.Context, path string) (*index.Snapshot, *schema.FileEntry, error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	f, ok := snap.File(path)
	if !ok {
		snap.Release()
		return nil, nil, fmt.Errorf("%q: %w", path, ErrNotIndexed)
	}
	return snap, f, nil
}

// ReadChunk returns chunk i of path with up to around chunks on each side,
// overlaps written once, PDF pages marked.
func (e *Engine) ReadChunk(ctx context.Context, path string, i, around int) (Text, error) {
	snap, f, err := e.indexedFile(ctx, path)
	if err != nil {
		return Text{}, err
	}
	defer snap.Release()
	n := len(f.ChunkIDs)
	if i < 0 || i >= n {
		return Text{}, fmt.Errorf("%q has chunks 0 to %d; there is no chunk %d", path, n-1, i)
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

// ReadDocument returns the whole extracted text of path, PDF pages marked,
// cut after the last chunk that ends within DocumentCharLimit code points.
func (e *Engine) ReadDocument(ctx context.Context, path string) (Text, error) {
	snap, f, err := e.indexedFile(ctx, path)
	if err != nil {
		return Text{}, err
	}
	defer snap.Release()
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

// Documents lists indexed documents in byte order of their paths, starting
// after the path after ("" = from the first), at most limit of them. more
// says whether documents follow.
func (e *Engine) Documents(ctx context.Context, after string, limit int) (docs []DocumentInfo, more bool, err error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return nil, false, err
	}
	defer snap.Release()
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
	return docs, end < len(paths), nil
}
