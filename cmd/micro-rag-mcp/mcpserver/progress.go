package mcpserver

import (
	"sync"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// ProgressEvery is how often a reindex with a progress token reports at
// least: the pipeline reports only when its counts move, and one batch of
// 64 chunks can take seconds on a small machine.
const ProgressEvery = time.Second

// progressRelay passes pipeline progress on as notification values and
// repeats the latest counts on every tick that saw none. MCP wants the
// progress value to rise with each notification, so it counts files done
// and a repeat adds half of what is left to the next whole file: it rises
// yet never reaches the count a real step brings. The total is the file
// count, which the pipeline knows in full before any file is read.
type progressRelay struct {
	send func(value float64, p pipeline.Progress)

	mu     sync.Mutex
	latest pipeline.Progress
	value  float64 // last value sent, -1 before any
	fresh  bool    // something was sent since the last tick
}

func newProgressRelay(send func(float64, pipeline.Progress)) *progressRelay {
	return &progressRelay{send: send, value: -1}
}

// update takes a report from the pipeline and sends it.
func (r *progressRelay) update(p pipeline.Progress) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.latest = p
	r.emit()
	r.fresh = true
}

// tick repeats the latest counts unless a report went out since the last tick.
func (r *progressRelay) tick() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.fresh {
		r.emit()
	}
	r.fresh = false
}

// emit sends latest with a value above the last one. Call with mu held.
func (r *progressRelay) emit() {
	v := float64(r.latest.FilesDone)
	if v <= r.value {
		v = r.value + (float64(r.latest.FilesDone)+1-r.value)/2
	}
	r.value = v
	r.send(v, r.latest)
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
