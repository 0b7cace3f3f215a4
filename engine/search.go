package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
)

// Search answers from the current snapshot without waiting for a reindex
// (see search.Search). Before the model is ready it waits up to 5 s, then
// returns no results.
func (e *Engine) Search(ctx context.Context, req isearch.Request) ([]isearch.Result, error) {
	return e.searchWith(ctx, req, nil)
}

// Answer is Search's results with the note a weak search adds: which files
// the latest run left out because their extension is not enabled.
func (e *Engine) Answer(ctx context.Context, req isearch.Request) (isearch.Output, error) {
	res, err := e.Search(ctx, req)
	if err != nil {
		return isearch.Output{}, err
	}
	if res == nil {
		res = []isearch.Result{} // "results": [] rather than null
	}
	g := e.NotEnabled()
	return isearch.Output{Results: res, Note: isearch.NotEnabledNote(res, g.Count, g.Examples, g.Exts)}, nil
}

// View is the current view of the index and query's embedding, for
// reading the index below the search (bench/cmd/noise); the caller
// releases the view.
func (e *Engine) View(ctx context.Context, query string) (index.View, []float32, error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return nil, nil, err
	}
	vec, err := e.embedQuery(query)
	if err != nil {
		snap.Release()
		return nil, nil, err
	}
	return snap, vec, nil
}

// searchWith is Search with its options changed by tune (nil: none), for
// tests.
func (e *Engine) searchWith(ctx context.Context, req isearch.Request, tune func(*isearch.Options)) ([]isearch.Result, error) {
	snap, err := e.snapshot(ctx)
	if errors.Is(err, ErrNoIndex) {
		e.log.Warn("search before the model and the index are ready: no results")
		return []isearch.Result{}, nil
	}
	if err != nil {
		return nil, err
	}
	defer snap.Release()
	if snap.Chunks() == 0 {
		e.log.Warn("search on an empty or missing index: no results", "index", e.cfg.IndexFolder)
		return []isearch.Result{}, nil
	}
	opt := isearch.Options{Mode: e.cfg.SearchMode, Null: e.null, NullQueries: e.nullQueries}
	if tune != nil {
		tune(&opt)
	}
	var vec []float32
	if opt.Mode != isearch.Keyword {
		if vec, err = e.embedQuery(req.Query); err != nil {
			return nil, err
		}
	}
	res, err := isearch.Search(snap, req, vec, opt)
	return res, e.scrub(err)
}

// embedQuery is the query's embedding.
// embedNullQueries embeds isearch.NullQueries as queries, once per model,
// in one batched call (one at a time they took a second of a CLI search).
func embedNullQueries(emb *embed.Embedder) ([][]float32, error) {
	flat, err := emb.EmbedQueries(nil, isearch.NullQueries)
	if err != nil {
		return nil, fmt.Errorf("embed the null queries: %w", err)
	}
	dim := emb.Dim()
	vecs := make([][]float32, len(isearch.NullQueries))
	for i := range vecs {
		vecs[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return vecs, nil
}

func (e *Engine) embedQuery(query string) ([]float32, error) {
	done := e.working()
	defer done()
	vec, err := e.embedder.EmbedQuery(make([]float32, 0, embed.Dim), query)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return vec, nil
}
