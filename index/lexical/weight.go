package lexical

import "math"

// Weights is Σ qtf·idf over the query's terms that occur in the index:
// the score of a document holding each of them once, at average length, in
// the body. Dividing a score by it gives the share of the query's keyword
// evidence a document holds, which raw BM25 (growing with query length)
// does not say. rare is its rare-weighted form, Σ qtf·idf²/idfMax (idfMax:
// the idf of a term in one document). Their ratio, in (0, 1], is how
// specific the query's words are: 1 when each occurs in one document (an
// identifier), small for common words, whatever the size of the index.
func (q *Query) Weights() (weight, rare float64) {
	idfMax := q.x.idfMax()
	for _, t := range q.terms {
		weight += t.qtf * t.idf
		rare += t.qtf * t.idf * t.idf / idfMax
	}
	return weight, rare
}

// idfMax is the idf of a term in one document: the most specific a term
// can be.
func (x *Index) idfMax() float64 {
	var n float64
	for _, v := range x.segs {
		n += float64(v.seg.docs())
	}
	return math.Log(1 + (n-0.5)/1.5)
}

// Coverage is the share of the query's keyword weight that the index
// knows at all: Σ qtf·idf over its terms found in the index, over the same
// plus idfMax for each occurrence of a term found nowhere (a word absent
// from every document is as specific as a word can be). 0 for random
// strings, low for a question about something the folder never mentions,
// near 1 for one in its vocabulary; 0 when the query has no terms.
func (q *Query) Coverage() float64 {
	known, _ := q.Weights()
	if known <= 0 {
		return 0
	}
	return known / (known + q.absent*q.x.idfMax())
}

// Term is one of a query's terms that the index holds: its text, its
// occurrences in the query and its idf.
type Term struct {
	Text     string
	QTF, IDF float64
}

// Terms are the query's terms the index holds, in the order of the bits of
// Evidence.Terms; Absent counts the query's term occurrences found nowhere,
// and IDFMax is the idf of a term in one document.
func (q *Query) Terms() (terms []Term, absent, idfMax float64) {
	for _, t := range q.terms {
		terms = append(terms, Term{Text: t.text, QTF: t.qtf, IDF: t.idf})
	}
	return terms, q.absent, q.x.idfMax()
}
