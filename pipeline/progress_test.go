package pipeline

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// The file total progress reports is final from the first report on:
// reports start once the walk has found every file. The chunk total is
// final once a report says every file is chunked, chunks done never pass
// it, and only the last report says the run is finished.
func TestProgressFileTotalIsFinalFromTheStart(t *testing.T) {
	emb, err := embed.New(embed.Config{})
	if err != nil {
		t.Fatalf("embedder (run `make setup` first): %v", err)
	}
	defer emb.Close()
	data := t.TempDir()
	const files = 120
	for i := range files {
		p := filepath.Join(data, fmt.Sprintf("d%d", i%7), fmt.Sprintf("f%03d.md", i))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		text := fmt.Sprintf("Note %d: the lighthouse keeper logged %d ships passing the northern reef at dusk.", i, i*7)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	store, err := localstore.Open(filepath.Join(data, "index"), schema.Version{Schema: schema.SchemaVersion, Model: "test", Dim: embed.Dim}, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var totals []int
	var reports []Progress
	var last Progress
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
	cfg := Config{
		Walker:   stages.Walker{Folder: folder, IndexFolder: filepath.Join(data, "index"), Exts: map[string]bool{".md": true}},
		Chunking: chunk.Default, Tokens: emb.Tokenizer(), Embedder: emb, Dim: embed.Dim, Limits: extract.DefaultLimits,
	}
	cfg.Progress = func(p Progress) { totals = append(totals, p.FilesTotal); reports = append(reports, p); last = p }
	if _, err := Reindex(context.Background(), cfg, w); err != nil {
		t.Fatal(err)
	}
	if len(totals) < 2 {
		t.Logf("only %d progress reports; the run was too quick to show a growing total", len(totals))
	}
	if last.BytesTotal == 0 || last.BytesDone != last.BytesTotal {
		t.Errorf("final progress counts %d of %d bytes read", last.BytesDone, last.BytesTotal)
	}
	for i, n := range totals {
		if n != files {
			t.Fatalf("report %d of %d says %d files in total, want %d from the start: %v", i+1, len(totals), n, files, totals)
		}
	}
	if !last.Finished || !last.ChunksCounted || last.ChunksDone != last.ChunksTotal || last.ChunksTotal < files {
		t.Fatalf("final report %+v, want finished with every chunk counted and done", last)
	}
	for i, p := range reports {
		if p.ChunksDone > p.ChunksTotal {
			t.Errorf("report %d: %d chunks done of %d", i+1, p.ChunksDone, p.ChunksTotal)
		}
		if p.ChunksCounted && (p.ChunksTotal != last.ChunksTotal || p.ChunksExpected != p.ChunksTotal) {
			t.Errorf("report %d: every file chunked, yet %d chunks (expected %d) of the run's %d", i+1, p.ChunksTotal, p.ChunksExpected, last.ChunksTotal)
		}
		if p.Finished != (i == len(reports)-1) {
			t.Errorf("report %d of %d: finished %v", i+1, len(reports), p.Finished)
		}
	}
}
