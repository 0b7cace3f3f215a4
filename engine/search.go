package engine

import (
	"context"
	"errors"
	"fmt"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
)

// Answer answers a search tool call: args as JSON decodes them (bad ones
// are a *search.ArgsError), searched from the current snapshot without
// waiting for a reindex, with the note a weak answer adds: which files the
// latest run left out because their extension is not enabled. explain
// sets each result's Explain (the CLI's --explain).
func (e *Engine) Answer(ctx context.Context, args map[string]any, explain bool) (isearch.Output, error) {
	src, opt := e.source(ctx)
	g := e.NotEnabled()
	src.Unindexed, opt.Explain = isearch.Unindexed{Count: g.Count, Examples: g.Examples, Exts: g.Exts}, explain
	out, err := isearch.AnswerCall(args, src, opt)
	return out, e.scrub(err)
}

// Search answers req from the current snapshot without waiting for a
// reindex (see search.Search). Before the model is ready it waits up to
// 5 s, then returns no results.
func (e *Engine) Search(ctx context.Context, req isearch.Request) ([]isearch.Result, error) {
	src, opt := e.source(ctx)
	res, err := src.Search(req, opt)
	return res, e.scrub(err)
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

// source is what a search reads, the current snapshot (none before the
// model and the index are ready, or when it holds no chunk) and the
// engine's model, and how it ranks.
func (e *Engine) source(ctx context.Context) (isearch.Source, isearch.Options) {
	view := func(opt *isearch.Options) (index.View, error) {
		snap, err := e.snapshot(ctx)
		if errors.Is(err, ErrNoIndex) {
			e.log.Warn("search before the model and the index are ready: no results")
			return nil, nil
		}
		if err != nil {
			return nil, err
		}
		if snap.Chunks() == 0 {
			snap.Release()
			e.log.Warn("search on an empty or missing index: no results", "index", e.cfg.IndexFolder)
			return nil, nil
		}
		opt.Null, opt.NullQueries = e.null, e.nullQueries // set with the model the snapshot waited for
		return snap, nil
	}
	return isearch.Source{View: view, Embed: e.embedQuery}, isearch.Options{Mode: e.cfg.SearchMode}
}

// embedQuery is the query's embedding.
func (e *Engine) embedQuery(query string) ([]float32, error) {
	done := e.working()
	defer done()
	vec, err := e.queryEmbedder().EmbedQuery(make([]float32, 0, embed.Dim), query)
	if err != nil {
		return nil, fmt.Errorf("embed query: %w", err)
	}
	return vec, nil
}
