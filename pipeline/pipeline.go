// Package pipeline is the small runtime that runs reindex stages: goroutines
// joined by bounded channels under one errgroup, so the first error or a
// cancel stops every stage, with per-stage counters and pprof labels.
package pipeline

import (
	"context"
	"fmt"
	"log/slog"
	"runtime/pprof"
	"strings"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"
)

// Meter counts one stage's work. Its methods are safe for the stage's
// workers to call concurrently.
type Meter struct {
	name    string
	workers int
	in      atomic.Int64
	out     atomic.Int64
	busy    atomic.Int64 // nanoseconds spent working
	blocked atomic.Int64 // nanoseconds waiting to send downstream
}

// Busy adds the time since start to the stage's working time.
func (m *Meter) Busy(start time.Time) { m.busy.Add(int64(time.Since(start))) }

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

func (s Stats) String() string {
	var b strings.Builder
	for _, st := range s.Stages {
		fmt.Fprintf(&b, "%s(x%d in=%d out=%d busy=%s blocked=%s) ", st.Name, st.Workers, st.In, st.Out,
			st.Busy.Round(time.Millisecond), st.Blocked.Round(time.Millisecond))
	}
	return strings.TrimSpace(b.String())
}

// Run is one pipeline execution. Create with New, add stages with Go, then
// Wait once.
type Run struct {
	g      *errgroup.Group
	ctx    context.Context
	start  time.Time
	meters []*Meter
}

// New starts a run under ctx. The returned context is cancelled when any
// stage fails or ctx ends; stages must watch it.
func New(ctx context.Context) (*Run, context.Context) {
	g, gctx := errgroup.WithContext(ctx)
	return &Run{g: g, ctx: gctx, start: time.Now()}, gctx
}

// Go starts a stage of n workers running work. When every worker has
// returned, done runs once (the stage's owner closes its output channel
// there; workers never close a shared channel). done may be nil.
func (r *Run) Go(name string, n int, work func(ctx context.Context, m *Meter) error, done func()) {
	m := &Meter{name: name, workers: n}
	r.meters = append(r.meters, m)
	var left atomic.Int32
	left.Store(int32(n))
	for range n {
		r.g.Go(func() (err error) {
			defer func() {
				if left.Add(-1) == 0 && done != nil {
					done()
				}
			}()
			pprof.Do(r.ctx, pprof.Labels("stage", name), func(ctx context.Context) {
				err = work(ctx, m)
			})
			if err != nil {
				return fmt.Errorf("%s: %w", name, err)
			}
			return nil
		})
	}
}

// Wait waits for every stage and returns the first error (the cause of the
// cancellation, if ctx was cancelled) and the stats.
func (r *Run) Wait() (Stats, error) {
	err := r.g.Wait()
	if err != nil && r.ctx.Err() != nil {
		if cause := context.Cause(r.ctx); cause != nil && cause != context.Canceled {
			err = fmt.Errorf("%w (cause: %v)", err, cause)
		}
	}
	st := Stats{Elapsed: time.Since(r.start)}
	for _, m := range r.meters {
		st.Stages = append(st.Stages, StageStats{
			Name: m.name, Workers: m.workers, In: m.in.Load(), Out: m.out.Load(),
			Busy: time.Duration(m.busy.Load()), Blocked: time.Duration(m.blocked.Load()),
		})
	}
	return st, err
}

// Log writes the stats to logger at Info.
func (s Stats) Log(logger *slog.Logger, msg string) {
	logger.Info(msg, "elapsed", s.Elapsed.Round(time.Millisecond), "stages", s.String())
}

// Send delivers v downstream, or gives up when ctx ends. Time spent waiting
// (backpressure) is counted as the stage's blocked time.
func Send[T any](ctx context.Context, m *Meter, out chan<- T, v T) error {
	select {
	case out <- v:
		m.out.Add(1)
		return nil
	default:
	}
	start := time.Now()
	select {
	case out <- v:
		m.blocked.Add(int64(time.Since(start)))
		m.out.Add(1)
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// Recv takes the next item from upstream. ok is false when in is closed;
// err is set when ctx ended first.
func Recv[T any](ctx context.Context, m *Meter, in <-chan T) (v T, ok bool, err error) {
	select {
	case v, ok = <-in:
		if ok {
			m.in.Add(1)
		}
		return v, ok, nil
	case <-ctx.Done():
		return v, false, context.Cause(ctx)
	}
}
