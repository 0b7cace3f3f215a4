// Package pipeline assembles and runs a reindex: it joins the stages with
// bounded channels under one errgroup, so the first error or a cancel stops
// every stage, and owns the worker pools, the closing of every channel, the
// per-stage counters and the pprof labels.
package pipeline

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// meter counts one stage's work; its workers update it concurrently.
type meter struct {
	name    string
	workers int
	in      atomic.Int64
	out     atomic.Int64
	busy    atomic.Int64 // nanoseconds spent working
	blocked atomic.Int64 // nanoseconds waiting to send downstream
}

// StageStats is a snapshot of one stage's counters.
type StageStats struct {
	Name    string
	Workers int
	In      int64
	Out     int64
	Busy    time.Duration
	Blocked time.Duration
}

// Stats is what a run did, stage by stage, in wiring order.
type Stats struct {
	Stages  []StageStats
	Elapsed time.Duration
}

// WalkStage names the reindex's walk in its Stats: its Out is the files
// the walk found in scope.
const WalkStage = "walk"

// Out is how many items the stage called name passed on (0 when there is
// none).
func (s Stats) Out(name string) int64 {
	if i := slices.IndexFunc(s.Stages, func(st StageStats) bool { return st.Name == name }); i >= 0 {
		return s.Stages[i].Out
	}
	return 0
}

func (s Stats) String() string {
	var b strings.Builder
	for _, st := range s.Stages {
		fmt.Fprintf(&b, "%s(x%d in=%d out=%d busy=%s blocked=%s) ", st.Name, st.Workers, st.In, st.Out,
			st.Busy.Round(time.Millisecond), st.Blocked.Round(time.Millisecond))
	}
	return strings.TrimSpace(b.String())
}

// Log writes the stats to logger at Info.
func (s Stats) Log(logger *slog.Logger, msg string) {
	logger.Info(msg, "elapsed", s.Elapsed.Round(time.Millisecond), "stages", s.String())
}

// Run is one pipeline execution. Create with New, add stages with Source,
// Queue, Map, Expand and Sink, then Wait once.
type Run struct {
	g      errgroup.Group
	ctx    context.Context
	cancel context.CancelCauseFunc
	start  time.Time
	meters []*meter
}

// New starts a run under ctx. The returned context is cancelled when any
// stage fails or ctx ends.
func New(ctx context.Context) (*Run, context.Context) {
	ctx, cancel := context.WithCancelCause(ctx)
	return &Run{ctx: ctx, cancel: cancel, start: time.Now()}, ctx
}

// spawn starts n workers of one stage. closeOut runs once, after the last
// worker returns; a failing worker cancels the run first, so a downstream
// stage that sees its input close can tell a finished upstream from a
// failed one by the run's context.
func (r *Run) spawn(name string, n int, work func(ctx context.Context, m *meter) error, closeOut func()) {
	m := &meter{name: name, workers: n}
	r.meters = append(r.meters, m)
	var left atomic.Int32
	left.Store(int32(n))
	for range n {
		r.g.Go(func() (err error) {
			defer func() {
				if err != nil {
					r.cancel(err)
				}
				if left.Add(-1) == 0 && closeOut != nil {
					closeOut()
				}
			}()
			pprof.Do(r.ctx, pprof.Labels("stage", name), func(ctx context.Context) {
				err = work(ctx, m)
			})
			if err != nil {
				err = fmt.Errorf("%s: %w", name, err)
			}
			return err
		})
	}
}

// Wait waits for every stage and returns the first error (with the cause
// of the cancellation when that says more) and the stats.
func (r *Run) Wait() (Stats, error) {
	err := r.g.Wait()
	if cause := context.Cause(r.ctx); err != nil && cause != nil && !errors.Is(err, cause) {
		err = fmt.Errorf("%w (cause: %v)", err, cause)
	}
	r.cancel(context.Canceled)
	st := Stats{Elapsed: time.Since(r.start)}
	for _, m := range r.meters {
		st.Stages = append(st.Stages, StageStats{
			Name: m.name, Workers: m.workers, In: m.in.Load(), Out: m.out.Load(),
			Busy: time.Duration(m.busy.Load()), Blocked: time.Duration(m.blocked.Load()),
		})
	}
	return st, err
}

// Source runs gen in one goroutine; every item it emits goes to out, which
// is closed when gen returns. emit fails once the run is cancelled.
func Source[T any](r *Run, name string, out chan<- T, gen func(ctx context.Context, emit func(T) error) error) {
	r.spawn(name, 1, func(ctx context.Context, m *meter) error {
		start := time.Now()
		var blocked time.Duration
		err := gen(ctx, emitter(ctx, m, out, &blocked))
		m.busy.Add(int64(time.Since(start) - blocked))
		return err
	}, func() { close(out) })
}

// Map runs f over the items of in with n workers and sends each result to
// out, which is closed after the last worker returns.
func Map[A, B any](r *Run, name string, n int, in <-chan A, out chan<- B, f func(context.Context, A) (B, error)) {
	r.spawn(name, n, func(ctx context.Context, m *meter) error {
		return each(ctx, m, in, out, func(v A, emit func(B) error) error {
			w, err := f(ctx, v)
			if err != nil {
				return err
			}
			return emit(w)
		}, loopOptions[B]{})
	}, func() { close(out) })
}

// Queue runs f on each item of in in one goroutine and passes the results
// to out in order, holding without bound those out cannot take yet, so the
// stage before it never waits on the stages after it. end runs once in is
// drained, while held items may still wait; then out is closed after the
// last of them. For small items only (a file's path and stat, not its text).
func Queue[A, B any](r *Run, name string, in <-chan A, out chan<- B, f func(A) B, end func()) {
	r.spawn(name, 1, func(ctx context.Context, m *meter) error {
		var held []B
		for in != nil || len(held) > 0 {
			var send chan<- B // nil, so never chosen, while nothing is held
			var next B
			if len(held) > 0 {
				send, next = out, held[0]
			}
			var waited time.Time // set while only out is waited on
			if in == nil {
				waited = time.Now()
			}
			select {
			case v, open := <-in:
				if !open {
					if ctx.Err() != nil {
						return context.Cause(ctx) // in closed because upstream failed
					}
					in = nil
					end()
					continue
				}
				m.in.Add(1)
				start := time.Now()
				held = append(held, f(v))
				m.busy.Add(int64(time.Since(start)))
			case send <- next:
				if !waited.IsZero() {
					m.blocked.Add(int64(time.Since(waited)))
				}
				var zero B
				held[0], held = zero, held[1:]
				m.out.Add(1)
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		return nil
	}, func() { close(out) })
}

// ExpandIdle runs add for each item of in in one goroutine; add emits zero
// or more items to out. step (nil: none) runs whenever no item of in is
// ready and does one piece of the work add held back (reporting whether it
// did any); in is looked at again between steps, so new items are added
// while a long backlog is worked off. Once in is drained, flush emits what
// add held back; then out is closed. All get the run's context.
func ExpandIdle[A, B any](r *Run, name string, in <-chan A, out chan<- B, add func(context.Context, A, func(B) error) error,
	step func(context.Context, func(B) error) (bool, error), flush func(context.Context, func(B) error) error) {
	r.spawn(name, 1, func(ctx context.Context, m *meter) error {
		opt := loopOptions[B]{}
		if step != nil {
			opt.idle = func(emit func(B) error) (bool, error) { return step(ctx, emit) }
		}
		if err := each(ctx, m, in, out, func(v A, emit func(B) error) error { return add(ctx, v, emit) }, opt); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx) // in closed because upstream failed
		}
		start := time.Now()
		var blocked time.Duration
		err := flush(ctx, emitter(ctx, m, out, &blocked))
		m.busy.Add(int64(time.Since(start) - blocked))
		return err
	}, func() { close(out) })
}

// SinkEvery runs f for each item of in in one goroutine, then end once in
// is drained; end never runs after an error or cancel anywhere in the run.
// It also calls tick every interval while it waits for items (interval 0:
// never), so time-based work such as a checkpoint happens even when no
// item arrives for long.
func SinkEvery[A any](r *Run, name string, in <-chan A, f func(A) error, every time.Duration, tick func() error, end func() error) {
	r.spawn(name, 1, func(ctx context.Context, m *meter) error {
		opts := loopOptions[struct{}]{tick: tick}
		if every > 0 {
			t := time.NewTicker(every)
			defer t.Stop()
			opts.ticks = t.C
		}
		if err := each(ctx, m, in, nil, func(v A, _ func(struct{}) error) error { return f(v) }, opts); err != nil {
			return err
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		start := time.Now()
		err := end()
		m.busy.Add(int64(time.Since(start)))
		return err
	}, nil)
}

// loopOptions are the extras of a worker's loop: idle runs when no input is
// ready (until it reports nothing done), tick on each value of ticks.
type loopOptions[B any] struct {
	idle  func(emit func(B) error) (bool, error)
	ticks <-chan time.Time
	tick  func() error
}

// each is one worker's loop: receive, work, count. Busy time excludes the
// time spent blocked in emit.
func each[A, B any](ctx context.Context, m *meter, in <-chan A, out chan<- B, f func(A, func(B) error) error, opt loopOptions[B]) error {
	var blocked time.Duration
	emit := emitter(ctx, m, out, &blocked)
	timed := func(work func() error) error {
		start := time.Now()
		blocked = 0
		err := work()
		m.busy.Add(int64(time.Since(start) - blocked))
		return err
	}
	for {
		var v A
		got, open := false, true
		if opt.idle != nil {
			select {
			case v, open = <-in:
				got = open
			default:
			}
			if !got && open {
				did := false
				err := timed(func() (err error) { did, err = opt.idle(emit); return err })
				if err != nil {
					return err
				}
				if did {
					continue
				}
			}
		}
		if !got && open {
			select {
			case v, open = <-in:
				got = open
			case <-opt.ticks:
				if err := timed(opt.tick); err != nil {
					return err
				}
				continue
			case <-ctx.Done():
				return context.Cause(ctx)
			}
		}
		if !open {
			return nil
		}
		m.in.Add(1)
		if err := timed(func() error { return f(v, emit) }); err != nil {
			return err
		}
	}
}

// emitter returns a send to out that gives up when ctx ends; time spent
// waiting (backpressure) is added to *blocked and the stage's blocked time.
func emitter[T any](ctx context.Context, m *meter, out chan<- T, blocked *time.Duration) func(T) error {
	return func(v T) error {
		select {
		case out <- v:
			m.out.Add(1)
			return nil
		default:
		}
		start := time.Now()
		select {
		case out <- v:
			d := time.Since(start)
			*blocked += d
			m.blocked.Add(int64(d))
			m.out.Add(1)
			return nil
		case <-ctx.Done():
			return context.Cause(ctx)
		}
	}
}
