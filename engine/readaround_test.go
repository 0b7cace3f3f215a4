package engine

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// TestReadAround: a document is read back whole and chunk by chunk with
// its neighbours, in order, from what the index holds; documents list by
// path; unknown paths and chunks are errors.
func TestReadAround(t *testing.T) { eachBackend(t, testReadAround) }

func testReadAround(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	var paras []string
	for i := range 80 {
		paras = append(paras, fmt.Sprintf("Paragraph %d: the harbour master logs crane %d moving container %d at berth %d.", i, i*7, i*13, i%5))
	}
	long := strings.Join(paras, "\n\n")
	writeCorpus(t, data, corpus)
	writeCorpus(t, data, map[string]string{"logbook.txt": long})
	e := newEngine(t, Config{DataFolder: data, Store: store})
	reindex(t, e, ReindexRequest{})
	ctx := context.Background()

	doc, err := e.ReadDocument(ctx, "logbook.txt")
	if err != nil {
		t.Fatal(err)
	}
	if doc.Chunks < 4 || doc.FirstChunk != 0 || doc.LastChunk != doc.Chunks-1 || doc.Truncated {
		t.Fatalf("document: %d chunks, %d..%d, truncated %v", doc.Chunks, doc.FirstChunk, doc.LastChunk, doc.Truncated)
	}
	at := 0
	for _, p := range paras {
		i := strings.Index(doc.Text[at:], p)
		if i < 0 {
			t.Fatalf("document text lacks %q after byte %d", p, at)
		}
		at += i + len(p)
	}

	mid := doc.Chunks / 2
	part, err := e.ReadChunk(ctx, "logbook.txt", mid, 1)
	if err != nil {
		t.Fatal(err)
	}
	if part.FirstChunk != mid-1 || part.LastChunk != mid+1 || part.Chunks != doc.Chunks || !strings.Contains(doc.Text, part.Text) ||
		part.CharStart <= 0 || part.CharEnd >= doc.CharEnd {
		t.Fatalf("chunk %d±1: chunks %d..%d of %d, chars %d..%d, in the document: %v", mid, part.FirstChunk, part.LastChunk,
			part.Chunks, part.CharStart, part.CharEnd, strings.Contains(doc.Text, part.Text))
	}
	if _, err := e.ReadChunk(ctx, "logbook.txt", doc.Chunks, 0); err == nil {
		t.Error("a chunk past the end was read")
	}
	if _, err := e.ReadDocument(ctx, "notes/missing.md"); !errors.Is(err, isearch.ErrNotIndexed) {
		t.Errorf("unknown path: %v", err)
	}

	docs, more, err := e.Documents(ctx, "", 2)
	if err != nil || !more || len(docs) != 2 || docs[0].Path != "alpaca.md" || docs[1].Path != "kernel.txt" {
		t.Fatalf("first page: %+v more %v err %v", docs, more, err)
	}
	docs, more, err = e.Documents(ctx, "kernel.txt", 10)
	if err != nil || more || len(docs) != 3 || docs[0].Path != "logbook.txt" || docs[0].Chunks != doc.Chunks || docs[2].Path != "notes/tides.txt" {
		t.Fatalf("after kernel.txt: %+v more %v err %v", docs, more, err)
	}
}

// pathsView is an index.View holding only file entries.
type pathsView struct {
	index.View
	paths []string
}

func (v pathsView) Paths() []string { return v.paths }

func (v pathsView) File(path string) (*schema.FileEntry, bool) {
	if !slices.Contains(v.paths, path) {
		return nil, false
	}
	return &schema.FileEntry{Path: path}, true
}

// A URI typed in NFC reads a file whose name is stored decomposed (NFD, as
// macOS writes it), and the other way round; of two names equal in NFC the
// one matching byte for byte wins.
func TestIndexedPathEitherNormalForm(t *testing.T) {
	const nfc, nfd = "notes/caf\u00e9-rules.md", "notes/cafe\u0301-rules.md"
	for _, tc := range []struct {
		indexed     []string
		asked, want string
	}{
		{[]string{"a.md", nfd}, nfc, nfd},
		{[]string{nfc, "z.md"}, nfd, nfc},
		{[]string{nfc, nfd}, nfd, nfd},
		{[]string{nfc, nfd}, nfc, nfc},
		{[]string{"a.md"}, nfc, nfc},
	} {
		if got := indexedPath(pathsView{paths: tc.indexed}, tc.asked); got != tc.want {
			t.Errorf("%+q among %+q: got %+q, want %+q", tc.asked, tc.indexed, got, tc.want)
		}
	}
}

// An empty file is indexed with no chunks: reading its chunk 0 says so, not
// "chunks 0 to -1".
func TestReadChunkOfEmptyFile(t *testing.T) {
	_, err := isearch.ReadChunk(pathsView{paths: []string{"empty.txt"}}, "empty.txt", 0, 1)
	if !errors.Is(err, isearch.ErrNoChunk) || !strings.Contains(err.Error(), "has no chunks") || strings.Contains(err.Error(), "-1") {
		t.Errorf("chunk 0 of an empty file: %v", err)
	}
}
