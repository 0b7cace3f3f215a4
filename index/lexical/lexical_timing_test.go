package lexical

import (
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"
)

// cpuTime is the process's user+system CPU time: under a loaded machine it
// measures the work, where wall time measures the queue.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

var benchChunks = flag.String("lexical.chunks", "10000,100000", "comma-separated index sizes for BenchmarkSearch")

// buildSynth indexes n synthetic chunks in commits of batch, as a reindex
// would, and returns the index and its bytes on disk.
func buildSynth(tb testing.TB, dir string, n, batch int) (*Index, int64) {
	s := newSynth(1)
	x := Empty()
	docs := make([]Doc, 0, batch)
	for id := int64(1); id <= int64(n); id++ {
		docs = append(docs, s.doc(id))
		if len(docs) == batch || id == int64(n) {
			next, file, err := x.Add(SegmentName(id), docs, false)
			if err == nil {
				err = os.WriteFile(filepath.Join(dir, SegmentName(id)), file, 0o644)
			}
			if err != nil {
				tb.Fatal(err)
			}
			x = next
			docs = docs[:0]
		}
	}
	var size int64
	for _, r := range x.Segments() {
		size += r.Bytes
	}
	return x, size
}

// BenchmarkBuild measures indexing: tokenizing, building and writing one
// segment of 1000 chunks per iteration (merges excluded).
func BenchmarkBuild(b *testing.B) {
	s := newSynth(2)
	docs := make([]Doc, 1000)
	var text int64
	for i := range docs {
		docs[i] = s.doc(int64(i + 1))
		text += int64(len(docs[i].Body) + len(docs[i].Heading) + len(docs[i].Name))
	}
	dir := b.TempDir()
	b.ReportAllocs()
	b.SetBytes(text)
	var size int64
	cpu0 := cpuTime()
	for b.Loop() {
		x, file, err := Empty().Add("bench.seg", docs, false)
		if err == nil {
			err = os.WriteFile(filepath.Join(dir, "bench.seg"), file, 0o644)
		}
		if err != nil {
			b.Fatal(err)
		}
		size = x.Segments()[0].Bytes
	}
	b.ReportMetric(float64(len(docs))*float64(b.N)/b.Elapsed().Seconds(), "chunks/s")
	b.ReportMetric(float64(len(docs))*float64(b.N)/(cpuTime()-cpu0).Seconds(), "chunks/cpu-s")
	b.ReportMetric(float64(size)/float64(len(docs)), "bytes/chunk")
}

// BenchmarkSearch measures top-10 keyword queries of 2-5 words over indexes
// of -lexical.chunks synthetic chunks built in commits of 5000.
func BenchmarkSearch(b *testing.B) {
	for _, f := range strings.Split(*benchChunks, ",") {
		n, err := strconv.Atoi(f)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(fmt.Sprintf("chunks=%d", n), func(b *testing.B) {
			start, startCPU := time.Now(), cpuTime()
			x, size := buildSynth(b, b.TempDir(), n, 5000)
			build, buildCPU := time.Since(start), cpuTime()-startCPU
			s := newSynth(3)
			queries := make([]string, 200)
			for i := range queries {
				queries[i] = s.query()
			}
			var took []time.Duration
			hits := 0
			b.ReportAllocs()
			i := 0
			cpu0 := cpuTime()
			for b.Loop() {
				t0 := time.Now()
				hits += len(x.Search(queries[i%len(queries)], 10))
				took = append(took, time.Since(t0))
				i++
			}
			cpu := cpuTime() - cpu0
			slices.Sort(took)
			b.ReportMetric(float64(cpu.Microseconds())/1000/float64(b.N), "cpu-ms/op")
			b.ReportMetric(float64(took[len(took)/2].Microseconds())/1000, "ms-p50")
			b.ReportMetric(float64(took[len(took)*99/100].Microseconds())/1000, "ms-p99")
			b.ReportMetric(float64(size)/float64(n), "bytes/chunk")
			b.ReportMetric(float64(n)/build.Seconds(), "build-chunks/s")
			b.ReportMetric(float64(n)/buildCPU.Seconds(), "build-chunks/cpu-s")
			b.ReportMetric(float64(len(x.Segments())), "segments")
			if hits == 0 {
				b.Fatal("no query matched")
			}
		})
	}
}
