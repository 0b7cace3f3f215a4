package pgstore

import (
	"bytes"
	"context"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func TestParseMemory(t *testing.T) {
	for in, want := range map[string]int64{"4GB": 4 << 30, "512MB": 512 << 20, "64kB": 64 << 10, "1TB": 1 << 40, "1048576": 1 << 20, " 2 GB ": 2 << 30} {
		if got, err := parseMemory(in); err != nil || got != want {
			t.Errorf("%q: %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "GB", "lots", "-1GB", "0", "1.5GB", "99999999999TB"} {
		if got, err := parseMemory(in); err == nil {
			t.Errorf("%q: %d, no error", in, got)
		}
	}
}

// The build memory measured for pgvector (2,911 bytes a row at 384
// dimensions, m 32) is covered with room to spare: a million rows fit
// under the default cap.
func TestGraphBytes(t *testing.T) {
	if got := graphBytes(23053, 384, 32); got < 64<<20 || got > 96<<20 {
		t.Errorf("23,053 rows that outgrew 64 MB: estimate %d MB", got>>20)
	}
	if got := graphBytes(1_000_000, 384, 32); got > DefaultBuildMemory {
		t.Errorf("1M rows need %d MB, above the default cap", got>>20)
	}
}

// The store URL's build_memory parameter sets the cap and is taken out of
// what pgx sends (the server refuses settings it does not know); a bad
// value fails Open without the password in the error.
func TestBuildMemoryParam(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	s, err := Open(ctx, dsn+"&build_memory=2GB", "idx", testVersion, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if s.opts.BuildMemory != 2<<30 {
		t.Errorf("build memory %d, want 2 GB", s.opts.BuildMemory)
	}
	s2, err := Open(ctx, dsn, "idx", testVersion, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	if s2.opts.BuildMemory != DefaultBuildMemory {
		t.Errorf("build memory %d without the parameter, want the default", s2.opts.BuildMemory)
	}
	_, err = Open(ctx, dsn+"&build_memory=lots", "idx", testVersion, Options{})
	if err == nil || !strings.Contains(err.Error(), "build_memory") {
		t.Fatalf("bad build_memory: %v", err)
	}
	if pw := pgtest.Shared(t).Password; strings.Contains(err.Error(), pw) {
		t.Errorf("password in %q", err)
	}
}

// A bulk commit builds the graph and says how (pgvector's debug message,
// caught as a notice), and the index answers after it.
func TestBulkBuildLogged(t *testing.T) {
	dsn := pgtest.Database(t)
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, nil))
	s, err := Open(context.Background(), dsn, "idx", testVersion, Options{Logger: log, BulkMin: 50, ANN: ANNHNSW})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	rng := rand.New(rand.NewPCG(5, 6))
	u := begin(t, s)
	defer u.Close()
	var first doc
	for i := range 30 {
		d := makeDoc(rng, "f"+strings.Repeat("x", i)+".md", "one chunk", "another chunk")
		if i == 0 {
			first = d
		}
		put(t, u, d)
	}
	commit(t, u, schema.EndOfRun)
	mu.Lock()
	out := buf.String()
	mu.Unlock()
	if !strings.Contains(out, "building index") && !strings.Contains(out, "parallel workers") {
		t.Errorf("no build message logged:\n%s", out)
	}
	v := s.acquire()
	defer v.Release()
	got, err := v.Nearest(first.vecs[:testDim], 1)
	if err != nil || len(got) != 1 {
		t.Fatalf("nearest after the build: %v %v", got, err)
	}
	f, _ := v.File(first.entry.Path)
	if got[0].ID != f.ChunkIDs[0] {
		t.Errorf("nearest %d, want %d", got[0].ID, f.ChunkIDs[0])
	}
}

type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// A commit's live ids (merged from the last commit's, not sorted afresh)
// are exactly its files' chunk ids, sorted, through puts, re-puts and
// removals, also of a file added and removed before one commit.
func TestLiveIDsAfterCommits(t *testing.T) {
	s, u, rng := writer(t, 7, 8)
	for round := range 6 {
		for f := range 5 {
			switch (round + f) % 3 {
			case 0:
				put(t, u, makeDoc(rng, fmt.Sprintf("f%d.md", f), "one", "two", "three"))
			case 1:
				u.RemoveFile(fmt.Sprintf("f%d.md", f))
			}
		}
		put(t, u, makeDoc(rng, "brief.md", "here and gone"))
		u.RemoveFile("brief.md")
		commit(t, u, schema.MidRun)
		v := s.acquire()
		var want []int64
		for _, p := range v.Paths() {
			f, _ := v.File(p)
			want = append(want, f.ChunkIDs...)
		}
		slices.Sort(want)
		if !slices.Equal(v.live, want) {
			t.Errorf("round %d: live %v, files' chunks %v", round, v.live, want)
		}
		v.Release()
	}
}

// ef_search above pgvector's limit (1000) and a k above it are lowered to
// the limit instead of failing the query ("outside the valid range").
func TestEfSearchAboveLimit(t *testing.T) {
	s, u, rng := writer(t, 9, 10)
	d := makeDoc(rng, "a.md", "one", "two", "three")
	put(t, u, d)
	commit(t, u, schema.EndOfRun)
	s.SetEfSearch(1600)
	v := s.acquire()
	defer v.Release()
	for _, k := range []int{3, 1200} {
		got, err := v.Nearest(d.vecs[:testDim], k)
		if err != nil || len(got) != 3 {
			t.Fatalf("k %d: %v, %v", k, got, err)
		}
	}
}

// writer opens an index in a new database and takes its writer role
// (closed when the test ends).
func writer(t *testing.T, seed1, seed2 uint64) (*Store, *Updater, *rand.Rand) {
	t.Helper()
	s := open(t, pgtest.Database(t), "idx", testVersion)
	u := begin(t, s)
	t.Cleanup(func() { u.Close() })
	return s, u, rand.New(rand.NewPCG(seed1, seed2))
}
