package pipeline

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/embed"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// reindexOnce runs one Reindex of data into store with the real embedder.
func reindexOnce(t *testing.T, ctx context.Context, store *index.Store, emb *embed.Embedder, data string, glob string) (Result, error) {
	t.Helper()
	g, err := stages.ParseGlob(glob)
	if err != nil {
		t.Fatal(err)
	}
	w, err := store.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	folder, err := stages.OpenFolder(data)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	var last Progress
	skips := &stages.Skips{}
	res, err := Reindex(ctx, Config{
		Walker: stages.Walker{Folder: folder, IndexFolder: filepath.Join(data, "index"), Exts: map[string]bool{".md": true, ".txt": true}, Glob: g,
			Skipped: skips.Add},
		Skips:    skips,
		Chunking: chunk.Default, Tokens: emb.Tokenizer(), Embedder: emb, Dim: embed.Dim, Limits: extract.DefaultLimits,
		Progress: func(p Progress) { last = p },
	}, w)
	if err == nil && (last.FilesDone != last.FilesTotal || last.ChunksDone != last.ChunksTotal) {
		t.Errorf("final progress %+v is not complete", last)
	}
	return res, err
}

func TestReindexRealIndex(t *testing.T) {
	emb, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatalf("embedder (run `make setup` first): %v", err)
	}
	defer emb.Close()
	data := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(data, rel)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "Refunds are paid within five working days.")
	write("docs/b.txt", strings.Repeat("The on-call engineer pages the database team when replication lags. ", 40))
	write("docs/c.md", "Badges are collected at the front desk.")
	write("docs/empty.md", "\n\n")
	write("docs/page.html", "<p>Not in the list.</p>")
	store, err := index.Open(filepath.Join(data, "index"), schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()

	res, err := reindexOnce(t, context.Background(), store, emb, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesAdded != 4 || res.ChunksTotal < 4 || res.ChunksEmbedded != res.ChunksTotal {
		t.Fatalf("cold run: %+v", res.Tally)
	}
	var skipped []string
	for _, g := range res.Skipped {
		skipped = append(skipped, g.Reason+":"+strings.Join(g.Examples, ","))
	}
	if strings.Join(skipped, " ") != "no_text:docs/empty.md extension_not_enabled:docs/page.html" {
		t.Errorf("skipped %v", skipped)
	}
	var names []string
	for _, s := range res.Stats.Stages {
		names = append(names, s.Name)
	}
	if got := strings.Join(names, " "); got != "walk filter extract chunk embed write" {
		t.Errorf("stages %q", got)
	}
	if w := res.Stats.Stages[3]; w.In != 4 || w.Out != 4 {
		t.Errorf("chunk stage counted %+v", w)
	}

	// Edit one paragraph of b, delete c, leave a alone.
	write("docs/b.txt", strings.Repeat("The on-call engineer pages the database team when replication lags. ", 40)+"\n\nNew closing paragraph.")
	os.Remove(filepath.Join(data, "docs/c.md"))
	res, err = reindexOnce(t, context.Background(), store, emb, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesUpdated != 1 || res.FilesRemoved != 1 || res.FilesAdded != 0 || res.ChunksReused == 0 {
		t.Fatalf("incremental run: %+v", res.Tally)
	}

	// A scoped run never removes files outside its glob.
	os.Remove(filepath.Join(data, "a.md"))
	res, err = reindexOnce(t, context.Background(), store, emb, data, "docs/**")
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesRemoved != 0 {
		t.Fatalf("scoped run removed %d files", res.FilesRemoved)
	}
	snap := store.Acquire()
	defer snap.Release()
	if _, ok := snap.File("a.md"); !ok || snap.Files() != 3 {
		t.Fatalf("after scoped run: a.md present=%v, %d files", ok, snap.Files())
	}

	// A cancelled run commits nothing and removes nothing.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := reindexOnce(t, ctx, store, emb, data, ""); err == nil {
		t.Fatal("cancelled run succeeded")
	}
	after := store.Acquire()
	defer after.Release()
	if _, ok := after.File("a.md"); !ok {
		t.Fatal("a cancelled run removed a file")
	}
}
