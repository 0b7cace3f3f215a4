package pipeline

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
)

func TestRunStagesAndStats(t *testing.T) {
	nums := make(chan int, 2)
	squares := make(chan int, 2)
	pairs := make(chan []int, 2)
	run, _ := New(context.Background())
	Source(run, "count", nums, func(ctx context.Context, emit func(int) error) error {
		for i := 1; i <= 9; i++ {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	})
	Map(run, "square", 3, nums, squares, func(_ context.Context, v int) (int, error) { return v * v, nil })
	var held []int
	Expand(run, "pair", squares, pairs, func(_ context.Context, v int, emit func([]int) error) error {
		held = append(held, v)
		if len(held) == 2 {
			p := held
			held = nil
			return emit(p)
		}
		return nil
	}, func(_ context.Context, emit func([]int) error) error {
		if len(held) > 0 {
			return emit(held)
		}
		return nil
	})
	var got []int
	ended := false
	Sink(run, "collect", pairs, func(p []int) error { got = append(got, p...); return nil },
		func() error { ended = true; return nil })
	st, err := run.Wait()
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	if want := []int{1, 4, 9, 16, 25, 36, 49, 64, 81}; !slices.Equal(got, want) || !ended {
		t.Fatalf("got %v ended=%v", got, ended)
	}
	want := []StageStats{
		{Name: "count", Workers: 1, In: 0, Out: 9},
		{Name: "square", Workers: 3, In: 9, Out: 9},
		{Name: "pair", Workers: 1, In: 9, Out: 5},
		{Name: "collect", Workers: 1, In: 5, Out: 0},
	}
	for i, s := range st.Stages {
		s.Busy, s.Blocked = 0, 0
		if s != want[i] {
			t.Errorf("stage %d: %+v, want %+v", i, s, want[i])
		}
	}
}

// A stage that fails closes its output like one that finished; the run is
// cancelled first, so the sink's end (the final commit of a reindex) never
// runs on a partial input.
func TestFailedUpstreamNeverEnds(t *testing.T) {
	boom := errors.New("embedder crashed")
	for range 200 {
		a := make(chan int, 1)
		b := make(chan int, 1)
		run, _ := New(context.Background())
		Source(run, "gen", a, func(ctx context.Context, emit func(int) error) error {
			return emit(1)
		})
		Expand(run, "fail", a, b, func(_ context.Context, v int, emit func(int) error) error { return emit(v) },
			func(context.Context, func(int) error) error { return boom })
		var ended atomic.Bool
		Sink(run, "sink", b, func(int) error { return nil }, func() error { ended.Store(true); return nil })
		_, err := run.Wait()
		if !errors.Is(err, boom) {
			t.Fatalf("Wait returned %v", err)
		}
		if ended.Load() {
			t.Fatal("the sink's end ran after an upstream stage failed")
		}
	}
}

func TestCancelStopsBlockedStages(t *testing.T) {
	ctx, cancel := context.WithCancelCause(context.Background())
	stop := errors.New("server shutting down")
	out := make(chan int) // nobody reads: the source blocks on its first send
	run, _ := New(ctx)
	started := make(chan struct{})
	Source(run, "gen", out, func(ctx context.Context, emit func(int) error) error {
		close(started)
		return emit(1)
	})
	<-started
	cancel(stop)
	_, err := run.Wait()
	if !errors.Is(err, stop) {
		t.Fatalf("Wait returned %v, want the cancel cause", err)
	}
	if _, ok := <-out; ok {
		t.Fatal("output not closed")
	}
}

// A queue never holds back the stage before it: the source finishes and
// the queue's end runs while nothing downstream has taken an item yet;
// the items then leave in order.
func TestQueueHoldsWhatDownstreamCannotTake(t *testing.T) {
	const n = 50
	in := make(chan int) // unbuffered: every send needs the queue to take it
	out := make(chan int)
	run, _ := New(context.Background())
	sourceDone := make(chan struct{})
	Source(run, "gen", in, func(ctx context.Context, emit func(int) error) error {
		defer close(sourceDone)
		for i := range n {
			if err := emit(i); err != nil {
				return err
			}
		}
		return nil
	})
	ended := make(chan struct{})
	Queue(run, "double", in, out, func(v int) int { return 2 * v }, func() { close(ended) })
	<-sourceDone
	<-ended
	var got []int
	for v := range out {
		got = append(got, v)
	}
	if _, err := run.Wait(); err != nil {
		t.Fatal(err)
	}
	for i, v := range got {
		if v != 2*i {
			t.Fatalf("item %d is %d: out of order in %v", i, v, got)
		}
	}
	if len(got) != n {
		t.Fatalf("%d items out of %d", len(got), n)
	}
}

// A queue whose upstream fails neither runs end nor waits on its held
// items.
func TestQueueAfterFailedUpstream(t *testing.T) {
	boom := errors.New("walk failed")
	in := make(chan int, 4)
	out := make(chan int) // nobody reads
	run, _ := New(context.Background())
	Source(run, "gen", in, func(ctx context.Context, emit func(int) error) error {
		if err := emit(1); err != nil {
			return err
		}
		return boom
	})
	var ended atomic.Bool
	Queue(run, "q", in, out, func(v int) int { return v }, func() { ended.Store(true) })
	if _, err := run.Wait(); !errors.Is(err, boom) {
		t.Fatalf("Wait returned %v", err)
	}
	if ended.Load() {
		t.Fatal("end ran after the upstream failed")
	}
}

// Expand runs add for each item of in in one goroutine; add emits zero or
// more items to out. Once in is drained, flush emits what add held back;
// then out is closed. Both get the run's context.
func Expand[A, B any](r *Run, name string, in <-chan A, out chan<- B, add func(context.Context, A, func(B) error) error,
	flush func(context.Context, func(B) error) error) {
	ExpandIdle(r, name, in, out, add, nil, flush)
}

// Sink runs f for each item of in in one goroutine, then end once in is
// drained. end never runs after an error or cancel anywhere in the run.
func Sink[A any](r *Run, name string, in <-chan A, f func(A) error, end func() error) {
	SinkEvery(r, name, in, f, 0, nil, end)
}
