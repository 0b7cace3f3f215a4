package bench

import (
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"runtime"
	"runtime/debug"
	"runtime/pprof"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
)

var (
	commitSizes = flag.String("commit.sizes", "100k,1M", "index sizes for the commit benchmark")
	commitHeap  = flag.String("commit.heapprofile", "", "write a heap profile of the idle index (last size) to this file")
	ampSize     = flag.String("commit.ampsize", "10k", "index size for the write-amplification run (\"\" skips it)")
)

// commitFileChunks is the size of every synthetic file, and of the change.
const commitFileChunks = 10

// BenchmarkCommit measures what a commit costs at a given index size, with
// vectors injected straight into the store (no model): one file of 10
// chunks replaced per op (commit-ms; begin-ms is the writer's Begin before it), the bytes the process wrote for it
// (written-MB, from /proc/self/io), and the resident memory idle and at its
// peak during the commits, beside the size of the vectors and of their scan
// codes. Then a background merge of the segments into faiss.index while
// one-file commits go on: merge-ms is the merge's time to build and write
// the new faiss.index, commit-during-merge-ms the commits' time meanwhile
// (commits-during-merge of them), merge-peak-RSS-MB the peak resident
// memory then. A last sub-benchmark
// measures write amplification over a long run of one-file commits.
func BenchmarkCommit(b *testing.B) {
	for _, size := range strings.Split(*commitSizes, ",") {
		n := parseSize(size)
		b.Run("chunks="+strings.TrimSpace(size), func(b *testing.B) {
			dir := b.TempDir()
			version := schema.Version{Schema: schema.SchemaVersion, Model: "bench-commit", Dim: embed.Dim, ChunkSize: 1000, ChunkOverlap: 200, MaxTokens: 256}
			s, err := localstore.Open(dir, version, index.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			// Clustered vectors around 128 random centres: no model needed.
			centres := syntheticVectors(128, make([]float32, embed.Dim), 7)
			vecs := syntheticVectors(n, centres, uint64(n))
			start := time.Now()
			w, err := s.Begin()
			if err != nil {
				b.Fatal(err)
			}
			for f := 0; f*commitFileChunks < n; f++ {
				lo, hi := f*commitFileChunks, min((f+1)*commitFileChunks, n)
				putSynthetic(b, w, f, vecs[lo*embed.Dim:hi*embed.Dim])
			}
			if err := w.Commit(true); err != nil {
				b.Fatal(err)
			}
			w.Close()
			cold := time.Since(start)
			vecs = nil
			runtime.GC()
			debug.FreeOSMemory()
			idleKB := procStatus(b, "VmRSS")
			var ms runtime.MemStats
			runtime.ReadMemStats(&ms)
			if *commitHeap != "" {
				writeHeapProfile(b, *commitHeap)
			}
			// Writing 5 to clear_refs resets VmHWM to the current RSS.
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Fatal(err)
			}
			rng := rand.New(rand.NewPCG(uint64(n), 1))
			written := procIO(b, "write_bytes")
			var took, began time.Duration
			b.ResetTimer()
			for i := 0; b.Loop(); i++ {
				change := syntheticVectors(commitFileChunks, centres, rng.Uint64())
				tb := time.Now()
				w, err := s.Begin()
				if err != nil {
					b.Fatal(err)
				}
				began += time.Since(tb)
				putSynthetic(b, w, i%max(1, n/commitFileChunks), change)
				t0 := time.Now()
				if err := w.Commit(true); err != nil {
					b.Fatal(err)
				}
				took += time.Since(t0)
				w.Close()
			}
			b.StopTimer()
			peakKB := procStatus(b, "VmHWM")
			commitMS := float64(took.Milliseconds()) / float64(b.N)
			writtenMB := float64(procIO(b, "write_bytes")-written) / float64(b.N) / (1 << 20)
			// A background merge of the segments into a new faiss.index,
			// with one-file commits going on until it is installed.
			if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
				b.Fatal(err)
			}
			if !s.StartMerge() {
				b.Fatal("no background merge started")
			}
			var during time.Duration
			commits := 0
			for ; s.MergeStats().Running && commits < 10000; commits++ {
				w, err := s.Begin()
				if err != nil {
					b.Fatal(err)
				}
				putSynthetic(b, w, commits%max(1, n/commitFileChunks), syntheticVectors(commitFileChunks, centres, rng.Uint64()))
				t0 := time.Now()
				if err := w.Commit(true); err != nil {
					b.Fatal(err)
				}
				during += time.Since(t0)
				w.Close()
			}
			if err := s.WaitMerge(); err != nil {
				b.Fatal(err)
			}
			merged := s.MergeStats()
			if merged.Merges < 2 { // the cold commit's and this one
				b.Fatalf("background merge not installed: %+v", merged)
			}
			b.ReportMetric(float64(merged.Last.Milliseconds()), "merge-ms")
			b.ReportMetric(float64(during.Milliseconds())/float64(max(1, commits)), "commit-during-merge-ms")
			b.ReportMetric(float64(commits), "commits-during-merge")
			b.ReportMetric(float64(procStatus(b, "VmHWM"))/1024, "merge-peak-RSS-MB")
			b.ReportMetric(commitMS, "commit-ms")
			b.ReportMetric(float64(began.Microseconds())/1e3/float64(b.N), "begin-ms")
			b.ReportMetric(writtenMB, "written-MB")
			b.ReportMetric(float64(cold.Milliseconds()), "cold-ms")
			b.ReportMetric(float64(idleKB)/1024, "idle-RSS-MB")
			b.ReportMetric(float64(ms.HeapInuse)/(1<<20), "idle-Go-heap-MB")
			b.ReportMetric(float64(peakKB)/1024, "commit-peak-RSS-MB")
			b.ReportMetric(float64(n*embed.Dim*4)/(1<<20), "vectors-MB")
			b.ReportMetric(float64(n*embed.Dim/2)/(1<<20), "codes-MB")
		})
	}
	if *ampSize != "" {
		b.Run("write-amp chunks="+*ampSize, benchWriteAmp)
	}
}

// benchWriteAmp runs one-file commits (10 chunks replaced) on an index of
// -commit.ampsize chunks with the default merge policy; one op lasts until
// one more background merge is installed. write-amp is what the vectors
// cost on disk: bytes written as faiss.index files and vector segments
// over the bytes of the vectors the commits added.
func benchWriteAmp(b *testing.B) {
	n := parseSize(*ampSize)
	version := schema.Version{Schema: schema.SchemaVersion, Model: "bench-commit", Dim: embed.Dim, ChunkSize: 1000, ChunkOverlap: 200, MaxTokens: 256}
	s, err := localstore.Open(b.TempDir(), version, index.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	centres := syntheticVectors(128, make([]float32, embed.Dim), 7)
	vecs := syntheticVectors(n, centres, uint64(n))
	w, err := s.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for f := 0; f*commitFileChunks < n; f++ {
		putSynthetic(b, w, f, vecs[f*commitFileChunks*embed.Dim:min((f+1)*commitFileChunks, n)*embed.Dim])
	}
	if err := w.Commit(true); err != nil {
		b.Fatal(err)
	}
	w.Close()
	before := s.MergeStats()
	rng := rand.New(rand.NewPCG(uint64(n), 2))
	commits := 0
	for b.Loop() {
		merges := s.MergeStats().Merges
		for s.MergeStats().Merges == merges {
			w, err := s.Begin()
			if err != nil {
				b.Fatal(err)
			}
			putSynthetic(b, w, rng.IntN(max(1, n/commitFileChunks)), syntheticVectors(commitFileChunks, centres, rng.Uint64()))
			if err := w.Commit(true); err != nil {
				b.Fatal(err)
			}
			w.Close()
			commits++
			if commits%64 == 0 {
				// Let a merge that is writing finish, as it would between
				// commits spaced by a real reindex.
				if err := s.WaitMerge(); err != nil {
					b.Fatal(err)
				}
			}
		}
	}
	after := s.MergeStats()
	added := float64(commits * commitFileChunks * embed.Dim * 4)
	b.ReportMetric(float64(after.FaissBytes-before.FaissBytes+after.SegmentBytes-before.SegmentBytes)/added, "write-amp")
	b.ReportMetric(float64(after.FaissBytes-before.FaissBytes)/added, "faiss-write-amp")
	b.ReportMetric(float64(commits)/float64(after.Merges-before.Merges), "commits/merge")
}

// putSynthetic replaces synthetic file number f with vecs.
func putSynthetic(b *testing.B, w *localstore.Writer, f int, vecs []float32) {
	n := len(vecs) / embed.Dim
	recs := make([]schema.Record, n)
	for i := range recs {
		text := fmt.Sprintf("Synthetic chunk %d of file %d of the commit benchmark.", i, f)
		recs[i] = schema.Record{ChunkIndex: i, CharEnd: len(text), Text: text}
	}
	entry := schema.FileEntry{Path: fmt.Sprintf("syn/%03d/%06d.txt", f%1000, f), Mtime: 1, Size: 1, Checksum: "sha256:" + strconv.Itoa(f), Ext: ".txt"}
	if err := w.PutFile(entry, recs, vecs); err != nil {
		b.Fatal(err)
	}
}

// procIO reads one counter of /proc/self/io.
func procIO(b *testing.B, key string) int64 {
	return procField(b, "/proc/self/io", key)
}

func writeHeapProfile(b *testing.B, path string) {
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	if err := pprof.WriteHeapProfile(f); err != nil {
		b.Fatal(err)
	}
}
