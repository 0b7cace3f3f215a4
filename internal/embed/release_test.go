package embed

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// TestReleaseReloads: after Release the session is gone, and the next call
// creates it again and embeds exactly as before.
func TestReleaseReloads(t *testing.T) {
	var reloads atomic.Int32
	e, err := New(Config{Threads: 1, Reloaded: func(time.Duration) { reloads.Add(1) }})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	ts := texts(shortGolden(t))[:4]
	want, err := e.Embed(nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(); err != nil {
		t.Errorf("second Release: %v", err)
	}
	if e.Loaded() {
		t.Error("Loaded after Release")
	}
	if e.Loads() != 1 || reloads.Load() != 0 {
		t.Errorf("Release alone loaded: Loads %d, Reloaded called %d times", e.Loads(), reloads.Load())
	}
	got, err := e.Embed(nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	if !e.Loaded() || e.Loads() != 2 || reloads.Load() != 1 {
		t.Errorf("after the next call: Loaded %v, Loads %d, Reloaded %d; want true, 2, 1", e.Loaded(), e.Loads(), reloads.Load())
	}
	for i := range ts {
		if c := cosine(got[i*Dim:(i+1)*Dim], want[i*Dim:(i+1)*Dim]); c < 0.99999 {
			t.Errorf("text %d: cosine %v with the vector before Release", i, c)
		}
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Release(); err != nil {
		t.Errorf("Release after Close: %v", err)
	}
	if _, err := e.EmbedQuery(nil, "after close"); err == nil {
		t.Error("a call after Close succeeded: Release must not reopen a closed embedder")
	}
}

// TestReleaseDuringCalls releases over and over while two goroutines
// embed: every call succeeds with the vector of a steady session.
func TestReleaseDuringCalls(t *testing.T) {
	e, err := New(Config{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	query := "restore the database from last night's backup"
	want, err := e.EmbedQuery(nil, query)
	if err != nil {
		t.Fatal(err)
	}
	testutil.WhileRunning(func() {
		var callers sync.WaitGroup
		for g := range 2 {
			callers.Go(func() {
				var v []float32
				for i := range 10 {
					var err error
					if v, err = e.EmbedQuery(v[:0], query); err != nil {
						t.Errorf("caller %d call %d: %v", g, i, err)
						return
					}
					if c := cosine(v, want); c < 0.99999 {
						t.Errorf("caller %d call %d: cosine %v", g, i, c)
					}
				}
			})
		}
		callers.Wait()
	}, func() {
		if err := e.Release(); err != nil {
			t.Error(err)
		}
	})
	if e.Loads() < 2 {
		t.Errorf("Loads %d: the releases never reached a call", e.Loads())
	}
}

// TestReleaseRefusesChangedModel: a model file replaced while released is
// not loaded again (its vectors would not match those already indexed).
func TestReleaseRefusesChangedModel(t *testing.T) {
	files, err := model.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(files.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	onnx := filepath.Join(t.TempDir(), "model.onnx")
	if err := os.WriteFile(onnx, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	e, err := New(Config{ModelPath: onnx, TokenizerPath: files.Tokenizer, Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	later := time.Now().Add(time.Hour)
	if err := os.Chtimes(onnx, later, later); err != nil {
		t.Fatal(err)
	}
	_, err = e.EmbedQuery(nil, "after the model changed")
	if err == nil || !strings.Contains(err.Error(), "changed since it was first loaded") {
		t.Fatalf("EmbedQuery after the model file changed: %v, want a refusal", err)
	}
	if e.Loaded() {
		t.Error("the changed model was loaded")
	}
}
