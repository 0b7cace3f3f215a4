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
	weight := queryWeight(x, query)
	for i, id := range ids {
		if math.Abs(ev[i].Score-all[id]) > 1e-9 {
			t.Errorf("doc %d: Evidence score %v, Search score %v", id, ev[i].Score, all[id])
		}
		var want float64
		if id != 7 && id <= 120 {
			for _, term := range []string{"beta", "gamma"} {
				n := id - 1
				if term == "beta" && n%3 == 0 || term == "gamma" && n%7 == 0 {
					want += queryWeight(x, term) / weight
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

// Evidence and results of a query with TrackTerms say which of its terms a
// document holds, in the order Query.Terms lists them, across segments and
// after a deletion; other queries' do not.
func TestEvidenceTerms(t *testing.T) {
	dir := t.TempDir()
	var docs []Doc
	for i := range int64(40) {
		body := "alpha text"
		if i%3 == 0 {
			body += " beta"
		}
		if i%5 == 0 {
			body += " gamma"
		}
		docs = append(docs, Doc{ID: i + 1, Name: fmt.Sprintf("doc%d", i), Body: body})
	}
	x := mustAdd(t, Empty(), dir, "a.seg", docs[:20], false)
	x = mustAdd(t, x, dir, "b.seg", docs[20:], false)
	x = x.Delete([]int64{16})
	q := x.Query("gamma unknownword beta")
	q.TrackTerms()
	terms, absent, idfMax := q.Terms()
	if len(terms) != 2 || absent != 1 || idfMax <= 0 {
		t.Fatalf("terms %v, absent %v, idfMax %v", terms, absent, idfMax)
	}
	bit := map[string]uint64{}
	for i, term := range terms {
		bit[term.Text] = 1 << i
		if term.QTF != 1 || term.IDF <= 0 || term.IDF > idfMax {
			t.Errorf("term %+v", term)
		}
	}
	want := func(id int64) uint64 {
		var m uint64
		if n := id - 1; id != 16 && id <= 40 {
			if n%3 == 0 {
				m |= bit["beta"]
			}
			if n%5 == 0 {
				m |= bit["gamma"]
			}
		}
		return m
	}
	ids := []int64{1, 4, 6, 16, 21, 31, 2, 99}
	res, ev := q.Search(1000, ids)
	for i, id := range ids {
		if ev[i].Terms != want(id) {
			t.Errorf("doc %d: evidence terms %b, want %b", id, ev[i].Terms, want(id))
		}
	}
	if len(res) == 0 {
		t.Fatal("no results")
	}
	for _, r := range res {
		if r.Terms == 0 || r.Terms != want(r.ID) {
			t.Errorf("result %d: terms %b, want %b", r.ID, r.Terms, want(r.ID))
		}
	}
	// Without TrackTerms a search does not track them.
	plain, ev := x.Query("gamma unknownword beta").Search(1000, ids)
	for _, r := range plain {
		if r.Terms != 0 {
			t.Errorf("result %d without TrackTerms: terms %b", r.ID, r.Terms)
		}
	}
	for i, e := range ev {
		if e.Terms != 0 {
			t.Errorf("doc %d without TrackTerms: terms %b", ids[i], e.Terms)
		}
	}
}
