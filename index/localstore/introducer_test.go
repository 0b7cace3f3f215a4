package localstore

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// TestConcurrentMergeCommitSearch: a writer commits and comes and goes while
// background merges start, finish and are installed (by its commits, or by
// the introducer when it has left), searches run on every snapshot, and
// another goroutine keeps asking for refreshes, merges and the writer role.
// Every commit is visible at once, every search sees a whole snapshot, and
// the index on disk ends equal to the one in memory. Run with -race.
func TestConcurrentMergeCommitSearch(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{})
	q := unitVec(rand.New(rand.NewPCG(7, 8)))
	stop := make(chan struct{})
	var wg sync.WaitGroup
	var searches, refused atomic.Int64
	for range 2 {
		loopUntil(stop, &wg, func() {
			checkSearch(t, s, q, 5)
			searches.Add(1)
		})
	}
	loopUntil(stop, &wg, func() {
		if _, err := s.Refresh(); err != nil {
			t.Errorf("refresh: %v", err)
		}
		s.StartMerge()
		if w2, err := s.Begin(); err == nil {
			w2.Close() // the writer was between runs
		} else if !errors.Is(err, index.ErrLocked) {
			t.Errorf("Begin: %v", err)
		} else {
			refused.Add(1)
		}
	})
	var last []float32
	var lastPath string
	for i := range 60 {
		if i%10 == 9 {
			// Leave, so that a merge that finishes now installs itself.
			w.Close()
			var err error
			for w, err = s.Begin(); errors.Is(err, index.ErrLocked); w, err = s.Begin() {
			}
			if err != nil {
				t.Fatal(err)
			}
		}
		lastPath = fmt.Sprintf("f%02d.md", rng.IntN(20))
		last = putFile(t, w, rng, lastPath, 3+rng.IntN(4))[0]
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
		if h := topHit(t, s, last); h.Record.Path != lastPath {
			t.Fatalf("commit %d not published: top hit %s, want %s", i, h.Record.Path, lastPath)
		}
	}
	close(stop)
	wg.Wait()
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	w.Close()
	if st := s.MergeStats(); st.Merges == 0 || st.Failed != 0 {
		t.Fatalf("merge stats %+v: want merges installed, none failed", st)
	}
	if searches.Load() == 0 || refused.Load() == 0 {
		t.Fatalf("%d searches, %d refused Begins: the goroutines did not overlap", searches.Load(), refused.Load())
	}
	checkReopens(t, dir, s, last, lastPath)
}

// TestStoreClosedWithWriterActive: a writer that outlives its store still
// commits to disk; the snapshot nobody publishes is released, Begin on a
// closed store fails instead of waiting, and Refresh has nothing to do.
func TestStoreClosedWithWriterActive(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	q := putFile(t, w, rng, "a.md", 2)[0]
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(); !errors.Is(err, errStoreClosed) {
		t.Fatalf("Begin on a closed store: %v", err)
	}
	if ok, err := s.Refresh(); ok || err != nil {
		t.Fatalf("Refresh on a closed store: %v %v", ok, err)
	}
	if h := topHit(t, openStore(t, dir), q); h.Record.Path != "a.md" {
		t.Fatalf("%+v", h)
	}
}

// loopUntil runs f in a goroutine again and again until stop is closed.
func loopUntil(stop chan struct{}, wg *sync.WaitGroup, f func()) {
	wg.Add(1)
	go func() {
		defer wg.Done()
		for {
			select {
			case <-stop:
				return
			default:
				f()
			}
		}
	}()
}

// checkSearch searches the current snapshot for k hits and checks each
// comes from a file that snapshot holds.
func checkSearch(t *testing.T, s *Store, q []float32, k int) {
	snap := s.Acquire()
	defer snap.Release()
	hits, err := snap.Search(q, k)
	if err != nil || len(hits) > k {
		t.Errorf("search: %v, %d hits", err, len(hits))
	}
	for _, h := range hits {
		if _, ok := snap.File(h.Record.Path); !ok {
			t.Errorf("hit from a file the snapshot does not hold: %s", h.Record.Path)
		}
	}
}
