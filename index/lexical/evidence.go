package lexical

// Evidence is what the keyword index holds for one document and query.
type Evidence struct {
	Score float64 // BM25F, as Search scores it
	// Coverage is the share of the query's keyword weight (QueryWeight)
	// whose terms the document holds at all, in [0, 1].
	Coverage float64
}

// Evidence scores the given documents for query exactly as Search would,
// whether or not they would make its top k, so that a fused ranking does
// not depend on how deep the keyword list was read. Unknown or deleted ids
// get zero evidence. Safe for concurrent use.
func (x *Index) Evidence(query string, ids []int64) []Evidence {
	out := make([]Evidence, len(ids))
	terms := x.queryTerms(query)
	if len(terms) == 0 || len(ids) == 0 {
		return out
	}
	var weight float64
	for _, t := range terms {
		weight += t.qtf * t.idf
	}
	// Wanted ordinals per segment, to the positions in ids.
	want := make(map[*segView]map[uint32]int, len(x.segs))
	for i, id := range ids {
		v, o := x.locate(id)
		if v == nil || isDead(v.dead, o) {
			continue
		}
		m := want[v]
		if m == nil {
			m = map[uint32]int{}
			want[v] = m
		}
		m[uint32(o)] = i
	}
	invAvg := x.invAvgLens()
	p := &x.Params
	for s, v := range x.segs {
		m := want[v]
		if m == nil {
			continue
		}
		for i := range terms {
			t := &terms[i]
			if t.at[s] < 0 {
				continue
			}
			r := postingReader{b: v.seg.postings(t.at[s]), prev: -1}
			var pst posting
			for r.next(&pst) {
				at, ok := m[pst.ord]
				if !ok {
					continue
				}
				out[at].Score += p.termScore(t, v.seg, int(pst.ord), &pst, &invAvg)
				out[at].Coverage += t.qtf * t.idf / weight
			}
		}
	}
	for i := range out {
		out[i].Coverage = min(out[i].Coverage, 1)
	}
	return out
}
