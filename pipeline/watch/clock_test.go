package watch

import (
	"sync"
	"time"
)

// fakeClock is a clock that stands still until a test advances it.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers map[*fakeTimer]bool // armed, or fired and not yet received from
}

func newFakeClock() *fakeClock {
	return &fakeClock{now: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC), timers: map[*fakeTimer]bool{}}
}

func (c *fakeClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

func (c *fakeClock) NewTimer(at time.Time) timer {
	t := &fakeTimer{c: c, ch: make(chan time.Time, 1)}
	t.Reset(at)
	return t
}

// advance moves the time on by d, fires the timers that came due and
// reports whether there were any.
func (c *fakeClock) advance(d time.Duration) (fired bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.now = c.now.Add(d)
	for t := range c.timers {
		if t.armed && !t.at.After(c.now) {
			t.fire()
			fired = true
		}
	}
	return fired
}

// waiting reports whether a timer fired and its value was not received yet,
// so whoever waits on it has yet to wake.
func (c *fakeClock) waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.timers {
		if len(t.ch) > 0 {
			return true
		}
		if !t.armed {
			delete(c.timers, t) // spent; Reset brings it back
		}
	}
	return false
}

type fakeTimer struct {
	c     *fakeClock
	ch    chan time.Time
	at    time.Time
	armed bool
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

// Stop, like time.Timer's since Go 1.23, also drops a value fired but not
// received.
func (t *fakeTimer) Stop() {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.armed = false
	t.drain()
}

func (t *fakeTimer) Reset(at time.Time) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.drain()
	t.at, t.armed = at, true
	t.c.timers[t] = true
	if !at.After(t.c.now) {
		t.fire()
	}
}

// fire and drain run with the clock locked.
func (t *fakeTimer) fire() {
	t.armed = false
	select {
	case t.ch <- t.c.now:
	default:
	}
}

func (t *fakeTimer) drain() {
	select {
	case <-t.ch:
	default:
	}
}
