package watch

import "time"

// clock is where the watcher reads the time and waits for it. Tests replace
// it with one they move by hand. Timers take the moment to fire at, not a
// duration, so a clock moved between reading the time and setting a timer
// still fires the timer when its moment has come.
type clock interface {
	Now() time.Time
	NewTimer(at time.Time) timer
}

type timer interface {
	C() <-chan time.Time
	Stop()
	Reset(at time.Time)
}

type realClock struct{}

func (realClock) Now() time.Time { return time.Now() }

func (realClock) NewTimer(at time.Time) timer { return realTimer{time.NewTimer(time.Until(at))} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time { return r.t.C }
func (r realTimer) Stop()               { r.t.Stop() }
func (r realTimer) Reset(at time.Time)  { r.t.Reset(max(0, time.Until(at))) }
