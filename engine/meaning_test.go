package engine

import (
	"context"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// smallHandbook is a folder of a few short policy files whose words a
// user's question often does not share: singular against plural, or a
// paraphrase.
var smallHandbook = map[string]string{
	"it.md":       "Printers on each floor use badge release printing.",
	"conduct.md":  "Gifts from suppliers worth more than 50 euros must be declared to your manager and recorded in the gifts register.",
	"leave.md":    "Sick days are paid in full for the first ten working days of each calendar year; bring a doctor's note after three days in a row.",
	"expenses.md": "Claim taxis, trains and hotel nights within thirty days through the finance portal, with a scan of every receipt attached.",
}

// TestMeaningWithoutSharedWords: a question whose words the folder lacks
// (printer against Printers, a paraphrase sharing no word with its file)
// finds its file first at the default threshold in hybrid and dense mode,
// and keyword mode finds the inflected word; an off-topic question still
// returns nothing in every mode. Before, the folder's missing words
// multiplied every score by 0.
func TestMeaningWithoutSharedWords(t *testing.T) { eachBackend(t, testMeaningWithoutSharedWords) }

func testMeaningWithoutSharedWords(t *testing.T, store index.StoreURL) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, smallHandbook)
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: idx})
	if res := reindex(t, e, ReindexRequest{}); res.FilesAdded != len(smallHandbook) || res.FilesFailed > 0 {
		t.Fatalf("reindex: %+v", res)
	}
	e.Close()
	questions := map[string]string{
		"printer":                              "it.md",
		"gift from a supplier":                 "conduct.md",
		"can I accept a present from a vendor": "conduct.md",
		"Do I get paid when I am ill?":         "leave.md",
	}
	offTopic := []string{"How many eggs go into a classic tiramisu?", "asdkjh qwpoeiru"}
	for _, mode := range []isearch.Mode{isearch.Hybrid, isearch.Dense, isearch.Keyword} {
		m := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: idx, ReadOnly: true, SearchMode: mode})
		ask := func(q string) []isearch.Result {
			t.Helper()
			res, err := m.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: isearch.DefaultScoreThreshold, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		for q, want := range questions {
			if mode == isearch.Keyword && q != "printer" && q != "gift from a supplier" {
				continue // shares no word with its file: keyword mode cannot know
			}
			if res := ask(q); len(res) == 0 || res[0].Path != want {
				t.Errorf("%s: %q found %+v, want %s first", mode, q, res, want)
			}
		}
		for _, q := range offTopic {
			if res := ask(q); len(res) > 0 {
				t.Errorf("%s: off-topic %q returned %s at %.3f (%+v)", mode, q, res[0].Path, res[0].Score, *res[0].Explain)
			}
		}
		m.Close()
	}
}

// TestDenseOrderIsCosineOrder: in dense mode the results come in the order
// of their cosine with the query, every one of them scored, whether or
// not the folder holds the query's words.
func TestDenseOrderIsCosineOrder(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, smallHandbook)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: idx, SearchMode: isearch.Dense})
	reindex(t, e, ReindexRequest{})
	for _, q := range []string{"printer", "can I accept a present from a vendor", "zzqqxx flurbo", "receipts for a hotel"} {
		res, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 10, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		if len(res) != len(smallHandbook) {
			t.Fatalf("%q: %d results at threshold 0, want every file", q, len(res))
		}
		for i, r := range res {
			if r.Score <= 1e-6 && r.Explain.Cosine > 0.1 {
				t.Errorf("%q: %s of cosine %.3f scores %v", q, r.Path, r.Explain.Cosine, r.Score)
			}
			if i > 0 && r.Explain.Cosine > res[i-1].Explain.Cosine {
				t.Errorf("%q: %s (cosine %.4f) ranked below %s (%.4f)", q, res[i-1].Path, res[i-1].Explain.Cosine, r.Path, r.Explain.Cosine)
			}
		}
	}
}
