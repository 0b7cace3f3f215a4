package engine

import (
	"context"
	"errors"
	"time"

	"golang.org/x/text/unicode/norm"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// ErrNoIndex means the index is not loaded yet (the model is still
// loading) or could not be loaded.
var ErrNoIndex = errors.New("the index is not loaded yet; try again in a few seconds")

// snapshot waits briefly for the store and takes the current snapshot; the
// caller releases it. While the initial reindex of an index that holds
// nothing yet runs, it also waits, within the same ModelWait, for that
// run's first commit: a small folder is then searchable whole, where the
// snapshot would otherwise answer "nothing" for the first seconds. An
// index that holds any chunk is read at once, as always.
func (e *Engine) snapshot(ctx context.Context) (index.View, error) {
	wctx, cancel := context.WithTimeout(ctx, ModelWait)
	defer cancel()
	if err := e.WaitModel(wctx); err != nil {
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
	for snap.Chunks() == 0 && e.initialDue.Load() {
		select {
		case <-wctx.Done():
			if ctx.Err() != nil {
				snap.Release()
				return nil, ctx.Err()
			}
			return snap, nil
		case <-time.After(firstCommitPoll):
		}
		snap.Release()
		if snap = e.store.Acquire(); snap == nil {
			return nil, ErrNoIndex
		}
	}
	return snap, nil
}

// firstCommitPoll is how often a search waiting for the initial reindex's
// first commit looks again (a commit publishes a new snapshot; no signal
// is needed for a wait this short).
const firstCommitPoll = 25 * time.Millisecond

// ReadChunk returns chunk i of path with up to around chunks on each side,
// overlaps written once, PDF pages marked.
func (e *Engine) ReadChunk(ctx context.Context, path string, i, around int) (isearch.Text, error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return isearch.Text{}, err
	}
	defer snap.Release()
	text, err := isearch.ReadChunk(snap, indexedPath(snap, path), i, around)
	return text, e.scrub(err)
}

// ReadDocument returns the whole extracted text of path, PDF pages marked,
// cut after the last chunk that ends within DocumentCharLimit code points.
func (e *Engine) ReadDocument(ctx context.Context, path string) (isearch.Text, error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return isearch.Text{}, err
	}
	defer snap.Release()
	text, err := isearch.ReadDocument(snap, indexedPath(snap, path))
	return text, e.scrub(err)
}

// indexedPath is the indexed path naming the file path names: path itself,
// else one equal to it in NFC (a name macOS stored decomposed, asked for as
// typed, composed; the same rule as path_glob). path when none is.
func indexedPath(snap index.View, path string) string {
	if _, ok := snap.File(path); ok {
		return path
	}
	want := norm.NFC.String(path)
	for _, p := range snap.Paths() {
		if norm.NFC.String(p) == want {
			return p
		}
	}
	return path
}

// Documents lists indexed documents in byte order of their paths, starting
// after the path after ("" = from the first), at most limit of them. more
// says whether documents follow.
func (e *Engine) Documents(ctx context.Context, after string, limit int) (docs []isearch.DocumentInfo, more bool, err error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return nil, false, err
	}
	defer snap.Release()
	docs, more = isearch.Documents(snap, after, limit)
	return docs, more, nil
}
