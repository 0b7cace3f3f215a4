package index

import "github.com/micro-rag/micro-rag-mcp/index/schema"

// Hit is one search result: the chunk's manifest record and its score.
type Hit struct {
	Record schema.Record
	// Search: inner product of normalised vectors = cosine similarity.
	// SearchLexical: the raw BM25F score (lexical.Params), > 0 and
	// unbounded; comparable only within one query.
	Score float32
	// Share (SearchLexical only) is the part of the query's keyword weight
	// whose terms the chunk holds, in [0, 1].
	Share float64
}

// Match is one chunk a ranking found, by id, before its record is read.
type Match struct {
	ID    int64
	Score float32 // as Hit.Score
}
