package lexical

// QueryWeight is Σ qtf·idf over the query's terms that occur in the index:
// the score of a document holding each of them once, at average length, in
// the body. Dividing a score by it gives the share of the query's keyword
// evidence a document holds, which raw BM25 (growing with query length)
// does not say.
func (x *Index) QueryWeight(query string) float64 {
	var w float64
	for _, t := range x.queryTerms(query) {
		w += t.qtf * t.idf
	}
	return w
}
