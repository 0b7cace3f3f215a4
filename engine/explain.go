package engine

import (
	"context"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// Explain returns the union of the first depth chunks of the dense and the
// keyword ranking with every chunk's exact cosine and keyword evidence,
// for the noise study (bench/cmd/noise).
func (e *Engine) Explain(ctx context.Context, query string, depth int) (isearch.QueryEvidence, error) {
	snap, err := e.snapshot(ctx)
	if err != nil {
		return isearch.QueryEvidence{}, err
	}
	defer snap.Release()
	vec, err := e.embedQuery(query)
	if err != nil {
		return isearch.QueryEvidence{}, err
	}
	return isearch.Explain(snap, query, vec, depth)
}
