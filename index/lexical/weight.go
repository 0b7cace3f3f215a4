package lexical

import "math"

// QueryWeight is Σ qtf·idf over the query's terms that occur in the index:
// the score of a document holding each of them once, at average length, in
// the body. Dividing a score by it gives the share of the query's keyword
// evidence a document holds, which raw BM25 (growing with query length)
// does not say.
func (x *Index) QueryWeight(query string) float64 {
	var n float64
	for _, v := range x.segs {
		n += float64(v.seg.docs())
	}
	qtf := map[string]float64{}
	for _, t := range Tokens(query) {
		if _, ok := qtf[t]; ok || len(qtf) < MaxQueryTerms {
			qtf[t]++
		}
	}
	var w float64
	for t, q := range qtf {
		var df float64
		for _, v := range x.segs {
			if i := v.seg.find(t); i >= 0 {
				df += float64(v.seg.df[i])
			}
		}
		if df > 0 {
			w += q * math.Log(1+(n-df+0.5)/(df+0.5))
		}
	}
	return w
}
