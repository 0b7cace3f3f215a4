package engine

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// Each test file holds one sentence no other file has, so a search for it
// must return that file first.
var corpus = map[string]string{
	"alpaca.md":          "# Alpacas\n\nAlpacas are domesticated camelids from the Andes, kept for their soft fleece.\n\nThey hum when they are curious or anxious.",
	"kernel.txt":         "The scheduler picks the next runnable thread from a red-black tree ordered by virtual runtime.",
	"notes/sourdough.md": "A sourdough starter is a culture of wild yeast and lactobacilli fed with flour and water every day.",
	"notes/tides.txt":    "Spring tides happen when the sun and moon line up, making high tides higher and low tides lower.",
}

func writeCorpus(t *testing.T, dir string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(dir, rel)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func newEngine(t *testing.T, cfg Config) *Engine {
	t.Helper()
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	}
	cfg.NoInitialReindex = true
	e, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	e.Start(context.Background())
	t.Cleanup(func() { e.Close() })
	if err := e.WaitModel(context.Background()); err != nil {
		t.Fatal(err)
	}
	return e
}

func reindex(t *testing.T, e *Engine, req ReindexRequest) ReindexResult {
	t.Helper()
	res, err := e.Reindex(context.Background(), req, nil)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func search(t *testing.T, e *Engine, q string) []isearch.Result {
	t.Helper()
	res, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func checkCounts(t *testing.T, step string, got ReindexResult, added, updated, removed, failed, chunks int) {
	t.Helper()
	if got.FilesAdded != added || got.FilesUpdated != updated || got.FilesRemoved != removed || got.FilesFailed != failed || got.ChunksTotal != chunks {
		t.Fatalf("%s: got %+v, want added=%d updated=%d removed=%d failed=%d chunks=%d", step, got, added, updated, removed, failed, chunks)
	}
}

func top(t *testing.T, e *Engine, q string) isearch.Result {
	t.Helper()
	res := search(t, e, q)
	if len(res) == 0 {
		t.Fatalf("no results for %q", q)
	}
	return res[0]
}

func TestIncrementalReindex(t *testing.T) { eachBackend(t, testIncrementalReindex) }

func testIncrementalReindex(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, Store: store})

	checkCounts(t, "first", reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
	if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" || r.Score <= 0.2 || r.Score > 1 || r.Ext != ".md" || r.LineStart != 1 {
		t.Fatalf("top = %+v", r)
	}
	checkCounts(t, "no-op", reindex(t, e, ReindexRequest{}), 0, 0, 0, 0, 4)

	// Touch without change: mtime differs, checksum equal → not updated.
	later := time.Now().Add(time.Hour)
	os.Chtimes(filepath.Join(data, "kernel.txt"), later, later)
	checkCounts(t, "touch", reindex(t, e, ReindexRequest{}), 0, 0, 0, 0, 4)

	// Modify: the update shows, the old text is gone.
	writeCorpus(t, data, map[string]string{"kernel.txt": "Garbage collection in Go is concurrent, tri-colour and non-moving."})
	if r := reindex(t, e, ReindexRequest{}); r.ChunksEmbedded != 1 {
		t.Fatalf("modify: %+v, want chunks_embedded=1", r)
	} else {
		checkCounts(t, "modify", r, 0, 1, 0, 0, 4)
	}
	if r := top(t, e, "concurrent garbage collector"); r.Path != "kernel.txt" {
		t.Fatalf("modified text not found: %+v", r)
	}
	for _, r := range search(t, e, "red-black tree of runnable threads ordered by virtual runtime") {
		if strings.Contains(r.Snippet, "red-black") {
			t.Fatalf("old text still returned: %+v", r)
		}
	}

	// Delete: tombstoned and gone.
	os.Remove(filepath.Join(data, "notes/tides.txt"))
	checkCounts(t, "delete", reindex(t, e, ReindexRequest{}), 0, 0, 1, 0, 3)
	for _, r := range search(t, e, "spring tides sun and moon") {
		if r.Path == "notes/tides.txt" {
			t.Fatalf("deleted file returned: %+v", r)
		}
	}
	if st := e.Status(); st.Tombstones == 0 || st.Files != 3 {
		t.Fatalf("status %+v", st)
	}

	// Rename: one removed, one added, still found under the new name.
	os.Rename(filepath.Join(data, "alpaca.md"), filepath.Join(data, "camelids.md"))
	checkCounts(t, "rename", reindex(t, e, ReindexRequest{}), 1, 0, 1, 0, 3)
	if r := top(t, e, "animals that hum when curious"); r.Path != "camelids.md" {
		t.Fatalf("renamed file: %+v", r)
	}

	// Force: everything re-read and re-embedded, counted as updated.
	forced := reindex(t, e, ReindexRequest{Force: true})
	checkCounts(t, "force", forced, 0, 3, 0, 0, 3)
	if forced.ChunksEmbedded != 3 {
		t.Fatalf("force embedded %d of 3 chunks; it must not reuse stored vectors", forced.ChunksEmbedded)
	}

	// path_glob: only matching files are considered, others untouched.
	writeCorpus(t, data, map[string]string{"notes/new.md": "Octopuses have three hearts and blue blood.", "outside.md": "Basalt columns form as lava cools and contracts."})
	checkCounts(t, "glob", reindex(t, e, ReindexRequest{PathGlob: "notes/**"}), 1, 0, 0, 0, 4)
	for _, r := range search(t, e, "basalt columns cooling lava") {
		if r.Path == "outside.md" {
			t.Fatal("file outside path_glob indexed")
		}
	}
	// A path_glob matching no file says so; one matching files does not.
	if res := reindex(t, e, ReindexRequest{PathGlob: "note/*.md"}); !strings.Contains(res.Note, `path_glob "note/*.md" matched no file`) {
		t.Errorf("path_glob matching nothing: note %q", res.Note)
	}
	if res := reindex(t, e, ReindexRequest{PathGlob: "notes/*.md"}); res.Note != "" {
		t.Errorf("path_glob matching unchanged files: note %q", res.Note)
	}
	if _, err := e.Reindex(context.Background(), ReindexRequest{PathGlob: "../*"}, nil); err == nil {
		t.Fatal("glob reaching outside accepted")
	}

	// Emptied folder: everything removed.
	for rel := range map[string]bool{"camelids.md": true, "kernel.txt": true, "notes/sourdough.md": true, "notes/new.md": true, "outside.md": true} {
		os.Remove(filepath.Join(data, rel))
	}
	checkCounts(t, "emptied", reindex(t, e, ReindexRequest{}), 0, 0, 4, 0, 0)
	if res := search(t, e, "alpacas"); len(res) != 0 {
		t.Fatalf("results from an empty index: %+v", res)
	}
}

func TestChangedExtsAndFailures(t *testing.T) { eachBackend(t, testChangedExtsAndFailures) }

func testChangedExtsAndFailures(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	writeCorpus(t, data, map[string]string{"broken.pdf": "%PDF-1.4 this is not really a pdf", "page.json": `{"greeting": "Hello"}`})
	index := t.TempDir()
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: index})
	checkCounts(t, "with pdf", reindex(t, e, ReindexRequest{}), 4, 0, 0, 1, 4)
	// Search's note on files left out for their extension reads the run's.
	if g := e.NotEnabled(); g.Count != 1 || strings.Join(g.Exts, ",") != ".json" || strings.Join(g.Examples, ",") != "page.json" {
		t.Errorf("not enabled after the run: %+v", g)
	}
	e.Close()

	// Same index, fewer extensions: refused, the index keeps its files.
	e2 := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: index, Exts: []string{".md", ".json"}})
	var serr *ScopeError
	if _, err := e2.Reindex(context.Background(), ReindexRequest{}, nil); !errors.As(err, &serr) ||
		strings.Join(serr.Dropped, ",") != ".txt,.pdf,.docx,.odt,.rtf,.epub,.html,.htm,.pptx,.odp,.xlsx,.ods,.csv,.tsv,.rst,.adoc,.asciidoc,.org,.tex,.markdown," || serr.Files != 2 {
		t.Fatalf("fewer extensions without ChangeExts: err %v", err)
	}
	e2.Close()
	// With ChangeExts the .txt files leave the index.
	e3 := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: index, Exts: []string{".md", ".json"}, ChangeExts: true})
	checkCounts(t, "md+json", reindex(t, e3, ReindexRequest{}), 1, 0, 2, 0, 3)
}

func TestBusyAndCancel(t *testing.T) { eachBackend(t, testBusyAndCancel) }

func testBusyAndCancel(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	big := map[string]string{}
	for i := range 40 {
		big[fmt.Sprintf("doc%02d.txt", i)] = strings.Repeat(fmt.Sprintf("Paragraph %d of a long report about harbour logistics and cranes. ", i), 60)
	}
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, Store: store})
	checkCounts(t, "base", reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
	writeCorpus(t, data, big)

	ctx, cancel := context.WithCancel(context.Background())
	started := make(chan struct{})
	done := make(chan error)
	go func() {
		_, err := e.Reindex(ctx, ReindexRequest{}, func(p pipeline.Progress) {
			select {
			case <-started:
			default:
				close(started)
			}
		})
		done <- err
	}()
	<-started
	if _, err := e.Reindex(context.Background(), ReindexRequest{}, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("second reindex: %v, want ErrBusy", err)
	}
	// Searches answer from the previous snapshot while the reindex runs.
	if r := top(t, e, "wild yeast culture"); r.Path != "notes/sourdough.md" {
		t.Fatalf("search during reindex: %+v", r)
	}
	cancel()
	if err := <-done; err == nil {
		t.Fatal("cancelled reindex reported success")
	}
	if r := top(t, e, "wild yeast culture"); r.Path != "notes/sourdough.md" {
		t.Fatalf("after cancel: %+v", r)
	}
	// The next run finishes the job.
	res := reindex(t, e, ReindexRequest{})
	if res.FilesAdded != 40 || res.ChunksTotal < 44 {
		t.Fatalf("after cancel, rerun: %+v", res)
	}
}

func TestSearchBeforeModelAndEmptyIndex(t *testing.T) {
	eachBackend(t, testSearchBeforeModelAndEmptyIndex)
}

func testSearchBeforeModelAndEmptyIndex(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	e, err := New(Config{DataFolder: data, Store: store, NoInitialReindex: true, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	// Not started: the model never arrives; search waits 5 s, then empty.
	res, err := e.Search(context.Background(), isearch.Request{Query: "x", TopK: 5})
	if err != nil || res == nil || len(res) != 0 {
		t.Fatalf("before model: %v %v", res, err)
	}
	e.Start(context.Background())
	res, err = e.Search(context.Background(), isearch.Request{Query: "x", TopK: 5})
	if err != nil || len(res) != 0 {
		t.Fatalf("empty index: %v %v", res, err)
	}
}

func TestNewRejectsBadFolders(t *testing.T) {
	if _, err := New(Config{DataFolder: filepath.Join(t.TempDir(), "nope")}); err == nil {
		t.Fatal("missing folder accepted")
	}
	f := filepath.Join(t.TempDir(), "file.txt")
	os.WriteFile(f, []byte("x"), 0o644)
	if _, err := New(Config{DataFolder: f}); err == nil {
		t.Fatal("file accepted as folder")
	}
	if _, err := New(Config{DataFolder: t.TempDir(), Exts: []string{".exe"}}); err == nil {
		t.Fatal("unsupported extension accepted")
	}
	if _, err := New(Config{DataFolder: t.TempDir(), SearchMode: "fuzzy"}); err == nil || !strings.Contains(err.Error(), `"fuzzy"`) {
		t.Fatalf("unknown search mode: err = %v", err)
	}
}

// TestIndexFolderSafety: the index never lands on the user's files.
func TestIndexFolderSafety(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "docs")
	writeCorpus(t, data, corpus)
	userFiles := filepath.Join(root, "photos")
	writeCorpus(t, userFiles, map[string]string{"files.json": "{\"mine\": true}", "version": "my own version notes"})
	os.Symlink(data, filepath.Join(root, "docs-link"))
	empty := filepath.Join(root, "empty")
	os.Mkdir(empty, 0o755)

	refused := []struct{ name, index, want string }{
		{"data folder", data, "is the data folder"},
		{"link to the data folder", filepath.Join(root, "docs-link"), "is the data folder"},
		{"parent of the data folder", root, "contains the data folder"},
		{"filesystem root", "/", "contains the data folder"},
		{"folder of user files", userFiles, "holds no micro-rag-mcp index"},
	}
	for _, tc := range refused {
		_, err := New(Config{DataFolder: data, IndexFolder: tc.index})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: err = %v, want %q", tc.name, err, tc.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(userFiles, "files.json")); string(b) != `{"mine": true}` {
		t.Errorf("user's files.json changed: %q", b)
	}

	// A user's own folder named "index" is their data: refused as the default.
	writeCorpus(t, data, map[string]string{"index/report.txt": "Quarterly report of the tide gauges."})
	_, err := New(Config{DataFolder: data})
	if err == nil || !strings.Contains(err.Error(), "--index-folder") {
		t.Errorf("default index over a user folder: err = %v, want a hint naming --index-folder", err)
	}
	// With the index elsewhere, that folder is indexed like any other.
	e := newEngine(t, Config{DataFolder: data, IndexFolder: empty})
	reindex(t, e, ReindexRequest{})
	if r := top(t, e, "tide gauge quarterly report"); r.Path != "index/report.txt" {
		t.Errorf("user folder named index not indexed: top %+v", r)
	}
	e.Close()
	if entries, _ := os.ReadDir(filepath.Join(data, "index")); len(entries) != 1 {
		t.Errorf("files written into the user's index folder: %v", entries)
	}
	// Our own index opens again.
	if _, err := New(Config{DataFolder: data, IndexFolder: empty}); err != nil {
		t.Errorf("reopening our index: %v", err)
	}

	// So is a user's file named "index" (text without an extension).
	notes := filepath.Join(root, "notes")
	writeCorpus(t, notes, map[string]string{"index": "An index of the lighthouse keepers' logbooks."})
	if _, err := New(Config{DataFolder: notes}); err == nil || !strings.Contains(err.Error(), "--index-folder") {
		t.Errorf("default index over a user file: err = %v, want a hint naming --index-folder", err)
	}
}

// TestReadOnlyCreatesNothing: search and status on a folder never indexed
// leave the disk as it was.
func TestReadOnlyCreatesNothing(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, ReadOnly: true})
	if res := search(t, e, "alpacas"); len(res) != 0 {
		t.Errorf("results from no index: %+v", res)
	}
	if st := e.Status(); st.Files != 0 {
		t.Errorf("status %+v", st)
	}
	if _, err := e.Reindex(context.Background(), ReindexRequest{}, nil); err == nil {
		t.Error("a read-only engine reindexed")
	}
	e.Close()
	if _, err := os.Stat(filepath.Join(data, "index")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("read-only engine created the index folder: %v", err)
	}
}

// TestCorruptVectorsNotServed scales every stored vector in faiss.index in
// place (same size, same structure): the damaged index must not be served
// as if its scores were cosines.
func TestCorruptVectorsNotServed(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: idx})
	reindex(t, e, ReindexRequest{})
	e.Close()

	path := filepath.Join(idx, "faiss.index")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if n := scaleUnitVectors(b, 384, 7); n != len(corpus) {
		t.Fatalf("found %d unit vectors in faiss.index, want %d", n, len(corpus))
	}
	if err := os.WriteFile(path, b, 0o644); err != nil {
		t.Fatal(err)
	}
	e = newEngine(t, Config{DataFolder: data, IndexFolder: idx})
	res, err := e.Search(context.Background(), isearch.Request{Query: "wild yeast culture for bread", TopK: 5})
	if err == nil && len(res) > 0 {
		t.Fatalf("a damaged index was served: %+v", res)
	}
}

// scaleUnitVectors multiplies, in place, every run of dim little-endian
// float32 values of unit length by f, and returns how many it found.
func scaleUnitVectors(b []byte, dim int, f float32) int {
	n := 0
	for off := 0; off+4*dim <= len(b); {
		var sum float64
		for i := range dim {
			v := float64(math.Float32frombits(binary.LittleEndian.Uint32(b[off+4*i:])))
			sum += v * v
		}
		if !(math.Abs(sum-1) <= 1e-4) { // NaN from header bytes is no match either
			off++ // FAISS headers leave the vectors unaligned
			continue
		}
		for i := range dim {
			p := b[off+4*i:]
			binary.LittleEndian.PutUint32(p, math.Float32bits(f*math.Float32frombits(binary.LittleEndian.Uint32(p))))
		}
		n++
		off += 4 * dim
	}
	return n
}

// TestFirstSearchWaitsForInitialCommit: a search sent as soon as the model
// is ready, on a folder never indexed, waits (within its 5 s) for the
// start-up run's first commit and answers from it, where it used to answer
// empty while the run was under way. The filler files make the run last
// long enough for the search to meet it.
func TestFirstSearchWaitsForInitialCommit(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	for i := range 30 {
		writeCorpus(t, data, map[string]string{fmt.Sprintf("zz-filler/%02d.txt", i): fmt.Sprintf("Minutes of weekly meeting number %d: the budget line %d was approved and the printer on floor %d was moved.", i, i*7, i%5)})
	}
	e, err := New(Config{DataFolder: data, Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	e.Start(context.Background())
	// The model first (a slow machine may take seconds to load it); the
	// start-up run begins as it is ready, and the search meets it.
	if err := e.WaitModel(context.Background()); err != nil {
		t.Fatal(err)
	}
	res, err := e.Search(context.Background(), isearch.Request{Query: "wild yeast culture for bread", TopK: 5, ScoreThreshold: 0.2})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) == 0 || res[0].Path != "notes/sourdough.md" {
		t.Fatalf("first search after start: %+v, want notes/sourdough.md first", res)
	}
}
