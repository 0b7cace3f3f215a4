package engine

import (
	"bytes"
	"context"
	"os"
	"runtime"
	"runtime/debug"
	"strconv"
	"sync"
	"time"
)

// idleState tracks the model's work so that an idle engine can give its
// memory back (Config.IdleRelease). Its mutex orders a release against
// the start of new work: a search or run that starts while memory is
// being released waits for it, then loads the model again.
type idleState struct {
	mu       sync.Mutex
	busy     int       // searches and runs in progress
	last     time.Time // when the latest one ended, or the engine became ready
	released bool      // released since the latest work
	releases int       // how many times, for tests
}

// working marks work that may need the model (a search, a run) as
// started; done marks it finished. Nothing is released between the two.
func (e *Engine) working() (done func()) {
	e.idle.mu.Lock()
	e.idle.busy++
	e.idle.released = false
	e.idle.mu.Unlock()
	return func() {
		e.idle.mu.Lock()
		e.idle.busy--
		e.idle.last = time.Now()
		e.idle.mu.Unlock()
	}
}

// releaseWhenIdle releases the model's memory each time nothing has
// needed it for IdleRelease, until ctx ends. It looks a few times per
// period, so a release comes at most a quarter period late.
func (e *Engine) releaseWhenIdle(ctx context.Context) {
	e.idle.mu.Lock()
	e.idle.last = time.Now()
	e.idle.mu.Unlock()
	every(ctx, max(min(e.cfg.IdleRelease/4, 30*time.Second), time.Millisecond), func() {
		e.releaseIfIdle(time.Now())
	})
}

// releaseIfIdle releases when no work runs, none ended within IdleRelease
// before now, and none came since the last release.
func (e *Engine) releaseIfIdle(now time.Time) {
	e.idle.mu.Lock()
	defer e.idle.mu.Unlock()
	if e.idle.busy > 0 || e.idle.released || now.Sub(e.idle.last) < e.cfg.IdleRelease {
		return
	}
	e.release()
	e.idle.released = true
	e.idle.releases++
}

// release frees what the next search or run can rebuild: the model's
// session (and the query model's) with ONNX Runtime's arena, the PDF engine, and the Go heap
// they leave free. The tokenizer and the index stay. Call with e.idle.mu
// held and no work running.
func (e *Engine) release() {
	before := residentKB()
	if err := e.embedder.Release(); err != nil {
		e.log.Warn("releasing the model session", "err", err)
	}
	if e.queries != nil {
		if err := e.queries.Release(); err != nil {
			e.log.Warn("releasing the query model session", "err", err)
		}
	}
	if err := e.pdf.Close(); err != nil {
		e.log.Warn("closing the PDF engine", "err", err)
	}
	// Two collections: sync.Pools keep their items through the first.
	runtime.GC()
	debug.FreeOSMemory()
	e.log.Info("idle: model released; the next search loads it again", "idle_for", e.cfg.IdleRelease.String(),
		"rss_mb_before", before>>10, "rss_mb", residentKB()>>10)
}

// IdleReleases is how many times the engine has released its model for
// being idle.
func (e *Engine) IdleReleases() int {
	e.idle.mu.Lock()
	defer e.idle.mu.Unlock()
	return e.idle.releases
}

// residentKB is the process's resident memory in KiB (VmRSS), 0 where
// /proc does not tell.
func residentKB() int64 {
	raw, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for line := range bytes.Lines(raw) {
		if rest, ok := bytes.CutPrefix(line, []byte("VmRSS:")); ok {
			kb, _ := strconv.ParseInt(string(bytes.TrimSuffix(bytes.TrimSpace(rest), []byte(" kB"))), 10, 64)
			return kb
		}
	}
	return 0
}
