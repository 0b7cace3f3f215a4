package engine

import (
	"context"
	"errors"
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
	srv := serveModel(t, http.StatusServiceUnavailable, model.FP32Name)
	e := startFailing(t, Config{DataFolder: t.TempDir(), IndexFolder: t.TempDir(), ORTLibrary: srv.ort, Model: model.FP32Name}, "download model")
	ctx := context.Background()
	if _, err := e.Reindex(ctx, ReindexRequest{}, nil); err == nil || !strings.Contains(err.Error(), "trying again") {
		t.Fatalf("reindex while the download fails: %v", err)
	}
	srv.up.Store(true)
	waitLoaded(t, e)
	if srv.served.Load() == 0 {
		t.Fatal("the model was not downloaded from the local server")
	}
}

// TestBuiltModelDownloadedOnFirstRun: with an empty cache,
// --model all-MiniLM-L6-v2-q8 downloads both files from the project's
// release and its query model's from the hub (here a local server holding
// the real cache's files at their sources' paths) and then indexes and
// finds a document. While the
// release is not there (404: a hash never published) the load is tried
// again and its fix names the offline routes and the fp32 fallback.
func TestBuiltModelDownloadedOnFirstRun(t *testing.T) {
	m, err := model.Lookup(model.Q8Name)
	if err != nil {
		t.Fatal(err)
	}
	srv := serveModel(t, http.StatusNotFound, m.Name, model.FP32Name)
	cache := cachedir.Path()
	data := t.TempDir()
	writeCorpus(t, data, corpus)

	e := startFailing(t, Config{DataFolder: data, IndexFolder: t.TempDir(), ORTLibrary: srv.ort, Model: model.Q8Name}, "404")
	var le *LoadError
	if err := e.WaitModel(context.Background()); !errors.As(err, &le) {
		t.Fatalf("WaitModel = %v, want a LoadError", err)
	}
	for _, want := range []string{
		"https://github.com/micro-rag/micro-rag-mcp/releases/tag/model-" + model.Q8Name + "-",
		"into " + filepath.Join(cache, "models", model.Q8Name) + "/",
		"tar -xzf micro-rag-mcp-VERSION-model-" + model.Q8Name + ".tar.gz -C " + cache,
		"make models",
		"--model all-MiniLM-L6-v2 ",
	} {
		if !strings.Contains(le.Fix, want) {
			t.Errorf("the fix %q lacks %q", le.Fix, want)
		}
	}

	srv.up.Store(true)
	waitLoaded(t, e)
	// The q8 file and its query model, fp32, from the hub.
	if n := srv.served.Load(); n != 4 {
		t.Errorf("%d files served, want model.onnx and tokenizer.json of each model once", n)
	}
	for _, f := range m.Hub.Files {
		sum, err := model.FileSHA256(filepath.Join(cache, "models", model.Q8Name, f.Local))
		if err != nil || sum != f.SHA256 {
			t.Errorf("%s in the cache: sha256 %s (%v), want %s", f.Local, sum, err, f.SHA256)
		}
	}
	if e.queryModel != model.FP32Name || e.queries == nil {
		t.Errorf("queries embedded by %s, want %s", e.queryModel, model.FP32Name)
	}
	if _, err := model.FilesIn(filepath.Join(cache, "models", model.FP32Name)); err != nil {
		t.Errorf("the query model is not in the cache: %v", err)
	}
	// After the initial reindex (a reindex waits for it), all four files.
	if res := reindex(t, e, ReindexRequest{}); res.ChunksTotal != 4 {
		t.Errorf("reindex: %+v, want 4 chunks", res)
	}
	if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
		t.Errorf("top = %+v, want notes/sourdough.md", r)
	}
}

// modelServer stands in for the place a model is downloaded from.
type modelServer struct {
	up     atomic.Bool  // serving; else every request gets the down status
	served atomic.Int64 // files served
	ort    string       // the ONNX Runtime library, found before the cache moved
}

// serveModel serves the named model's files from the real cache at the
// paths of its source, points hubOf at that server and moves the cache to
// an empty folder. Until up, it answers down (503: no network; 404: a
// release not published).
func serveModel(t *testing.T, down int, names ...string) *modelServer {
	t.Helper()
	var models []model.Model
	var cached []string // each model's folder, before the cache moves to an empty one
	for _, name := range names {
		m, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		models, cached = append(models, m), append(cached, m.Dir())
	}
	ms := &modelServer{}
	var err error
	if ms.ort, err = model.ORTLibrary(""); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !ms.up.Load() {
			http.Error(w, http.StatusText(down), down)
			return
		}
		for i, m := range models {
			for _, f := range m.Hub.Files {
				if r.URL.Path == strings.TrimPrefix(m.Hub.URL(f), m.Hub.BaseURL) {
					ms.served.Add(1)
					http.ServeFile(w, r, filepath.Join(cached[i], f.Local))
					return
				}
			}
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(srv.Close)
	prev := hubOf
	hubOf = func(m model.Model) model.Source { s := m.Hub; s.BaseURL = srv.URL; return s }
	t.Cleanup(func() { hubOf = prev })
	t.Setenv(cachedir.Env, t.TempDir())
	t.Setenv(model.EnvModelDir, "")
	return ms
}

// waitLoaded waits for e's model to load once its download can succeed.
func waitLoaded(t *testing.T, e *Engine) {
	t.Helper()
	ctx := context.Background()
	deadline := time.Now().Add(3 * time.Minute)
	for e.WaitModel(ctx) != nil {
		if time.Now().After(deadline) {
			t.Fatalf("not loaded once the download could succeed: %v", e.WaitModel(ctx))
		}
		time.Sleep(200 * time.Millisecond)
	}
}
