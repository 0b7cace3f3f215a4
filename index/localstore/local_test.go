package localstore

import (
	"context"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// The local folder opens through the registry as a database does: the
// StoreURL of no --store, given its folder, serves what a Store committed.
func TestRegisteredFolderBackend(t *testing.T) {
	ctx := context.Background()
	if err := index.CheckBackend(index.StoreURL{}); err != nil {
		t.Fatalf("the local folder is not registered: %v", err)
	}
	if _, err := index.OpenBackend(ctx, index.StoreURL{}, "", testVersion, index.Options{}); !errors.Is(err, errNoFolder) {
		t.Errorf("open without a folder: error %v; want errNoFolder", err)
	}

	dir := t.TempDir()
	s := openStore(t, dir)
	w := begin(t, s)
	rng := rand.New(rand.NewPCG(7, 8))
	vecs := putFile(t, w, rng, "a.md", 3)
	mustCommit(t, w, EndOfRun)
	w.Close()

	u := index.StoreURL{}.InFolder(dir)
	sum, err := index.ReadStoreSummary(ctx, u, "")
	if err != nil {
		t.Fatal(err)
	}
	if sum.Chunks != 3 || len(sum.Files) != 1 || sum.Model != testVersion.Model {
		t.Errorf("summary: %d chunks, %d files, model %q; want 3, 1, %q", sum.Chunks, len(sum.Files), sum.Model, testVersion.Model)
	}
	b, err := index.OpenBackend(ctx, u, "", testVersion, index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if _, ok := LocalStore(b); !ok {
		t.Error("the registered backend is not the local Store")
	}
	v := b.Acquire()
	defer v.Release()
	hits, err := v.Search(vecs[1], 1)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 1 || hits[0].Record.Path != "a.md" || hits[0].Score < 0.999 {
		t.Errorf("search through the registry: %+v; want a.md's chunk at cosine 1", hits)
	}
}
