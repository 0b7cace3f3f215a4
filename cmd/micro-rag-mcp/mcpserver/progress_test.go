package mcpserver

import (
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// A long batch moves no count for many ticks: each tick still sends the
// latest counts, the value rises every time and stays below the next file,
// and the total is the same throughout.
func TestProgressRelayTicks(t *testing.T) {
	type sent struct {
		v float64
		p pipeline.Progress
	}
	var got []sent
	r := newProgressRelay(func(v float64, p pipeline.Progress) { got = append(got, sent{v, p}) })
	// The test is the clock: tick stands for one ProgressEvery window.
	r.update(pipeline.Progress{FilesDone: 0, FilesTotal: 10, ChunksTotal: 64})
	r.tick() // a report went out in this window: no repeat
	for i := 0; i < 5; i++ {
		r.tick() // five silent windows: five repeats
	}
	r.update(pipeline.Progress{FilesDone: 1, FilesTotal: 10, ChunksDone: 64, ChunksTotal: 128})
	r.update(pipeline.Progress{FilesDone: 1, FilesTotal: 10, ChunksDone: 64, ChunksTotal: 130}) // same file count
	r.tick()
	r.tick()

	if len(got) != 1+5+2+1 {
		t.Fatalf("%d notifications, want 9 (one per report, one per silent tick): %+v", len(got), got)
	}
	for i, s := range got {
		if s.p.FilesTotal != 10 {
			t.Errorf("notification %d: total %d, want 10", i, s.p.FilesTotal)
		}
		if i > 0 && s.v <= got[i-1].v {
			t.Errorf("notification %d: value %v does not rise above %v", i, s.v, got[i-1].v)
		}
		if s.v >= float64(s.p.FilesDone)+1 {
			t.Errorf("notification %d: value %v reaches past %d files done", i, s.v, s.p.FilesDone)
		}
	}
	if got[6].v != 1 || got[5].p.ChunksTotal != 64 || got[8].p.ChunksTotal != 130 {
		t.Errorf("repeats carry the latest counts, a real step its own count: %+v", got)
	}
}

func TestProgressRelayRunStops(t *testing.T) {
	n := 0
	r := newProgressRelay(func(float64, pipeline.Progress) { n++ })
	ticks, stop, done := make(chan time.Time), make(chan struct{}), make(chan struct{})
	go func() { r.run(ticks, stop); close(done) }()
	ticks <- time.Time{}
	ticks <- time.Time{} // returns once the first tick is done
	close(stop)
	<-done
	if n != 2 {
		t.Errorf("%d notifications for two silent ticks, want 2", n)
	}
}
