package engine

import (
	"context"
	"fmt"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/stages/embed"
)

// Fusion names how hybrid search combines the two rankings (search.Fusion).
type Fusion = isearch.Fusion

// Fusions (see search.Fusion).
const (
	FusionShare      = isearch.FusionShare
	FusionSpecific   = isearch.FusionSpecific
	FusionCoverage   = isearch.FusionCoverage
	FusionCalibrated = isearch.FusionCalibrated
	FusionRRF        = isearch.FusionRRF
)

// Search answers from the current snapshot without waiting for a reindex
// (see search.Search). Before the model is ready it waits up to 5 s, then
// returns no results.
func (e *Engine) Search(ctx context.Context, req SearchRequest) ([]Result, error) {
	wctx, cancel := context.WithTimeout(ctx, ModelWait)
	err := e.WaitModel(wctx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if failed := e.modelFailed(); failed != nil {
			return nil, failed
		}
		e.log.Warn("search before the model is ready: no results", "err", err)
		return []Result{}, nil
	}
	snap := e.store.Acquire()
	if snap == nil {
		return []Result{}, nil
	}
	defer snap.Release()
	if snap.Chunks() == 0 {
		e.log.Warn("search on an empty or missing index: no results", "index", e.cfg.IndexFolder)
		return []Result{}, nil
	}
	opt := isearch.Options{Mode: e.cfg.SearchMode, Fusion: e.cfg.Fusion, Diversity: e.cfg.Diversity, PassageCap: e.cfg.PassageCap}
	var vec []float32
	if opt.Mode != SearchKeyword {
		if vec, err = e.embedder.EmbedQuery(make([]float32, 0, embed.Dim), req.Query); err != nil {
			return nil, fmt.Errorf("embed query: %w", err)
		}
	}
	return isearch.Search(snap, req, vec, opt)
}
