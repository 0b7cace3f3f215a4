package index

import (
	"bytes"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

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

// checkFixtureServed checks s serves exactly the fixture's files, each
// found by its first chunk's vector.
func checkFixtureServed(t *testing.T, s *Store, first map[string][]float32) {
	t.Helper()
	if err := s.OpenErr(); err != nil {
		t.Fatalf("schema 2 index not served: %v", err)
	}
	snap := s.Acquire()
	paths := snap.Paths()
	snap.Release()
	if !slices.Equal(paths, []string{"f0.md", "f1.md"}) {
		t.Fatalf("files %v, want f0.md f1.md", paths)
	}
	for path, q := range first {
		if h := topHit(t, s, q); h.Record.Path != path || h.Score < 0.9999 {
			t.Fatalf("%s's first chunk finds %+v", path, h)
		}
	}
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

// TestSchema2IndexUpgraded: an index of the previous schema, written by the
// code of that time, is served as it is (read-only too, without a write),
// and its next writer marks it with the current schema without rebuilding.
func TestSchema2IndexUpgraded(t *testing.T) {
	dir, first := schema2Fixture(t)
	if readSchema(t, dir, VersionFile) != 2 || readSchema(t, dir, CommitFile) != 2 || schema.SchemaVersion != 3 {
		t.Fatal("the fixture is not a schema 2 index, or the schema moved again: regenerate and extend this test")
	}
	before, err := os.ReadFile(filepath.Join(dir, VersionFile))
	if err != nil {
		t.Fatal(err)
	}
	ro := openStoreWith(t, dir, Options{ReadOnly: true})
	checkFixtureServed(t, ro, first)
	if after := mustRead(t, filepath.Join(dir, VersionFile)); !bytes.Equal(after, before) {
		t.Fatal("a read-only open rewrote the version")
	}
	s := openStore(t, dir)
	checkFixtureServed(t, s, first)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w.Rebuilt() || w.Files() != 2 || w.Chunks() != 6 {
		t.Fatalf("writer over the upgraded index: rebuilt %v, %d files, %d chunks", w.Rebuilt(), w.Files(), w.Chunks())
	}
	if got := readSchema(t, dir, VersionFile); got != schema.SchemaVersion {
		t.Fatalf("version schema %d after Begin, want %d", got, schema.SchemaVersion)
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
	if h := topHit(t, reopened, q); h.Record.Path != "f3.md" {
		t.Fatalf("%+v", h)
	}
	if h := topHit(t, reopened, first["f0.md"]); h.Record.Path != "f0.md" {
		t.Fatalf("%+v", h)
	}
}

// TestUnreadableSchemaRebuilt: a schema this code does not read (the
// first, or a newer one) is never served; the next writer rebuilds.
func TestUnreadableSchemaRebuilt(t *testing.T) {
	for _, n := range []int{1, schema.SchemaVersion + 1} {
		dir, _ := schema2Fixture(t)
		v := testVersion
		v.Schema = n
		if err := os.WriteFile(filepath.Join(dir, VersionFile), []byte(v.String()+"\n"), 0o600); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		if err := s.OpenErr(); !errors.Is(err, ErrOtherVersion) {
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
		if !w.Rebuilt() || w.Chunks() != 0 {
			t.Fatalf("schema %d: rebuilt %v with %d chunks", n, w.Rebuilt(), w.Chunks())
		}
		w.Close()
	}
}
