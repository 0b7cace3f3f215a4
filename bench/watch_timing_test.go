package bench

import (
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
	"github.com/micro-rag/micro-rag-mcp/engine"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

var (
	watchFiles = flag.Int("watch.files", 300, "files in the folder the watch benchmarks follow")
	idleFor    = flag.Duration("watch.idle", 20*time.Second, "how long BenchmarkWatchIdleCPU measures an idle engine")
)

// watchedEngine indexes a corpus copy and starts following it, as the
// server does by default (settle time 1 s).
func watchedEngine(b *testing.B, watch bool) (e *engine.Engine, data string) {
	b.Helper()
	c := buildCorpus(b, corpus.Config{Seed: 7, Files: *watchFiles, Exts: []string{".txt", ".md"}, MinChars: 200, MaxChars: 1500})
	data = filepath.Join(b.TempDir(), "data")
	copyTree(b, c.Dir, data)
	e = openEngine(b, data, filepath.Join(b.TempDir(), "index"), nil, func(c *engine.Config) { c.Watch = watch })
	res := reindex(b, e)
	b.Logf("indexed %d files, %d chunks", res.FilesAdded, res.ChunksTotal)
	return e, data
}

// BenchmarkWatchSaveToHit is the time from saving a new file to its first
// search hit with the server's default settle time of 1 s: the goal is at
// most 3 s after the write settles. Each round saves a file with a
// sentence no other file has and searches every 20 ms until it ranks first.
func BenchmarkWatchSaveToHit(b *testing.B) {
	e, data := watchedEngine(b, true)
	const settle = time.Second
	var total, worst time.Duration
	saves := 0
	for b.Loop() {
		for range savesPerOp {
			d := saveAndFind(b, e, data, saves)
			total += d
			worst = max(worst, d)
			saves++
		}
	}
	mean := total / time.Duration(saves)
	b.ReportMetric(float64(mean.Milliseconds()), "ms/save-to-hit")
	b.ReportMetric(float64((mean - settle).Milliseconds()), "ms-after-settle")
	b.ReportMetric(float64(worst.Milliseconds()), "worst-ms")
}

// savesPerOp gives several samples even at -benchtime 1x.
const savesPerOp = 5

// saveAndFind writes one new file and returns how long until a search
// finds it first.
func saveAndFind(b *testing.B, e *engine.Engine, data string, round int) time.Duration {
	name := fmt.Sprintf("saved/note-%d.md", round)
	text := fmt.Sprintf("Round %d: the quartermaster counted %d brass lanterns in the lighthouse cellar.", round, 1000+round)
	if err := os.MkdirAll(filepath.Join(data, "saved"), 0o755); err != nil {
		b.Fatal(err)
	}
	start := time.Now()
	if err := os.WriteFile(filepath.Join(data, name), []byte(text), 0o644); err != nil {
		b.Fatal(err)
	}
	for {
		res, err := e.Search(context.Background(), isearch.Request{Query: text, TopK: 1})
		if err != nil {
			b.Fatal(err)
		}
		if len(res) > 0 && res[0].Path == name {
			break
		}
		if time.Since(start) > time.Minute {
			b.Fatalf("%s not found within a minute", name)
		}
		time.Sleep(20 * time.Millisecond)
	}
	return time.Since(start)
}

// BenchmarkWatchIdleCPU is the CPU an idle engine uses while following a
// folder (goal: about zero), beside one that does not watch, from this
// process's getrusage over -watch.idle. The engine also polls the index
// every 2 s for other processes' commits; both variants include that.
func BenchmarkWatchIdleCPU(b *testing.B) {
	for _, watch := range []bool{true, false} {
		b.Run(fmt.Sprintf("watch=%v", watch), func(b *testing.B) {
			watchedEngine(b, watch)     // indexed; idle from here on
			time.Sleep(3 * time.Second) // let the last commit and GC settle
			for b.Loop() {
				before := cpuTime(b)
				time.Sleep(*idleFor)
				used := cpuTime(b) - before
				b.ReportMetric(float64(used.Microseconds())/1e3/idleFor.Seconds(), "cpu-ms/s")
				b.ReportMetric(100*used.Seconds()/idleFor.Seconds(), "cpu-%")
			}
		})
	}
}

// cpuTime is the user plus system CPU this process has used.
func cpuTime(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
