package engine

import (
	"context"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/stages/model"
)

// TestSwitchingModelsRebuilds indexes with the fp32 model, then opens the
// same index with the int8 model and back: each switch re-embeds every
// file (vectors of two models never mix) and search still finds the file
// that holds the query's sentence.
func TestSwitchingModelsRebuilds(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, corpus)
	steps := []string{model.ModelName, model.Int8Name, model.ModelName}
	for i, name := range steps {
		e := newEngine(t, Config{DataFolder: data, IndexFolder: idx, Model: name})
		if m := e.Status().Model; !strings.HasPrefix(m, name+" sha256:") {
			t.Fatalf("step %d: status model %q, want %s", i, m, name)
		}
		checkCounts(t, name, reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
		if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" || r.Score <= 0.2 || r.Score > 1.001 {
			t.Fatalf("%s: top = %+v", name, r)
		}
		checkCounts(t, name+" no-op", reindex(t, e, ReindexRequest{}), 0, 0, 0, 0, 4)
		e.Close()
	}
}

func TestUnknownModelIsAClearError(t *testing.T) {
	e, err := New(Config{DataFolder: t.TempDir(), Model: "MiniLM-fp8", NoInitialReindex: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	defer e.Close()
	if err := e.WaitModel(context.Background()); err == nil || !strings.Contains(err.Error(), `unknown model "MiniLM-fp8"`) {
		t.Fatalf("WaitModel = %v", err)
	}
}
