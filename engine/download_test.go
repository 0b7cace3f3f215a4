package engine

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// A model download that fails (no network) is tried again, and the error
// search and reindex give meanwhile says so; once the network is back the
// engine loads without a restart. The model is served from a local HTTP
// server holding the files of the real cache.
func TestModelDownloadRetried(t *testing.T) {
	// fp32: a model with a hub file, whichever model is the default.
	m, err := model.Lookup(model.FP32Name)
	if err != nil {
		t.Fatal(err)
	}
	cached := m.Dir() // before the cache moves to an empty folder
	ort, err := model.ORTLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	var up atomic.Bool
	var served atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !up.Load() {
			http.Error(w, "no network", http.StatusServiceUnavailable)
			return
		}
		for _, f := range m.Hub.Files {
			if strings.HasSuffix(r.URL.Path, "/"+f.Remote) {
				served.Add(1)
				http.ServeFile(w, r, filepath.Join(cached, f.Local))
				return
			}
		}
		http.NotFound(w, r)
	}))
	defer srv.Close()
	prev := hubOf
	hubOf = func(m model.Model) model.Source { s := m.Hub; s.BaseURL = srv.URL; return s }
	t.Cleanup(func() { hubOf = prev })
	t.Setenv(cachedir.Env, t.TempDir())
	t.Setenv(model.EnvModelDir, "")

	e := startFailing(t, Config{DataFolder: t.TempDir(), IndexFolder: t.TempDir(), ORTLibrary: ort, Model: m.Name}, "download model")
	ctx := context.Background()
	if _, err := e.Reindex(ctx, ReindexRequest{}, nil); err == nil || !strings.Contains(err.Error(), "trying again") {
		t.Fatalf("reindex while the download fails: %v", err)
	}
	up.Store(true)
	deadline := time.Now().Add(3 * time.Minute)
	for e.WaitModel(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not loaded after the network came back: %v", e.WaitModel(ctx))
		}
		time.Sleep(200 * time.Millisecond)
	}
	if served.Load() == 0 {
		t.Fatal("the model was not downloaded from the local server")
	}
}
