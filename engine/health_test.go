package engine

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// One run at a time: a second explicit reindex is refused with what runs
// and how far it is; an update after file changes waits its turn; an
// explicit reindex waits behind such an update instead of failing.
func TestRunSlot(t *testing.T) {
	s := newRunSlot()
	ctx := context.Background()
	r, release, err := s.acquire(ctx, activityReindex, nil)
	if err != nil {
		t.Fatal(err)
	}
	r.track(nil)(pipeline.Progress{FilesDone: 340, FilesTotal: 1200})

	_, _, err = s.acquire(ctx, activityReindex, nil)
	var busy *BusyError
	if !errors.As(err, &busy) || !errors.Is(err, ErrBusy) {
		t.Fatalf("second run: %v, want a BusyError", err)
	}
	// The start-up indexing, due to run, is refused too (the reindex does its work).
	if _, _, err := s.acquire(ctx, activityInitial, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("initial indexing behind a reindex: %v, want busy", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "reindex, 340 of 1,200 files, running for ") ||
		!strings.HasSuffix(msg, "; nothing is committed yet, so search finds nothing until the run commits its first finished files (from 2 s in on an empty index, else at the first checkpoint: every 30 s by default)") {
		t.Errorf("busy message %q", msg)
	}

	busy.State.SearchableFiles, busy.State.SearchableChunks = 12, 3400
	if msg := busy.Error(); !strings.HasSuffix(msg, "; search answers from the 12 files (3,400 chunks) committed so far") {
		t.Errorf("busy message %q", msg)
	}

	// An update after file changes queues instead of failing.
	got := make(chan string, 2)
	go func() {
		_, rel, err := s.acquire(ctx, activityWatch, nil)
		if err != nil {
			got <- err.Error()
			return
		}
		got <- "update ran"
		time.Sleep(50 * time.Millisecond)
		rel()
	}()
	select {
	case g := <-got:
		t.Fatalf("update did not wait for the running indexing: %s", g)
	case <-time.After(100 * time.Millisecond):
	}
	release()
	if g := <-got; g != "update ran" {
		t.Fatal(g)
	}
	// The update holds the slot now; an explicit reindex waits for it.
	for s.current.Load() == nil || s.current.Load().activity != activityWatch {
		time.Sleep(time.Millisecond)
	}
	_, rel, err := s.acquire(ctx, activityReindex, nil)
	if err != nil {
		t.Fatalf("reindex behind an update: %v", err)
	}
	rel()

	// Cancelled while waiting: the cause comes back.
	_, rel, _ = s.acquire(ctx, activityReindex, nil)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, _, err := s.acquire(cctx, activityWatch, nil); !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled wait: %v", err)
	}
	rel()
}

// A client that reindexes right after connecting meets the start-up
// indexing: its reindex waits for it and then runs, rather than failing.
func TestReindexWaitsForInitialIndexing(t *testing.T) {
	s := newRunSlot()
	ctx := context.Background()
	initial, release, err := s.acquire(ctx, activityInitial, nil)
	if err != nil {
		t.Fatal(err)
	}
	initial.track(nil)(pipeline.Progress{FilesDone: 2, FilesTotal: 9, ChunksDone: 70, ChunksTotal: 80})
	// The waiting call hears how far the run it waits for is.
	heard := make(chan pipeline.Progress, 100)
	got := make(chan error, 1)
	go func() {
		_, rel, err := s.acquire(ctx, activityReindex, func(p pipeline.Progress) { heard <- p })
		if err == nil {
			rel()
		}
		got <- err
	}()
	select {
	case err := <-got:
		t.Fatalf("reindex during the start-up indexing returned before it ended: %v", err)
	case p := <-heard:
		if p.WaitingFor != activityInitial || p.FilesDone != 2 || p.ChunksDone != 70 {
			t.Errorf("while waiting: %+v, want the start-up indexing's progress", p)
		}
	case <-time.After(10 * waitReportEvery):
		t.Fatal("no progress while waiting for the start-up indexing")
	}
	release()
	if err := <-got; err != nil {
		t.Fatalf("reindex after the start-up indexing: %v", err)
	}
}

func TestBusyFromAnotherProcess(t *testing.T) {
	err := error(&BusyError{})
	if !errors.Is(err, ErrBusy) || !strings.Contains(err.Error(), "another process") {
		t.Errorf("%v", err)
	}
}

// A first run that is still listing files has reported no progress, yet
// everything is still to come: search must say so. Once the run reports
// that nothing is left, or when a commit is already searchable and no
// work is known, it must not.
func TestPendingBeforeFirstProgress(t *testing.T) {
	e := &Engine{ready: make(chan struct{}), runs: newRunSlot()}
	close(e.ready)
	if st := e.IndexState(); st.Pending || st.Indexing {
		t.Fatalf("no run planned: %+v, want idle", st)
	}
	// Between the model loading and the initial run taking the slot.
	e.initialDue.Store(true)
	if st := e.IndexState(); !st.Pending || st.Activity != activityInitial {
		t.Fatalf("initial run due, empty index: %+v, want pending initial indexing", st)
	}
	e.initialDue.Store(false)
	r, release, err := e.runs.acquire(context.Background(), activityInitial, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer release()
	if st := e.IndexState(); !st.Pending || st.SearchableChunks != 0 {
		t.Fatalf("empty index, run listing files: %+v, want pending", st)
	}
	r.track(nil)(pipeline.Progress{FilesDone: 3, FilesTotal: 3, BytesDone: 10, BytesTotal: 10, ChunksDone: 4, ChunksTotal: 4})
	if st := e.IndexState(); st.Pending {
		t.Fatalf("run with nothing left: %+v, want not pending", st)
	}
}

// Two reindex calls during the start-up indexing: the first waits its
// turn, the second is refused as busy at once instead of running after it.
// An update after file changes still queues.
func TestSecondReindexBusyWhileOneWaits(t *testing.T) {
	s := newRunSlot()
	ctx := context.Background()
	_, release, err := s.acquire(ctx, activityInitial, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := acquireAndRelease(&s, activityReindex)
	time.Sleep(100 * time.Millisecond) // the first is waiting by now
	second := acquireAndRelease(&s, activityReindex)
	select {
	case err = <-second:
	case <-time.After(time.Second):
		release() // it waits too: let both run, and fail
		t.Fatalf("second reindex while one waits: waited and then ran (%v), want busy at once", <-second)
	}
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("second reindex while one waits: %v, want busy", err)
	}
	if msg := err.Error(); !strings.HasPrefix(msg, "reindex, waiting for the initial indexing to finish;") {
		t.Errorf("busy message %q", msg)
	}
	watched := acquireAndRelease(&s, activityWatch)
	release()
	if err := <-first; err != nil {
		t.Fatalf("first reindex: %v", err)
	}
	if err := <-watched; err != nil {
		t.Fatalf("update after file changes: %v", err)
	}
	// Both done: a reindex may run again.
	_, rel, err := s.acquire(ctx, activityReindex, nil)
	if err != nil {
		t.Fatalf("reindex after the others: %v", err)
	}
	rel()
}

// acquireAndRelease takes the slot for activity in the background, frees it
// at once, and sends the error acquire returned.
func acquireAndRelease(s *runSlot, activity string) <-chan error {
	got := make(chan error, 1)
	go func() {
		_, rel, err := s.acquire(context.Background(), activity, nil)
		if err == nil {
			rel()
		}
		got <- err
	}()
	return got
}

// A reindex that waited for the start-up indexing says how long it
// waited, apart from its own work, so the wait does not read as a slow
// reindex.
func TestReindexResultSaysItWaited(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, map[string]string{"alpaca.md": corpus["alpaca.md"]})
	e := newEngine(t, Config{DataFolder: data})
	_, release, err := e.runs.acquire(context.Background(), activityInitial, nil)
	if err != nil {
		t.Fatal(err)
	}
	const hold = 1200 * time.Millisecond
	type result struct {
		res ReindexResult
		err error
	}
	got := make(chan result, 1)
	go func() {
		res, err := e.Reindex(context.Background(), ReindexRequest{}, nil)
		got <- result{res, err}
	}()
	time.Sleep(hold)
	release()
	r := <-got
	if r.err != nil {
		t.Fatal(r.err)
	}
	res := r.res
	if res.WaitedMS < hold.Milliseconds() || res.ElapsedMS < res.WaitedMS {
		t.Errorf("waited %d ms of %d, want at least the %d ms the slot was held", res.WaitedMS, res.ElapsedMS, hold.Milliseconds())
	}
	if res.FilesAdded != 1 {
		t.Errorf("the run after the wait: %+v", res)
	}
}
