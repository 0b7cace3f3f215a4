package pgstore

import (
	"bytes"
	"context"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// --store postgres://... reaches this package through the seam: the
// backend opens by URL, writes, and the summary (status, list) reads the
// commit without the model; a read-only open of a schema never written
// creates nothing and serves an empty index. The URL carries the
// parameters this package takes for itself, which the server would refuse.
func TestDriverThroughSeam(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	u, err := index.ParseStoreURL(dsn + sep + BuildMemoryParam + "=512MB&" + KeywordParam + "=" + KeywordSegments)
	if err != nil {
		t.Fatal(err)
	}
	sum, err := index.ReadStoreSummary(ctx, u, "mrag_docs")
	if err != nil || sum.Chunks != 0 || sum.Model != "" {
		t.Fatalf("summary of a schema never written: %+v %v", sum, err)
	}
	ro, err := index.OpenBackend(ctx, u, "mrag_docs", testVersion, index.Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if v := ro.Acquire(); v.Chunks() != 0 {
		t.Errorf("read-only open of nothing: %d chunks", v.Chunks())
	}
	if _, err := ro.Begin(); err == nil {
		t.Error("a read-only store began a writer")
	}
	ro.Close()

	b, err := index.OpenBackend(ctx, u, "mrag_docs", testVersion, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	w, err := b.Begin()
	if err != nil {
		t.Fatal(err)
	}
	// The writer's lock shows in status (another process's reindex),
	// before its first commit too; until then there is nothing else.
	if sum, err := index.ReadStoreSummary(ctx, u, "mrag_docs"); err != nil || !sum.Reindexing || sum.Chunks != 0 {
		t.Errorf("summary while a writer runs: %+v %v", sum, err)
	}
	d := makeDoc(rand.New(rand.NewPCG(1, 1)), "a.md", "one", "two")
	if err := w.PutFile(d.entry, d.chunks, d.vecs); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(schema.EndOfRun); err != nil {
		t.Fatal(err)
	}
	w.RemoveFile("a.md")
	d2 := makeDoc(rand.New(rand.NewPCG(1, 2)), "b.md", "three")
	if err := w.PutFile(d2.entry, d2.chunks, d2.vecs); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(schema.EndOfRun); err != nil {
		t.Fatal(err)
	}
	w.Close()
	sum, err = index.ReadStoreSummary(ctx, u, "mrag_docs")
	if err != nil || sum.Model != "test-model" || sum.Chunks != 1 || len(sum.Files) != 1 || sum.Files[0].Path != "b.md" ||
		sum.Tombstones != 2 || sum.LastReindex == "" || sum.Bytes <= 0 || sum.VectorIndex != "IVFFlat over halfvec (lists 1, probes 1 a query)" ||
		sum.Reindexing {
		t.Errorf("summary: %+v %v", sum, err)
	}
}

// A keyword side or vector index kind this package lacks is refused where
// the URL is read, so status and list refuse it as the server does.
func TestOwnParamsRefusesUnknownChoices(t *testing.T) {
	base := "postgres://rag@localhost/docs?sslmode=disable&"
	for _, tc := range []struct{ query, says string }{
		{ANNParam + "=bogus", `ann="bogus"`},
		{ANNParam + "=HNSW", `ann="HNSW"`},
		{KeywordParam + "=bogus", `keyword="bogus"`},
		{KeywordParam + "=fulltext", `keyword="fulltext"`},
	} {
		_, err := ownParams(base+tc.query, &Options{})
		if err == nil || !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %v, want one saying %s", tc.query, err, tc.says)
		}
	}
	for _, ok := range []string{ANNParam + "=hnsw", ANNParam + "=ivfflat", KeywordParam + "=segments", BuildMemoryParam + "=1GB"} {
		dsn, err := ownParams(base+ok, &Options{})
		if err != nil || strings.Contains(dsn, ok) {
			t.Errorf("%s: %q, %v; want the parameter taken out", ok, dsn, err)
		}
	}
}

// Status says when the vector index outgrows the server's shared_buffers
// (each search then copies its pages from the OS cache), and says nothing
// when it fits (the shared test server: 128 MB).
func TestSummaryNotesSmallSharedBuffers(t *testing.T) {
	ctx := context.Background()
	// Its own server: shared_buffers needs a restart. The folder is
	// readable to the user the server runs as (t.TempDir's is not).
	dir, err := os.MkdirTemp("", "pgstore-buffers-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	srv, err := pgtest.StartKept(filepath.Join(dir, "pg"), "shared_buffers=128kB")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { srv.Stop() })
	rng := rand.New(rand.NewPCG(3, 4))
	texts := make([]string, 20_000)
	for i := range texts {
		texts[i] = "chunk"
	}
	big := makeDoc(rng, "big.md", texts...)
	for _, tc := range []struct {
		dsn  string
		note bool
	}{{pgtest.Database(t), false}, {srv.DSN("postgres"), true}} {
		s := open(t, tc.dsn, "idx", testVersion)
		commitDocs(t, s, big)
		u, err := index.ParseStoreURL(tc.dsn)
		if err != nil {
			t.Fatal(err)
		}
		sum, err := index.ReadStoreSummary(ctx, u, "idx")
		if err != nil {
			t.Fatal(err)
		}
		got := strings.Contains(sum.VectorIndex, "than the server's shared_buffers (128 KB)")
		if got != tc.note || strings.Contains(sum.VectorIndex, "shared_buffers") != tc.note {
			t.Errorf("shared_buffers note %v, want %v: %q", got, tc.note, sum.VectorIndex)
		}
		// A server opening the index says it once in its log.
		var logged bytes.Buffer
		r, err := Open(ctx, tc.dsn, "idx", testVersion, Options{Logger: slog.New(slog.NewTextHandler(&logged, nil))})
		if err != nil {
			t.Fatal(err)
		}
		commitDocs(t, s, makeDoc(rng, "small.md", "one more"))
		if ok, err := r.Refresh(); !ok || err != nil { // loads again: said no more
			t.Errorf("refresh after a commit: %v %v", ok, err)
		}
		r.Close()
		said := strings.Count(logged.String(), "larger than the server's shared_buffers")
		if want := map[bool]int{true: 1, false: 0}[tc.note]; said != want || tc.note && !strings.Contains(logged.String(), "shared_buffers=\"128 KB\"") {
			t.Errorf("the log says it %d times, want %d:\n%s", said, want, logged.String())
		}
	}
}
