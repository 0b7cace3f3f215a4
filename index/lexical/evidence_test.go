package lexical

import (
	"fmt"
	"math"
	"testing"
)

// SearchWith must give every document exactly Search's score, however deep
// Search would have to read to reach it, and the share of the query's
// keyword weight it holds.
func TestEvidenceMatchesSearch(t *testing.T) {
	dir := t.TempDir()
	var docs []Doc
	for i := range int64(120) {
		body := "alpha common text"
		if i%3 == 0 {
			body += " beta"
		}
		if i%7 == 0 {
			body += " gamma gamma"
		}
		docs = append(docs, Doc{ID: i + 1, Name: fmt.Sprintf("doc%d", i), Body: body})
	}
	x := mustAdd(t, Empty(), dir, "a.seg", docs[:60], false)
	x = mustAdd(t, x, dir, "b.seg", docs[60:], false)
	x = x.Delete([]int64{7})
	query := "beta gamma unknownword"
	all := map[int64]float64{}
	for _, r := range x.Search(query, 1000) {
		all[r.ID] = r.Score
	}
	ids := []int64{1, 3, 4, 7, 8, 22, 63, 64, 119, 120, 999}
	_, ev := x.SearchWith(query, 0, ids)
	weight := x.QueryWeight(query)
	for i, id := range ids {
		if math.Abs(ev[i].Score-all[id]) > 1e-9 {
			t.Errorf("doc %d: Evidence score %v, Search score %v", id, ev[i].Score, all[id])
		}
		var want float64
		if id != 7 && id <= 120 {
			for _, term := range []string{"beta", "gamma"} {
				n := id - 1
				if term == "beta" && n%3 == 0 || term == "gamma" && n%7 == 0 {
					want += x.QueryWeight(term) / weight
				}
			}
		}
		if math.Abs(ev[i].Coverage-want) > 1e-9 {
			t.Errorf("doc %d: coverage %v, want %v", id, ev[i].Coverage, want)
		}
	}
	// Doc 4 (beta only) must lie below Search's top 5, or the test would
	// not show that Evidence reads past it.
	if top := x.Search(query, 5); len(top) != 5 || all[4] == 0 || all[4] >= top[4].Score {
		t.Fatalf("the test corpus should put doc 4 below the top 5: %v", top)
	}
}
