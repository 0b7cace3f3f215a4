package engine

import (
	"context"
	"errors"
	"fmt"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/stages/embed"
)

// ChunkEvidence and QueryEvidence are Explain's answer (index/search).
type (
	ChunkEvidence = isearch.ChunkEvidence
	QueryEvidence = isearch.QueryEvidence
)

// Explain returns the union of the first depth chunks of the dense and the
// keyword ranking with every chunk's exact cosine and keyword evidence, so
// that fusions can be compared offline (bench/cmd/fusion).
func (e *Engine) Explain(ctx context.Context, query string, depth int) (QueryEvidence, error) {
	if err := e.WaitModel(ctx); err != nil {
		return QueryEvidence{}, err
	}
	snap := e.store.Acquire()
	if snap == nil {
		return QueryEvidence{}, errors.New("no index")
	}
	defer snap.Release()
	vec, err := e.embedder.EmbedQuery(make([]float32, 0, embed.Dim), query)
	if err != nil {
		return QueryEvidence{}, fmt.Errorf("embed query: %w", err)
	}
	return isearch.Explain(snap, query, vec, depth)
}
