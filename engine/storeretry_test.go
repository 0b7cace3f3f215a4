package engine

import (
	"context"
	"log/slog"
	"os"
	"strings"
	"testing"
	"time"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// A server started while its database is down tells search and reindex
// why and when it tries again, and serves once the database is back: the
// store connection is retried, not computed once.
// startFailing starts a server's engine (with the initial reindex) whose
// load fails with an error holding cause, tried again: it says when.
func startFailing(t *testing.T, cfg Config, cause string) *Engine {
	t.Helper()
	cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError}))
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	t.Cleanup(func() { e.Close() })
	err = e.WaitModel(context.Background())
	if err == nil || !strings.Contains(err.Error(), cause) || !strings.Contains(err.Error(), "trying again at") {
		t.Fatalf("load failing: %v, want %q and when it is tried again", err, cause)
	}
	return e
}

func TestStoreDownAtStartRecovers(t *testing.T) {
	srv, err := pgtest.Start() // its own: this test stops it
	if err != nil {
		t.Fatal(err)
	}
	defer srv.Stop()
	if err := srv.Pause(); err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := startFailing(t, Config{DataFolder: data, IndexFolder: t.TempDir(), Store: storeURL(t, srv.DSN("postgres")+"&connect_timeout=2")}, "open index")
	ctx := context.Background()
	if _, err := e.Search(ctx, isearch.Request{Query: "bread", TopK: 3}); err == nil || !strings.Contains(err.Error(), "trying again") {
		t.Fatalf("search while the store is down: %v", err)
	}
	if err := srv.Resume(); err != nil {
		t.Fatal(err)
	}
	back := time.Now()
	for {
		err := e.WaitModel(ctx)
		if err == nil {
			break
		}
		if time.Since(back) > 2*time.Minute {
			t.Fatalf("still not serving after the database came back: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
	t.Logf("serving %s after the database came back", time.Since(back).Round(time.Millisecond))
	// The start-up indexing runs once loaded; a reindex waits for it.
	if res, err := e.Reindex(ctx, ReindexRequest{}, nil); err != nil || res.ChunksTotal == 0 {
		t.Fatalf("reindex after recovery: %+v %v", res, err)
	}
	if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
		t.Fatalf("top = %+v", r)
	}
}
