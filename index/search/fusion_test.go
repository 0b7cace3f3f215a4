package search

import (
	"reflect"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/prose"
)

func TestParseFusion(t *testing.T) {
	f, p, err := parseFusion("specific:h=0.5,p=2")
	if err != nil || f != FusionSpecific || p.get("h", 0) != 0.5 || p.get("p", 1) != 2 || p.get("g", 1) != 1 {
		t.Fatalf("parseFusion = %q %v %v", f, p, err)
	}
	for _, bad := range []string{"nope", "share:h", "share:h=x"} {
		if _, _, err := parseFusion(Fusion(bad)); err == nil {
			t.Errorf("parseFusion(%q) accepted", bad)
		}
	}
}

// With a diversity, one file's passages past the free ones give way to
// other files', scores still never rise down the list, every passage is
// still there further down, and top_k only appends.
func TestDiversityKeepsEveryPassageAndPrefix(t *testing.T) {
	a := records("a.txt", prose.Random(21, 60), nil)
	b := records("b.txt", prose.Random(22, 8), nil)
	for i := range b {
		b[i].ID += 1000
	}
	var cands []candidate
	for i := 0; i < len(a); i += 3 { // a's passages first, far apart so none merge
		cands = append(cands, candidate{rec: a[i], score: 0.9 - float64(len(cands))*0.01})
	}
	for i := 0; i < len(b); i += 3 {
		cands = append(cands, candidate{rec: b[i], score: 0.5 - float64(i)*0.01})
	}
	div := diversity{free: 1, step: 1}
	all := diversePassages(slices.Clone(cands), 100, 0.2, div, false)
	plain := passages(slices.Clone(cands), 100, 0.2)
	if len(all) != len(plain) {
		t.Fatalf("%d passages with diversity, %d without", len(all), len(plain))
	}
	if all[0].Path != "a.txt" || all[1].Path != "b.txt" {
		t.Errorf("first two from %s and %s; want a.txt then b.txt", all[0].Path, all[1].Path)
	}
	for i := 1; i < len(all); i++ {
		if all[i].Score > all[i-1].Score {
			t.Errorf("score rises at %d: %v > %v", i, all[i].Score, all[i-1].Score)
		}
	}
	for k := 1; k < len(all); k++ {
		if got := diversePassages(slices.Clone(cands), k, 0.2, div, false); !reflect.DeepEqual(got, all[:k]) {
			t.Fatalf("top_k %d is not the prefix of the whole list", k)
		}
	}
}
