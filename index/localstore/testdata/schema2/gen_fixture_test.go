package index

// Copied by generate.sh into the index package of an older commit, where
// it writes that commit's index layout for the upgrade test of later
// schemas (upgrade_test.go). Not compiled here: testdata is outside the
// build.

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"
)

func TestWriteUpgradeFixture(t *testing.T) {
	out := os.Getenv("FIXTURE_OUT")
	if out == "" {
		t.Fatal("FIXTURE_OUT: the folder to write the index to")
	}
	rng := rand.New(rand.NewPCG(2, 3))
	s, err := Open(out, testVersion, Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	first := map[string][]float32{}
	for i, n := range []int{3, 2, 4} {
		path := fmt.Sprintf("f%d.md", i)
		first[path] = putFile(t, w, rng, path, n)[0]
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	// A second commit: a vector segment, file log lines and tombstones.
	first["f1.md"] = putFile(t, w, rng, "f1.md", 3)[0]
	w.RemoveFile("f2.md")
	delete(first, "f2.md")
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(out, LockFile))
	raw, err := json.MarshalIndent(first, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(out, "..", "first-vectors.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}
