package mcpserver

import (
	"fmt"
	"sync"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// ProgressEvery is the longest a reindex with a progress token goes
// without a notification: the pipeline reports only when its counts move,
// and one batch of 64 chunks can take seconds on a small machine.
const ProgressEvery = time.Second

// progressTick is how often the relay checks for a silent stretch. A repeat
// goes out once ProgressEvery−progressTick passed since the last send, so
// no gap exceeds ProgressEvery (a repeat only on a whole ProgressEvery tick
// left gaps of up to two seconds after a report just past a tick).
const progressTick = ProgressEvery / 4

// progressRelay passes pipeline progress on as notification values and
// repeats the latest counts when nothing was sent for most of ProgressEvery.
// MCP wants the progress value to rise with each notification, so it counts
// files done and a repeat adds half of what is left to the next whole file:
// it rises yet never reaches the count a real step brings. The total is the
// file count, which the pipeline knows in full before any file is read.
type progressRelay struct {
	send func(value float64, p pipeline.Progress, eta string)
	now  func() time.Time

	mu     sync.Mutex
	latest pipeline.Progress
	value  float64   // last value sent, -1 before any
	sentAt time.Time // when the last notification went out
	eta    pipeline.ETA
}

func newProgressRelay(send func(float64, pipeline.Progress, string), now func() time.Time) *progressRelay {
	return &progressRelay{send: send, now: now, value: -1}
}

// update takes a report from the pipeline and sends it.
func (r *progressRelay) update(p pipeline.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest = p
	r.emit(r.now())
}

// tick repeats the latest counts if nothing went out for most of ProgressEvery.
func (r *progressRelay) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); now.Sub(r.sentAt) >= ProgressEvery-progressTick {
		r.emit(now)
	}
}

// emit sends latest with a value above the last one, and the ETA while
// chunks are left. Call with mu held.
func (r *progressRelay) emit(now time.Time) {
	p := r.latest
	v := float64(p.FilesDone)
	if v <= r.value {
		v = r.value + (float64(p.FilesDone)+1-r.value)/2
	}
	eta := ""
	if _, left, ok := r.eta.Update(now, p); ok && p.ChunksDone < max(p.ChunksLikely, p.ChunksTotal) {
		eta = left.Round(time.Second).String()
	}
	r.value, r.sentAt = v, now
	r.send(v, p, eta)
}

// run ticks on every value from ticks until stop closes.
func (r *progressRelay) run(ticks <-chan time.Time, stop <-chan struct{}) {
	for {
		select {
		case <-stop:
			return
		case <-ticks:
			r.tick()
		}
	}
}

// progressMessage is a notification's message: files and chunks done of
// their totals, the chunk total marked "~" while it is still a projection
// (pipeline.Progress.ChunksExpected), and the ETA when known.
func progressMessage(p pipeline.Progress, eta string) string {
	total, approx := p.ChunksTotal, ""
	if p.ChunksExpected > p.ChunksTotal || (p.BytesTotal > 0 && p.BytesDone < p.BytesTotal) {
		total, approx = max(p.ChunksExpected, p.ChunksTotal), "~"
	}
	s := fmt.Sprintf("files %d/%d, chunks %d/%s%d", p.FilesDone, p.FilesTotal, p.ChunksDone, approx, total)
	if eta != "" {
		s += ", ETA " + eta
	}
	return s
}
