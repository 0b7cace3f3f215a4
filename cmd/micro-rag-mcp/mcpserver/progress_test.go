package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

type sent struct {
	at  time.Duration
	v   float64
	p   pipeline.Progress
	eta string
}

// testRelay is a relay whose clock the test moves; got collects what it sends.
func testRelay() (*progressRelay, *[]sent, *time.Duration) {
	var got []sent
	var clock time.Duration
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newProgressRelay(func(v float64, p pipeline.Progress, eta string) {
		got = append(got, sent{clock, v, p, eta})
	}, func() time.Time { return start.Add(clock) })
	return r, &got, &clock
}

// A long batch moves no count for many ticks: repeats go out so that no
// gap exceeds ProgressEvery, even after a report just past a tick; the
// value rises every time and stays below the next file; the total is the
// same throughout.
func TestProgressRelayTicks(t *testing.T) {
	r, got, clock := testRelay()
	r.update(pipeline.Progress{FilesDone: 0, FilesTotal: 10, ChunksTotal: 64})
	for range 24 { // six silent seconds
		*clock += progressTick
		r.tick()
	}
	*clock += 50 * time.Millisecond
	r.update(pipeline.Progress{FilesDone: 1, FilesTotal: 10, ChunksDone: 64, ChunksTotal: 128})
	r.update(pipeline.Progress{FilesDone: 1, FilesTotal: 10, ChunksDone: 64, ChunksTotal: 130}) // same file count
	for range 8 {
		*clock += progressTick
		r.tick()
	}
	g := *got
	if len(g) < 10 {
		t.Fatalf("%d notifications over 8 s, want one a second at least: %+v", len(g), g)
	}
	for i, s := range g {
		if s.p.FilesTotal != 10 {
			t.Errorf("notification %d: total %d, want 10", i, s.p.FilesTotal)
		}
		if i > 0 && s.at-g[i-1].at > ProgressEvery {
			t.Errorf("notification %d: %v after the last, more than %v", i, s.at-g[i-1].at, ProgressEvery)
		}
		if i > 0 && s.v <= g[i-1].v {
			t.Errorf("notification %d: value %v does not rise above %v", i, s.v, g[i-1].v)
		}
		if s.v >= float64(s.p.FilesDone)+1 {
			t.Errorf("notification %d: value %v reaches past %d files done", i, s.v, s.p.FilesDone)
		}
	}
	if n := len(g); g[n-1].p.ChunksTotal != 130 || g[1].p.ChunksTotal != 64 {
		t.Errorf("repeats carry the latest counts: %+v", g)
	}
}

// The message marks a projected chunk total with "~" and carries the ETA
// once a rate is known; a finished run shows the count.
func TestProgressRelayMessage(t *testing.T) {
	r, got, clock := testRelay()
	for i := range 12 { // 32 chunks a second, 5,000 projected
		r.update(pipeline.Progress{FilesDone: i, FilesTotal: 300, ChunksDone: 16 * i, ChunksTotal: 400 + 20*i,
			ChunksExpected: 5000, ChunksLikely: 5000, BytesDone: int64(i), BytesTotal: 300})
		*clock += 500 * time.Millisecond
	}
	last := (*got)[len(*got)-1]
	msg := progressMessage(last.p, last.eta)
	if !strings.HasPrefix(msg, "files 11/300, chunks 176/~5000, ETA 2m") {
		t.Errorf("message %q, want the projected total and an ETA of about (5000-176)/32 s = 2m31s", msg)
	}
	done := pipeline.Progress{FilesDone: 300, FilesTotal: 300, ChunksDone: 4960, ChunksTotal: 4960,
		ChunksExpected: 4960, ChunksLikely: 4960, BytesDone: 300, BytesTotal: 300}
	if msg := progressMessage(done, ""); msg != "files 300/300, chunks 4960/4960" {
		t.Errorf("final message %q", msg)
	}
}

func TestProgressRelayRunStops(t *testing.T) {
	r, got, clock := testRelay()
	ticks, stop, done := make(chan time.Time), make(chan struct{}), make(chan struct{})
	go func() { r.run(ticks, stop); close(done) }()
	*clock = ProgressEvery
	ticks <- time.Time{}
	ticks <- time.Time{} // returns once the first tick is done
	close(stop)
	<-done
	if len(*got) != 1 {
		t.Errorf("%d notifications for two ticks in one silent second, want 1", len(*got))
	}
}
