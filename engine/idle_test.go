package engine

import (
	"context"
	"sync"
	"testing"
	"time"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// TestIdleReleaseWaitsForWork drives the idle release by hand (the period
// is an hour, so the engine's own timer never fires): nothing is released
// while work runs or before the period has passed, a release happens once
// per idle spell, and the search or run after it loads the model it needs
// again (a search the query model, a run the passage model) and answers
// as before, also while releases race with searches.
func TestIdleReleaseWaitsForWork(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: t.TempDir(), IdleRelease: time.Hour})
	reindex(t, e, ReindexRequest{})
	const q = "wild yeast fed with flour"
	want := search(t, e, q)
	if len(want) == 0 {
		t.Fatal("no results before any release")
	}
	idleLater := func() time.Time { return time.Now().Add(2 * time.Hour) }

	done := e.working() // a search or run in flight
	e.releaseIfIdle(idleLater())
	if e.IdleReleases() != 0 || !e.embedder.Loaded() {
		t.Fatal("released while work ran")
	}
	done()
	e.releaseIfIdle(time.Now())
	if e.IdleReleases() != 0 {
		t.Fatal("released before the idle period passed")
	}
	e.releaseIfIdle(idleLater())
	e.releaseIfIdle(idleLater())
	// The default model's queries have a model of their own (fp32).
	queries := e.queryEmbedder()
	if queries == e.embedder {
		t.Fatal("the default model embeds its own queries")
	}
	if e.IdleReleases() != 1 || e.embedder.Loaded() || queries.Loaded() {
		t.Fatalf("after an idle period: %d releases, models loaded %v and %v; want 1, false and false", e.IdleReleases(), e.embedder.Loaded(), queries.Loaded())
	}

	// A search loads the query model only.
	if got := search(t, e, q); !sameTop(got, want) {
		t.Errorf("search after the release: %+v, want %+v", got, want)
	}
	if !queries.Loaded() || queries.Loads() != 2 || e.embedder.Loaded() || e.embedder.Loads() != 1 {
		t.Errorf("after the search: query model loaded %v, %d loads, passage model %v, %d loads; want true, 2, false, 1",
			queries.Loaded(), queries.Loads(), e.embedder.Loaded(), e.embedder.Loads())
	}

	e.releaseIfIdle(idleLater())
	writeCorpus(t, data, map[string]string{"owls.md": "Barn owls swallow voles whole and cough up pellets of fur and bone."})
	checkCounts(t, "reindex after a release", reindex(t, e, ReindexRequest{}), 1, 0, 0, 0, 5)
	if e.IdleReleases() != 2 || e.embedder.Loads() != 2 {
		t.Errorf("reindex after the second release: %d releases, %d loads; want 2, 2", e.IdleReleases(), e.embedder.Loads())
	}

	// Searches racing with releases: each waits for a release under way,
	// then loads the model; all answer alike.
	testutil.WhileRunning(func() {
		var wg sync.WaitGroup
		for range 2 {
			wg.Go(func() {
				for range 4 {
					got, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: 0.2})
					if err != nil || !sameTop(got, want) {
						t.Errorf("search racing a release: %+v, %v", got, err)
						return
					}
				}
			})
		}
		wg.Wait()
	}, func() { e.releaseIfIdle(idleLater()) })
}

// sameTop reports whether got ranks the passages of want in its order.
func sameTop(got, want []isearch.Result) bool {
	if len(got) != len(want) {
		return false
	}
	for i := range want {
		if got[i].Path != want[i].Path || got[i].ChunkIndex != want[i].ChunkIndex {
			return false
		}
	}
	return true
}
