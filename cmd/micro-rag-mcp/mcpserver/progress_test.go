package mcpserver

import (
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

type sent struct {
	at    time.Duration
	v     float64
	total int
	p     pipeline.Progress
	eta   string
}

// testRelay is a relay whose clock the test moves; got collects what it sends.
func testRelay() (*progressRelay, *[]sent, *time.Duration) {
	var got []sent
	var clock time.Duration
	start := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	r := newProgressRelay(func(v float64, total int, p pipeline.Progress, eta string) {
		got = append(got, sent{clock, v, total, p, eta})
	}, func() time.Time { return start.Add(clock) })
	return r, &got, &clock
}

// ticks moves the clock by n ticks, ticking each time.
func ticks(r *progressRelay, clock *time.Duration, n int) {
	for range n {
		*clock += progressTick
		r.tick()
	}
}

// checkUnits checks what MCP and the message promise of every
// notification: the value rises each time, in chunks, never ahead of the
// chunks done by more than the batch in flight nor behind by more than
// the one chunk held for the end; the total, once given, is the run's final count; no gap exceeds
// ProgressEvery.
func checkUnits(t *testing.T, g []sent, final int) {
	t.Helper()
	given := false
	for i, s := range g {
		ahead := s.v - float64(s.p.ChunksDone)
		if ahead > float64(s.p.BatchSize) || ahead < -1 || s.v > float64(max(s.p.ChunksTotal, 0)) {
			t.Errorf("notification %d: value %v for %d of %d chunks done (batch %d)", i, s.v, s.p.ChunksDone, s.p.ChunksTotal, s.p.BatchSize)
		}
		if s.v == float64(s.p.ChunksTotal) && s.p.ChunksTotal > 0 && !s.p.Finished {
			t.Errorf("notification %d: value %v reaches the total before the run is over", i, s.v)
		}
		if s.total != 0 && s.total != final || given && s.total == 0 {
			t.Errorf("notification %d: total %d after one was given; the run's count is %d", i, s.total, final)
		}
		given = given || s.total != 0
		if i > 0 && s.v <= g[i-1].v {
			t.Errorf("notification %d: value %v does not rise above %v", i, s.v, g[i-1].v)
		}
		if i > 0 && s.at-g[i-1].at > ProgressEvery {
			t.Errorf("notification %d: %v after the last, more than %v", i, s.at-g[i-1].at, ProgressEvery)
		}
	}
}

// A run of 208 chunks: the first batch moves no count for six seconds,
// then chunks finish while the last file is still being chunked, then
// the last files are written and committed for a long while. Repeats go
// out at least once a second, the value counts chunks and rises every
// time without passing the batch in flight, the total is given only once
// every file is chunked, and only the end reaches it.
func TestProgressRelayTicks(t *testing.T) {
	r, got, clock := testRelay()
	ticks(r, clock, 8) // before the walk is done: nothing to say
	if len(*got) != 0 {
		t.Fatalf("%d notifications before the first report: %+v", len(*got), *got)
	}
	run := pipeline.Progress{FilesTotal: 3, ChunksTotal: 90, ChunksExpected: 150, BatchSize: 64}
	r.update(run)
	ticks(r, clock, 24) // a six-second batch
	*clock += 50 * time.Millisecond
	run.ChunksDone, run.ChunksTotal = 64, 150
	r.update(run)
	ticks(r, clock, 8)
	run.ChunksDone, run.ChunksTotal, run.ChunksCounted, run.FilesDone = 128, 208, true, 1
	r.update(run)
	ticks(r, clock, 8)
	run.ChunksDone, run.FilesDone = 208, 2 // all embedded, the last file being written
	r.update(run)
	ticks(r, clock, 4*3600) // an hour's commit: the value still rises each second
	run.FilesDone, run.Finished = 3, true
	r.update(run)

	g := *got
	checkUnits(t, g, 208)
	if len(g) < 3600 {
		t.Fatalf("%d notifications over an hour, want one a second at least", len(g))
	}
	if g[0].v != 0 || g[0].total != 0 {
		t.Errorf("first notification %v/%d, want 0 with no total while files remain to chunk", g[0].v, g[0].total)
	}
	firstBatch := 0
	for firstBatch+1 < len(g) && g[firstBatch+1].p.ChunksDone == 0 {
		firstBatch++
	}
	if v := g[firstBatch].v; v < 16 || v >= 64 {
		t.Errorf("after six seconds of the first batch the value is %v, want it past a quarter of the 64 in flight", v)
	}
	if last := g[len(g)-1]; last.v != 208 || last.total != 208 {
		t.Errorf("final notification %v/%d, want 208/208", last.v, last.total)
	}
}

// A run with no chunk to embed (every file unchanged) says so once; no
// later value could rise without claiming work that is not there.
func TestProgressRelayNoChunks(t *testing.T) {
	r, got, clock := testRelay()
	r.update(pipeline.Progress{FilesTotal: 40, ChunksCounted: true, BatchSize: 64})
	ticks(r, clock, 12)
	r.update(pipeline.Progress{FilesDone: 40, FilesTotal: 40, ChunksCounted: true, Finished: true, BatchSize: 64})
	if g := *got; len(g) != 1 || g[0].v != 0 || g[0].total != 0 {
		t.Errorf("notifications %+v, want one: progress 0, no total", g)
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
		ChunksExpected: 4960, ChunksLikely: 4960, BytesDone: 300, BytesTotal: 300, ChunksCounted: true}
	if msg := progressMessage(done, ""); msg != "files 300/300, chunks 4960/4960" {
		t.Errorf("final message %q", msg)
	}
}

func TestProgressRelayRunStops(t *testing.T) {
	r, got, clock := testRelay()
	ticks, stop, done := make(chan time.Time), make(chan struct{}), make(chan struct{})
	go func() { r.run(ticks, stop); close(done) }()
	r.update(pipeline.Progress{FilesTotal: 1, ChunksTotal: 9, BatchSize: 64})
	*clock = ProgressEvery
	ticks <- time.Time{}
	ticks <- time.Time{} // returns once the first tick is done
	close(stop)
	<-done
	if len(*got) != 2 {
		t.Errorf("%d notifications for a report and two ticks in one silent second, want 2", len(*got))
	}
}

// A reindex called during the start-up indexing hears how far that run
// is while it waits: rising values below 1 with no total, a message that
// says it waits, then its own run's counts, still rising.
func TestProgressRelayWhileWaiting(t *testing.T) {
	r, got, clock := testRelay()
	for i := range 6 {
		*clock += ProgressEvery / 2
		r.update(pipeline.Progress{FilesDone: i, FilesTotal: 40, ChunksDone: 100 * i, ChunksTotal: 900, ChunksCounted: true, WaitingFor: "initial indexing"})
	}
	waited := len(*got)
	if waited != 6 {
		t.Fatalf("%d notifications while waiting, want 6", waited)
	}
	for i, s := range (*got)[:6] {
		if s.v >= 1 || s.total != 0 || s.eta != "" || (i > 0 && s.v <= (*got)[i-1].v) {
			t.Errorf("waiting notification %d: value %v, total %d, eta %q: want rising below 1, no total, no ETA", i, s.v, s.total, s.eta)
		}
		if m := progressMessage(s.p, s.eta); !strings.HasPrefix(m, "waiting for the initial indexing to finish (files ") {
			t.Errorf("waiting message %q", m)
		}
	}
	// An hour's wait still rises every time.
	for range 7200 {
		*clock += ProgressEvery / 2
		r.update(pipeline.Progress{FilesTotal: 40, WaitingFor: "initial indexing"})
	}
	if n := len(*got) - waited; n != 7200 {
		t.Fatalf("%d notifications in an hour's wait, want 7200", n)
	}
	waited = len(*got)
	r.update(pipeline.Progress{FilesTotal: 3, BatchSize: 64})
	ticks(r, clock, 8)
	r.update(pipeline.Progress{FilesDone: 3, FilesTotal: 3, ChunksDone: 64, ChunksTotal: 70, ChunksCounted: true, BatchSize: 64})
	r.update(pipeline.Progress{FilesDone: 3, FilesTotal: 3, ChunksDone: 70, ChunksTotal: 70, ChunksCounted: true, BatchSize: 64, Finished: true})
	own := (*got)[waited:]
	if len(own) == 0 || own[len(own)-1].v != 70 || own[len(own)-1].total != 70 {
		t.Fatalf("own run's notifications %+v, want the last at 70 of 70", own)
	}
	for i, s := range *got {
		if i > 0 && s.v <= (*got)[i-1].v {
			t.Errorf("notification %d: value %v does not rise above %v", i, s.v, (*got)[i-1].v)
		}
	}
}
