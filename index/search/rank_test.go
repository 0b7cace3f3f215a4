package search

import (
	"fmt"
	"reflect"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/internal/prose"
)

// A keyword list that holds every matching chunk gives the dense hits the
// same evidence as another pass over the postings would: what lets a
// widened search skip that pass.
func TestEvidenceFromCompleteList(t *testing.T) {
	var docs []lexical.Doc
	for i := range 40 {
		docs = append(docs, lexical.Doc{ID: int64(i + 1), Name: fmt.Sprintf("n%d.txt", i), Body: prose.Random(uint64(i), 1)})
	}
	x, _, err := lexical.Empty().Add("t.seg", docs, false)
	if err != nil {
		t.Fatal(err)
	}
	for _, text := range []string{"QX-7731-B offsets", "naïve émigré", "データ", "no such words"} {
		q := x.Query(text)
		list, _ := q.Search(1000, nil)
		if len(list) >= 1000 {
			t.Fatalf("%q: the list is not complete", text)
		}
		ids := []int64{3, 1, 40, 17, 99}
		_, want := q.Search(1000, ids)
		if got := evidenceOf(list, ids); !reflect.DeepEqual(got, want) {
			t.Errorf("%q: evidence %v, a pass says %v", text, got, want)
		}
	}
}
