package main

import (
	"context"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
)

// ChunkEvidence is what both rankings know of one chunk for one query.
type ChunkEvidence struct {
	Path        string  `json:"path"`
	ChunkIndex  int     `json:"chunk"`
	Text        string  `json:"text"`
	Cosine      float64 `json:"cos"`
	BM25        float64 `json:"bm25"`
	Coverage    float64 `json:"cov"`
	DenseRank   int     `json:"drank"` // from 1; 0 = not in the dense list
	KeywordRank int     `json:"krank"` // from 1; 0 = not in the keyword list
	Terms       uint64  `json:"terms"` // the query's terms it holds (lexical.Evidence)
}

// QueryEvidence is explain's answer.
type QueryEvidence struct {
	Weight float64         `json:"weight"` // the query's keyword weight
	Terms  []lexical.Term  `json:"terms"`  // its terms the index holds
	Absent float64         `json:"absent"` // its term occurrences found nowhere
	IDFMax float64         `json:"idf_max"`
	Chunks []ChunkEvidence `json:"chunks"`
}

// explain returns the union of the first depth chunks of the dense and the
// keyword ranking of snap for query (embedded as vec) with every chunk's
// exact cosine and keyword evidence.
func explain(snap index.View, query string, vec []float32, depth int) (QueryEvidence, error) {
	dense, err := snap.Search(vec, depth)
	if err != nil {
		return QueryEvidence{}, err
	}
	var ids []int64
	for _, h := range dense {
		ids = append(ids, h.Record.ID)
	}
	lex := snap.LexicalQuery(query)
	lex.TrackTerms()
	keyword, denseEvidence := lex.Search(depth, ids)
	weight, _ := lex.Weights()
	out := QueryEvidence{Weight: weight}
	out.Terms, out.Absent, out.IDFMax = lex.Terms()
	at := map[int64]int{}
	for i, h := range dense {
		at[h.Record.ID] = len(out.Chunks)
		out.Chunks = append(out.Chunks, ChunkEvidence{Path: h.Record.Path, ChunkIndex: h.Record.ChunkIndex,
			Text: h.Record.Text, Cosine: float64(h.Score), BM25: denseEvidence[i].Score,
			Coverage: denseEvidence[i].Coverage, Terms: denseEvidence[i].Terms, DenseRank: i + 1})
	}
	var only []lexical.Result // found by keywords alone
	var ranks []int
	var onlyIDs []int64
	for i, h := range keyword {
		if j, ok := at[h.ID]; ok {
			out.Chunks[j].KeywordRank = i + 1
			continue
		}
		only, ranks, onlyIDs = append(only, h), append(ranks, i+1), append(onlyIDs, h.ID)
	}
	cos, err := snap.Similarities(vec, onlyIDs)
	if err != nil {
		return QueryEvidence{}, err
	}
	for j, h := range only {
		rec, err := snap.Record(h.ID)
		if err != nil {
			return QueryEvidence{}, err
		}
		out.Chunks = append(out.Chunks, ChunkEvidence{Path: rec.Path, ChunkIndex: rec.ChunkIndex, Text: rec.Text,
			Cosine: float64(cos[j]), BM25: float64(float32(h.Score)), Coverage: h.Coverage, Terms: h.Terms, KeywordRank: ranks[j]})
	}
	return out, nil
}

// evidence is explain on eng's current view.
func evidence(ctx context.Context, eng *engine.Engine, query string, depth int) (QueryEvidence, error) {
	snap, vec, err := eng.View(ctx, query)
	if err != nil {
		return QueryEvidence{}, err
	}
	defer snap.Release()
	return explain(snap, query, vec, depth)
}
