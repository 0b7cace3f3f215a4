package engine

import (
	"cmp"
	"context"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// TestSwitchingModelsRebuilds indexes with the default model (no --model:
// the q8 file), then opens the same index with each other model and back:
// each switch re-embeds every file (vectors of two models never mix, even
// of another dimension: bge-zh has 512) and search still finds the file
// that holds the query's sentence.
func TestSwitchingModelsRebuilds(t *testing.T) { eachBackend(t, testSwitchingModelsRebuilds) }

func testSwitchingModelsRebuilds(t *testing.T, store index.StoreURL) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, corpus)
	// "": the default, which must be the q8 file.
	steps := []string{"", model.FP32Name, model.Int8Name, "", "bge-small-en-v1.5-int8", "bge-small-zh-v1.5-int8", model.FP32Name}
	for i, name := range steps {
		e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: idx, Model: name})
		want := cmp.Or(name, model.Q8Name)
		if m := e.Status().Model; !strings.HasPrefix(m, want+" sha256:") {
			t.Fatalf("step %d: status model %q, want %s", i, m, want)
		}
		name = want
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

// TestModelDirWithModelJSON runs a model the user describes in model.json
// (here bge-small-en-v1.5-int8's files under another name): its name is
// the index's model, a change of pooling in model.json rebuilds the index,
// and a bad model.json is a clear error.
func TestModelDirWithModelJSON(t *testing.T) {
	bge, err := model.Lookup("bge-small-en-v1.5-int8")
	if err != nil {
		t.Fatal(err)
	}
	files, err := bge.Locate("")
	if err != nil {
		t.Fatalf("%v (run make models)", err)
	}
	dir := t.TempDir()
	for src, dst := range map[string]string{files.ONNX: model.ONNXName, files.Tokenizer: model.TokenizerName} {
		if err := os.Symlink(src, filepath.Join(dir, dst)); err != nil {
			t.Fatal(err)
		}
	}
	writeJSON := func(s string) {
		if err := os.WriteFile(filepath.Join(dir, model.SpecName), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, corpus)
	var models []string
	for _, pooling := range []string{"cls", "mean"} {
		writeJSON(`{"name": "my-bge", "pooling": "` + pooling + `", "max_length": 512,
			"query_prefix": "Represent this sentence for searching relevant passages: ", "lowercase": true}`)
		e := newEngine(t, Config{DataFolder: data, IndexFolder: idx, ModelDir: dir})
		m := e.Status().Model
		if !strings.HasPrefix(m, "my-bge sha256:") || !strings.Contains(m, " spec:") {
			t.Fatalf("%s: status model %q", pooling, m)
		}
		models = append(models, m)
		checkCounts(t, pooling, reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
		if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
			t.Fatalf("%s: top = %+v", pooling, r)
		}
		e.Close()
	}
	if models[0] == models[1] {
		t.Errorf("pooling changed but the index model stayed %q", models[0])
	}

	for bad, want := range map[string]string{
		`{"pooling": "max", "max_length": 512}`:                     `pooling "max" is not one of "mean", "cls"`,
		`{"pooling": "cls", "max_lenght": 512}`:                     `unknown field "max_lenght"`,
		`{"pooling": "cls", "max_length": 512, "lowercase": false}`: "expects lowercase=false",
	} {
		writeJSON(bad)
		e, err := New(Config{DataFolder: data, IndexFolder: t.TempDir(), ModelDir: dir, NoInitialReindex: true})
		if err != nil {
			t.Fatal(err)
		}
		e.Start(context.Background())
		err = e.WaitModel(context.Background())
		e.Close()
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", bad, err, want)
		}
	}
}

// fp32 all-MiniLM-L6-v2's null cosine is the search's reference scale, and
// the default model (q8) measured the same, so both score with their raw
// cosines and a search at the defaults behaves as with fp32; every bge
// model's null is far above it and is mapped.
func TestModelNullIsReference(t *testing.T) {
	for _, name := range []string{model.FP32Name, ""} {
		m, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := isearch.NullCosine(m.Null); got != isearch.ReferenceNull {
			t.Errorf("%s null %+v, search reference %+v", m.Name, got, isearch.ReferenceNull)
		}
	}
	for _, name := range []string{"bge-small-en-v1.5", "bge-small-en-v1.5-int8", "bge-small-zh-v1.5-int8"} {
		bge, err := model.Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if bge.Null.Mean < 0.3 || bge.Null.Spread <= 0 {
			t.Errorf("%s null %+v not measured", name, bge.Null)
		}
	}
}

// A missing ONNX Runtime is said on one line, with its fix once.
func TestMissingRuntimeFixOnce(t *testing.T) {
	e, err := New(Config{DataFolder: t.TempDir(), IndexFolder: t.TempDir(), ORTLibrary: filepath.Join(t.TempDir(), "libonnxruntime.so"), NoInitialReindex: true})
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	defer e.Close()
	err = e.WaitModel(context.Background())
	if err == nil || strings.Count(err.Error(), "make setup") != 1 || strings.Contains(err.Error(), "\n") || !strings.Contains(err.Error(), "not found") {
		t.Fatalf("missing runtime: %q, want one line naming the fix once", err)
	}
}

// The default model embeds passages with its int8 file and queries with
// its fp32 original: a query's vector is the fp32 model's, not q8's.
func TestQueriesEmbeddedByFP32(t *testing.T) {
	e := newEngine(t, Config{DataFolder: t.TempDir(), IndexFolder: t.TempDir()})
	if !strings.HasPrefix(e.model, model.Q8Name+" ") || e.queryModel != model.FP32Name {
		t.Fatalf("passages by %s, queries by %s; want %s and %s", e.model, e.queryModel, model.Q8Name, model.FP32Name)
	}
	fp32, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer fp32.Close()
	const q = "a present from a vendor"
	want, err := fp32.EmbedQuery(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	got, err := e.embedQuery(q)
	if err != nil {
		t.Fatal(err)
	}
	q8, err := e.embedder.EmbedQuery(nil, q)
	if err != nil {
		t.Fatal(err)
	}
	if d := maxAbsDiff(got, want); d > 1e-6 {
		t.Errorf("the query's vector is %g from fp32's", d)
	}
	// The check can tell the two apart.
	if d := maxAbsDiff(q8, want); d < 1e-4 {
		t.Errorf("q8's query vector is only %g from fp32's", d)
	}
}

// Without fp32 in the cache, a q8 file found in place (given by hand with
// --model-dir, or unpacked into the cache from the release's asset)
// embeds its own queries, fetches nothing, and search works.
func TestQueriesByQ8WithoutFP32(t *testing.T) {
	q8, err := model.Lookup(model.Q8Name)
	if err != nil {
		t.Fatal(err)
	}
	real := q8.Dir() // the real cache's, before the cache moves
	ort, err := model.ORTLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	var asked atomic.Int64
	hub := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		asked.Add(1)
		http.NotFound(w, r)
	}))
	defer hub.Close()
	prev := hubOf
	hubOf = func(m model.Model) model.Source { s := m.Hub; s.BaseURL = hub.URL; return s }
	t.Cleanup(func() { hubOf = prev })
	for _, c := range []string{"model-dir", "cache"} {
		t.Run(c, func(t *testing.T) {
			cache := t.TempDir()
			t.Setenv(cachedir.Env, cache)
			t.Setenv(model.EnvModelDir, "")
			cfg := Config{IndexFolder: t.TempDir(), ORTLibrary: ort, DataFolder: t.TempDir()}
			if c == "model-dir" {
				cfg.ModelDir = real
			} else {
				os.MkdirAll(filepath.Join(cache, "models"), 0o755)
				if err := os.Symlink(real, filepath.Join(cache, "models", model.Q8Name)); err != nil {
					t.Fatal(err)
				}
			}
			writeCorpus(t, cfg.DataFolder, corpus)
			e := newEngine(t, cfg)
			if e.queries != nil || e.queryModel != model.Q8Name {
				t.Fatalf("queries by %s (%v), want %s's own", e.queryModel, e.queries, model.Q8Name)
			}
			reindex(t, e, ReindexRequest{})
			if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
				t.Errorf("top = %+v, want notes/sourdough.md", r)
			}
			if n := asked.Load(); n != 0 {
				t.Errorf("%d requests to the hub", n)
			}
		})
	}
}

func maxAbsDiff(a, b []float32) float64 {
	if len(a) != len(b) {
		return math.Inf(1)
	}
	var d float64
	for i := range a {
		d = max(d, math.Abs(float64(a[i]-b[i])))
	}
	return d
}
