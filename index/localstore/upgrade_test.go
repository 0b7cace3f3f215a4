package localstore

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// schema2Fixture copies testdata/schema2/index, an index written by the
// code at testdata/schema2/COMMIT (schema 2: commit.json, a vector
// segment, a file log), to a new folder and returns it with each live
// file's first chunk vector.
func schema2Fixture(t *testing.T) (string, map[string][]float32) {
	t.Helper()
	src := filepath.Join("testdata", "schema2")
	dir := filepath.Join(t.TempDir(), "index")
	if err := os.CopyFS(dir, os.DirFS(filepath.Join(src, "index"))); err != nil {
		t.Fatal(err)
	}
	raw, err := os.ReadFile(filepath.Join(src, "first-vectors.json"))
	if err != nil {
		t.Fatal(err)
	}
	var first map[string][]float32
	if err := json.Unmarshal(raw, &first); err != nil {
		t.Fatal(err)
	}
	return dir, first
}

func readSchema(t *testing.T, dir, name string) int {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(dir, name))
	if err != nil {
		t.Fatal(err)
	}
	var v struct{ Schema int }
	if err := json.Unmarshal(raw, &v); err != nil {
		t.Fatal(err)
	}
	return v.Schema
}

// TestSchema2IndexRebuilt: an index written by the code of schema 2 holds
// unstemmed keyword terms; it is not served (read-only opens leave it as
// it is) and its next writer rebuilds it from the documents.
func TestSchema2IndexRebuilt(t *testing.T) {
	dir, _ := schema2Fixture(t)
	if readSchema(t, dir, VersionFile) != 2 || readSchema(t, dir, CommitFile) != 2 {
		t.Fatal("the fixture is not a schema 2 index")
	}
	before := mustRead(t, filepath.Join(dir, VersionFile))
	ro := openStoreWith(t, dir, index.Options{ReadOnly: true})
	if err := ro.OpenErr(); !errors.Is(err, index.ErrOtherVersion) {
		t.Fatalf("read-only open of schema 2: %v, want ErrOtherVersion", err)
	}
	if after := mustRead(t, filepath.Join(dir, VersionFile)); !bytes.Equal(after, before) {
		t.Fatal("a read-only open rewrote the version")
	}
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if !w.rebuilt || w.Chunks() != 0 {
		t.Fatalf("writer over a schema 2 index: rebuilt %v, %d chunks", w.rebuilt, w.Chunks())
	}
	q := putFile(t, w, rand.New(rand.NewPCG(5, 6)), "f3.md", 2)[0]
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if got := readSchema(t, dir, CommitFile); got != schema.SchemaVersion {
		t.Fatalf("commit.json schema %d after a commit, want %d", got, schema.SchemaVersion)
	}
	reopened := openStore(t, dir)
	snap := reopened.Acquire()
	paths := snap.Paths()
	snap.Release()
	if !slices.Equal(paths, []string{"f3.md"}) {
		t.Fatalf("files %v after the rebuild, want f3.md alone", paths)
	}
	if h := topHit(t, reopened, q); h.Record.Path != "f3.md" {
		t.Fatalf("%+v", h)
	}
}

// TestUnreadableSchemaRebuilt: a schema this code does not read (the
// first, or a newer one) is never served; the next writer rebuilds.
func TestUnreadableSchemaRebuilt(t *testing.T) {
	for _, n := range []int{1, 2, 3, schema.SchemaVersion + 1} {
		dir, _ := schema2Fixture(t)
		v := testVersion
		v.Schema = n
		if err := os.WriteFile(filepath.Join(dir, VersionFile), []byte(v.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if err := s.OpenErr(); !errors.Is(err, index.ErrOtherVersion) {
			t.Fatalf("schema %d: OpenErr %v, want ErrOtherVersion", n, err)
		}
		snap := s.Acquire()
		served := snap.Chunks()
		snap.Release()
		if served != 0 {
			t.Fatalf("schema %d: %d chunks served", n, served)
		}
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if !w.rebuilt || w.Chunks() != 0 {
			t.Fatalf("schema %d: rebuilt %v with %d chunks", n, w.rebuilt, w.Chunks())
		}
		w.Close()
	}
}
