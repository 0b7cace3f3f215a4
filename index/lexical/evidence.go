package lexical

// Evidence is what the keyword index holds for one document and query.
type Evidence struct {
	Score float64 // BM25F, as Search scores it
	// Coverage is the share of the query's keyword weight (QueryWeight)
	// whose terms the document holds at all, in [0, 1].
	Coverage float64
}

// Evidence scores the given documents for query exactly as Search would,
// whether or not they would make its top k. Unknown or deleted ids get zero
// evidence. Safe for concurrent use.
func (x *Index) Evidence(query string, ids []int64) []Evidence {
	_, ev := x.SearchWith(query, 0, ids)
	return ev
}
