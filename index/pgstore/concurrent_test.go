package pgstore

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// Two reader stores (two servers) refresh and search while a writer
// commits changes, removals and re-adds; each read uses a view taken
// before the writer's next commit landed: no read fails (a view's rows
// stay readable after later commits delete them), and at the end every
// store serves the writer's last commit.
func TestReadersDuringCommits(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(31, 32))
	w := open(t, dsn, "idx", testVersion)
	readers := []*Store{open(t, dsn, "idx", testVersion), open(t, dsn, "idx", testVersion)}
	u := begin(t, w)
	defer u.Close()
	for f := range 10 {
		put(t, u, makeDoc(rng, fmt.Sprintf("f%d.md", f), "alpha beta gamma", "delta epsilon"))
	}
	commit(t, u, schema.EndOfRun)

	var stop atomic.Bool
	const rounds = 30
	var reads, commits atomic.Int64
	// parked[c]: readers waiting for the commit after the c-th. Counted
	// per commit: a reader still waking from the last commit is not ready
	// for the next (a single counter let the writer run ahead under load).
	var parked [rounds + 1]atomic.Int64
	errs := make(chan error, 100)
	var wg sync.WaitGroup
	for i, s := range readers {
		for g := range 2 {
			wg.Go(func() {
				rng := rand.New(rand.NewPCG(uint64(i), uint64(g)))
				for !stop.Load() {
					if _, err := s.Refresh(); err != nil {
						errs <- err
						return
					}
					v := s.acquire()
					// Read once the writer has committed past this view.
					seen := commits.Load()
					parked[seen].Add(1)
					for commits.Load() == seen && !stop.Load() {
						runtime.Gosched()
					}
					err := readAll(v, unit(rng, testDim))
					v.Release()
					if err != nil {
						errs <- err
						return
					}
					reads.Add(1)
				}
			})
		}
	}
	for round := range rounds {
		f := rng.IntN(10)
		if round%3 == 0 {
			u.RemoveFile(fmt.Sprintf("f%d.md", f))
		} else {
			put(t, u, makeDoc(rng, fmt.Sprintf("f%d.md", f), fmt.Sprintf("alpha round %d", round), "beta"))
		}
		// Commit once every reader holds a view of the last commit.
		for parked[round].Load() < 4 && len(errs) == 0 {
			runtime.Gosched()
		}
		commit(t, u, schema.EndOfRun)
		commits.Add(1)
	}
	stop.Store(true)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if reads.Load() < 2*rounds {
		t.Fatalf("%d reads of outdated views, want at least 2 per commit", reads.Load())
	}
	want := w.acquire()
	defer want.Release()
	for i, s := range readers {
		if _, err := s.Refresh(); err != nil {
			t.Fatal(err)
		}
		v := s.acquire()
		if v.gen != want.gen || !slices.Equal(v.Paths(), want.Paths()) || v.Chunks() != want.Chunks() {
			t.Errorf("reader %d: generation %d, %v, %d chunks; writer: %d, %v, %d", i, v.gen, v.Paths(), v.Chunks(), want.gen, want.Paths(), want.Chunks())
		}
		v.Release()
	}
}

// readAll reads through one view what a search and a read-around do.
func readAll(v *View, q []float32) error {
	hits, err := v.Search(q, 5)
	if err != nil {
		return err
	}
	for _, h := range hits {
		if _, ok, err := v.FileChunk(h.Record.Path, h.Record.ChunkIndex); err != nil || !ok {
			return fmt.Errorf("read-around %s#%d: %v %v", h.Record.Path, h.Record.ChunkIndex, ok, err)
		}
	}
	if _, err := v.Similarities(q, v.live[:min(3, len(v.live))]); err != nil {
		return err
	}
	if _, err := v.SearchLexical("alpha beta", 5); err != nil {
		return err
	}
	return nil
}
