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

// progressRelay passes pipeline progress on as notifications and repeats
// the latest counts when nothing was sent for most of ProgressEvery.
//
// progress counts chunks with their vectors (pipeline.Progress.ChunksDone),
// total is the run's chunk count, given only once every file is chunked
// (ChunksCounted) so it never changes, and omitted before. MCP wants
// progress to rise with each notification: when no chunk finished since
// the last one, the value moves toward the end of the batch in flight
// (ChunksDone + BatchSize, at most the chunks counted) by 1/4, 1/8, 1/12 …
// of what is left: it rises, slowly, as a batch takes tens of seconds on a
// loaded machine, yet never reaches work not done, and a long batch cannot
// run it out of float64 steps. The last chunk's unit waits
// for the run's end (Finished), so the final notification can rise to the
// total while the last files are written and committed. A notification
// that cannot rise (a run with no chunk to embed) is not sent.
type progressRelay struct {
	send func(value float64, total int, p pipeline.Progress, eta string)
	now  func() time.Time

	mu     sync.Mutex
	latest pipeline.Progress
	have   bool      // latest holds a report
	value  float64   // last value sent, -1 before any
	creeps int       // values sent since ChunksDone last moved it
	sentAt time.Time // when the last notification went out
	eta    pipeline.ETA
}

// newProgressRelay makes a relay; send gets total 0 while it is not known.
func newProgressRelay(send func(value float64, total int, p pipeline.Progress, eta string), now func() time.Time) *progressRelay {
	return &progressRelay{send: send, now: now, value: -1}
}

// update takes a report from the pipeline and sends it.
func (r *progressRelay) update(p pipeline.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest, r.have = p, true
	r.emit(r.now())
}

// tick repeats the latest counts if nothing went out for most of
// ProgressEvery; nothing before the pipeline's first report, which comes
// once the file total is known.
func (r *progressRelay) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if now := r.now(); r.have && now.Sub(r.sentAt) >= ProgressEvery-progressTick {
		r.emit(now)
	}
}

// next is the value to send for the latest report; ok is false when no
// value can rise above the last one without claiming work not done.
func (r *progressRelay) next() (v float64, ok bool) {
	p := r.latest
	if p.WaitingFor != "" {
		// Below 1, the first chunk of its own run, which rises from here;
		// by ever smaller steps, as a batch's creep, so an hour's wait
		// does not run out of float64 steps.
		if r.value < 0 {
			return 0, true
		}
		r.creeps++
		v = r.value + (1-r.value)/float64(4*r.creeps)
		return v, v > r.value && v < 1
	}
	if p.Finished {
		v = float64(p.ChunksTotal)
		return v, v > r.value
	}
	done := float64(min(p.ChunksDone, p.ChunksTotal-1))
	if r.value < 0 || done > r.value {
		r.creeps = 0
		return max(done, 0), true
	}
	inFlight := float64(min(p.ChunksDone+max(p.BatchSize, 1), p.ChunksTotal))
	r.creeps++
	v = r.value + (inFlight-r.value)/float64(4*r.creeps)
	return v, v > r.value
}

// emit sends latest with a value above the last one, and the ETA while
// chunks are left. Call with mu held.
func (r *progressRelay) emit(now time.Time) {
	p := r.latest
	v, ok := r.next()
	if !ok {
		return
	}
	total := 0
	if p.ChunksCounted && p.WaitingFor == "" {
		total = p.ChunksTotal
	}
	eta := ""
	if p.WaitingFor == "" { // another run's counts feed no ETA of this one
		if _, left, ok := r.eta.Update(now, p); ok && p.ChunksDone < max(p.ChunksLikely, p.ChunksTotal) {
			eta = left.Round(time.Second).String()
		}
	}
	r.value, r.sentAt = v, now
	r.send(v, total, p, eta)
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
	if !p.ChunksCounted {
		total, approx = max(p.ChunksExpected, p.ChunksTotal), "~"
	}
	s := fmt.Sprintf("files %d/%d, chunks %d/%s%d", p.FilesDone, p.FilesTotal, p.ChunksDone, approx, total)
	if p.WaitingFor != "" {
		return "waiting for the " + p.WaitingFor + " to finish (" + s + "); this reindex runs next"
	}
	if eta != "" {
		s += ", ETA " + eta
	}
	return s
}
