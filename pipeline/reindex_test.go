package pipeline

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// reindexOnce runs one Reindex of data into store with the real embedder.
func reindexOnce(t *testing.T, ctx context.Context, store *localstore.Store, emb *embed.Embedder, data string, pattern string) (Result, error) {
	t.Helper()
	g, err := glob.Parse(pattern)
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
	emb := realEmbedder(t)
	data := t.TempDir()
	write := func(rel, text string) {
		p := filepath.Join(data, rel)
		testutil.MkdirAll(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md", "Refunds are paid within five working days.")
	write("docs/b.txt", strings.Repeat("The on-call engineer pages the database team when replication lags. ", 40))
	write("docs/c.md", "Badges are collected at the front desk.")
	write("docs/empty.md", "\n\n")
	write("docs/page.html", "<p>Not in the list.</p>")
	store, err := localstore.Open(filepath.Join(data, "index"), schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}, index.Options{})
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
	testutil.Remove(t, filepath.Join(data, "docs/c.md"))
	res, err = reindexOnce(t, context.Background(), store, emb, data, "")
	if err != nil {
		t.Fatal(err)
	}
	if res.FilesUpdated != 1 || res.FilesRemoved != 1 || res.FilesAdded != 0 || res.ChunksReused == 0 {
		t.Fatalf("incremental run: %+v", res.Tally)
	}

	// A scoped run never removes files outside its glob.
	testutil.Remove(t, filepath.Join(data, "a.md"))
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

// largeText is about n bytes of plain prose in paragraphs (seeded).
func largeText(n int) string {
	words := strings.Fields(`river mountain engine harbor violin orchard lantern
		glacier copper meadow falcon quarry velvet thunder compass saffron`)
	var b strings.Builder
	for s := 0; b.Len() < n; s++ {
		for k := range 12 {
			b.WriteString(words[(s*7+k*k)%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString("end.\n\n")
	}
	return b.String()
}

// reindexConfig is a Reindex configuration over data for the real embedder.
func reindexConfig(t *testing.T, emb *embed.Embedder, data string) Config {
	t.Helper()
	folder, err := stages.OpenFolder(data)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { folder.Close() })
	return Config{
		Walker:   stages.Walker{Folder: folder, IndexFolder: filepath.Join(data, "index"), Exts: map[string]bool{".md": true, ".txt": true}},
		Chunking: chunk.Default, Tokens: emb.Tokenizer(), Embedder: emb, Dim: embed.Dim, Limits: extract.DefaultLimits,
	}
}

// largeBeforeSmall makes a folder of one large file, walked first, and the
// given small notes, and opens a writer on its new index; reopen opens the
// index read-only as a later process would.
func largeBeforeSmall(t *testing.T, small []string) (*localstore.Store, *localstore.Writer, Config, func() *localstore.Store) {
	t.Helper()
	emb := realEmbedder(t)
	data := t.TempDir()
	// "a-" sorts first: the large file is walked, read and chunked first.
	testutil.WriteFile(t, filepath.Join(data, "a-large.txt"), []byte(largeText(400_000)))
	for i, name := range small {
		testutil.WriteFile(t, filepath.Join(data, name), []byte(fmt.Sprintf("Note %d: badges, refunds and pages.", i)))
	}
	dir := filepath.Join(data, "index")
	version := schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}
	store, err := localstore.Open(dir, version, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	w, err := store.Begin()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { w.Close() })
	reopen := func() *localstore.Store {
		again, err := localstore.Open(dir, version, index.Options{ReadOnly: true})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { again.Close() })
		return again
	}
	return store, w, reindexConfig(t, emb, data), reopen
}

// TestLargeFileDoesNotHoldBackCommits: small files that arrive behind a
// file of many chunks are embedded first and committed at the next
// checkpoint while the large one is still embedding; a cancel then keeps
// them.
func TestLargeFileDoesNotHoldBackCommits(t *testing.T) {
	small := []string{"b-refunds.md", "c-badges.md", "d-oncall.md"}
	store, w, cfg, reopen := largeBeforeSmall(t, small)
	cfg.Checkpoint = 200 * time.Millisecond
	var chunksDone, chunksTotal atomic.Int64
	cfg.Progress = func(p Progress) { chunksDone.Store(int64(p.ChunksDone)); chunksTotal.Store(int64(p.ChunksTotal)) }
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	start := time.Now()
	go func() {
		// Cancel once a commit holds the small files.
		for ctx.Err() == nil {
			if snap := store.Acquire(); snap != nil {
				n := snap.Files()
				snap.Release()
				if n == len(small) {
					t.Logf("small files committed after %v with %d chunks embedded", time.Since(start).Round(time.Millisecond), chunksDone.Load())
					cancel()
				}
			}
			time.Sleep(20 * time.Millisecond)
		}
	}()
	_, err := Reindex(ctx, cfg, w)
	t.Logf("reindex returned after %v", time.Since(start).Round(time.Millisecond))
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("reindex ended with %v, want it cancelled", err)
	}
	if done, total := chunksDone.Load(), chunksTotal.Load(); done >= total || total < 300 {
		t.Fatalf("cancelled with %d of %d chunks embedded: the large file was not in the middle of embedding", done, total)
	}
	w.Close()
	// What is on disk: the small files, not the large one.
	again := reopen()
	snap := again.Acquire()
	defer snap.Release()
	for _, name := range small {
		if _, ok := snap.File(name); !ok {
			t.Errorf("%s not committed", name)
		}
	}
	if _, ok := snap.File("a-large.txt"); ok || snap.Files() != len(small) {
		t.Errorf("committed %d files, the large one too: %v", snap.Files(), ok)
	}
}

// TestFileOverChunkCap: a file over MaxFileChunks is indexed up to the cap
// and marked truncated; an unchanged reindex keeps it so, a raised cap
// with force indexes all of it.
func TestFileOverChunkCap(t *testing.T) {
	emb := realEmbedder(t)
	data := t.TempDir()
	testutil.WriteFile(t, filepath.Join(data, "long.txt"), []byte(largeText(12_000)))
	testutil.WriteFile(t, filepath.Join(data, "short.md"), []byte("Refunds are paid within five working days."))
	store, err := localstore.Open(filepath.Join(data, "index"), schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	run := func(maxChunks int, force bool) (Result, *schema.FileEntry) {
		t.Helper()
		w, err := store.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		cfg := reindexConfig(t, emb, data)
		cfg.MaxFileChunks, cfg.Force = maxChunks, force
		res, err := Reindex(context.Background(), cfg, w)
		if err != nil {
			t.Fatal(err)
		}
		snap := store.Acquire()
		defer snap.Release()
		f, ok := snap.File("long.txt")
		if !ok {
			t.Fatal("long.txt not indexed")
		}
		return res, f
	}
	res, f := run(3, false)
	if len(f.ChunkIDs) != 3 || res.FilesTruncated != 1 || !strings.Contains(f.Truncated, "only the first 3 chunks are indexed") {
		t.Fatalf("capped at 3: %d chunks, %d truncated, reason %q", len(f.ChunkIDs), res.FilesTruncated, f.Truncated)
	}
	// The run's result names the file and the part indexed, for the
	// reindex tool's caller, who reads no log.
	if len(res.Truncated) != 1 || res.Truncated[0].Path != "long.txt" || res.Truncated[0].Reason != f.Truncated {
		t.Errorf("result lists truncated %+v, want long.txt: %q", res.Truncated, f.Truncated)
	}
	if _, f = run(3, false); len(f.ChunkIDs) != 3 || f.Truncated == "" {
		t.Errorf("unchanged rerun: %d chunks, reason %q", len(f.ChunkIDs), f.Truncated)
	}
	if res, f = run(0, true); len(f.ChunkIDs) <= 3 || f.Truncated != "" || res.FilesTruncated != 0 {
		t.Errorf("without a cap: %d chunks, reason %q", len(f.ChunkIDs), f.Truncated)
	}
}

// realEmbedder loads the model, closed when the test ends.
func realEmbedder(t *testing.T) *embed.Embedder {
	t.Helper()
	emb, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatalf("embedder (run `make setup` first): %v", err)
	}
	t.Cleanup(func() { emb.Close() })
	return emb
}

// TestCancelKeepsFinishedFiles: with no checkpoint due, a run stopped by
// its caller while a large file embeds still commits the small files it
// finished.
func TestCancelKeepsFinishedFiles(t *testing.T) {
	small := []string{"b-refunds.md", "c-badges.md"}
	_, w, cfg, reopen := largeBeforeSmall(t, small)
	cfg.Checkpoint = time.Hour // no timed checkpoint during the test
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var chunksTotal atomic.Int64
	cfg.Progress = func(p Progress) {
		chunksTotal.Store(int64(p.ChunksTotal))
		if p.FilesDone >= len(small) && p.ChunksDone < p.ChunksTotal {
			cancel()
		}
	}
	if _, err := Reindex(ctx, cfg, w); !errors.Is(err, context.Canceled) {
		t.Fatalf("reindex ended with %v, want it cancelled", err)
	}
	w.Close()
	again := reopen()
	snap := again.Acquire()
	if snap == nil {
		t.Fatal("nothing committed after the stop")
	}
	defer snap.Release()
	for _, name := range small {
		if _, ok := snap.File(name); !ok {
			t.Errorf("%s finished before the stop but not committed", name)
		}
	}
	if _, ok := snap.File("a-large.txt"); ok {
		t.Errorf("the large file was committed though it never finished (%d chunks in all)", chunksTotal.Load())
	}
}

// A run over some paths (an update after file changes) that begins on an
// index rebuilt from scratch — its folder deleted under the process —
// indexes the whole folder: the rebuilt index holds nothing else, so
// indexing only the changed file would leave every other file unsearchable.
func TestPathsRunOnRebuiltIndexCoversFolder(t *testing.T) {
	emb := realEmbedder(t)
	data := t.TempDir()
	for rel, text := range map[string]string{"a.md": "Refunds are paid within five working days.",
		"docs/b.md": "Badges are collected at the front desk.", "c.md": "Parking permits come from facilities."} {
		testutil.MkdirAll(t, filepath.Dir(filepath.Join(data, rel)))
		if err := os.WriteFile(filepath.Join(data, rel), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	dir := filepath.Join(data, "index")
	store, err := localstore.Open(dir, schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	if _, err := reindexOnce(t, context.Background(), store, emb, data, ""); err != nil {
		t.Fatal(err)
	}

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	w, err := store.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	cfg := reindexConfig(t, emb, data)
	cfg.Walker.Paths = []string{"c.md"}
	res, err := Reindex(context.Background(), cfg, w)
	if err != nil {
		t.Fatal(err)
	}
	snap := store.Acquire()
	defer snap.Release()
	if res.FilesAdded != 3 || snap.Files() != 3 {
		t.Errorf("update of c.md on the rebuilt index: %d added, index holds %d files; want the folder's 3", res.FilesAdded, snap.Files())
	}
}
