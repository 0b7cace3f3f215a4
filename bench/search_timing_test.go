package bench

import (
	"container/heap"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// queries are what a user of a folder of licences and package notes might
// ask; they are embedded by the real model inside the timed search.
var queries = []string{
	"warranty disclaimer for free software",
	"can I redistribute modified versions of the library",
	"who holds the copyright for this package",
	"security fix for a buffer overflow",
	"how to report a bug",
	"command line option to print the version",
	"patent license granted by contributors",
	"the program is provided as is without any warranty",
	"list directory contents sorted by time",
	"compile with optimisation flags",
	"new upstream release with bug fixes",
	"configuration file location in the home directory",
	"public domain dedication",
	"attribution required when sharing the work",
	"license compatibility with GPL version 3",
	"fixed a memory leak in the parser",
	"environment variables that change behaviour",
	"exit status on error",
	"the source code must be made available",
	"termination of the license on violation",
	"dependencies and build requirements",
	"translation updates for several languages",
	"regular expression syntax for matching lines",
	"encrypt files with a public key",
	"network connection timeout settings",
	"the maintainer changed and the package was adopted",
	"obligations when distributing binaries",
	"trademark use is not granted",
	"print help text and exit",
	"compress and decompress archives",
	"documentation is licensed under the GFDL",
	"Debian specific changes to the upstream sources",
	"unicode and character encoding support",
	"thread safety of the library functions",
	"how to cite or acknowledge the authors",
	"deprecated options removed in this version",
	"the manual page describes the commands",
	"limitation of liability for damages",
	"files are installed under /usr/share",
	"interactive mode reads commands from standard input",
}

var bases struct {
	once sync.Once
	vecs []float32
}

// baseVectors are the embeddings of 128 real corpus chunks; synthetic
// vectors scatter around them so the index has the clustered, anisotropic
// shape of real embeddings rather than uniform noise.
func baseVectors(b *testing.B) []float32 {
	bases.once.Do(func() {
		v, err := embedder(b).Embed(nil, longChunks(b, 128))
		if err != nil {
			b.Fatal(err)
		}
		bases.vecs = v
	})
	return bases.vecs
}

// syntheticVectors makes n normalised vectors: a random base vector plus
// Gaussian noise of about the same norm (cosine to its base ≈ 0.7).
func syntheticVectors(n int, base []float32, seed uint64) []float32 {
	const dim = embed.Dim
	nb := len(base) / dim
	out := make([]float32, n*dim)
	var wg sync.WaitGroup
	const parts = 2
	for p := range parts {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(seed, uint64(p)))
			sigma := 1 / math.Sqrt(dim)
			for i := p * n / parts; i < (p+1)*n/parts; i++ {
				v, bv := out[i*dim:(i+1)*dim], base[rng.IntN(nb)*dim:]
				var norm float64
				for j := range v {
					x := float64(bv[j]) + rng.NormFloat64()*sigma
					v[j] = float32(x)
					norm += x * x
				}
				inv := float32(1 / math.Sqrt(norm))
				for j := range v {
					v[j] *= inv
				}
			}
		})
	}
	wg.Wait()
	return out
}

// engineVersion is the index version the engine expects, so an engine opens
// the synthetic index instead of rebuilding it.
func engineVersion(b *testing.B) schema.Version {
	files, err := model.Locate("")
	if err != nil {
		b.Fatal(err)
	}
	v, err := engine.IndexVersion(model.DefaultName, files.ONNX)
	if err != nil {
		b.Fatal(err)
	}
	return v
}

const chunksPerFile = 1000

// writeIndex commits vecs into a real index store as files of 1000 chunks
// with short synthetic texts.
func writeIndex(b *testing.B, dir string, vecs []float32) {
	s, err := localstore.Open(dir, engineVersion(b), index.Options{})
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	w, err := s.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	n := len(vecs) / embed.Dim
	recs := make([]schema.Record, 0, chunksPerFile)
	for f := 0; f*chunksPerFile < n; f++ {
		recs = recs[:0]
		lo, hi := f*chunksPerFile, min((f+1)*chunksPerFile, n)
		for i := lo; i < hi; i++ {
			text := fmt.Sprintf("Synthetic chunk %d of the search benchmark.", i)
			// Apart, so search's passage merging keeps every chunk its own hit.
			at := (i - lo) * 1000
			recs = append(recs, schema.Record{ChunkIndex: i - lo, CharStart: at, CharEnd: at + len(text), Text: text})
		}
		entry := schema.FileEntry{Path: fmt.Sprintf("syn/%05d.txt", f), Mtime: 1, Size: 1, Checksum: "sha256:" + strconv.Itoa(f), Ext: ".txt"}
		if err := w.PutFile(entry, recs, vecs[lo*embed.Dim:hi*embed.Dim]); err != nil {
			b.Fatal(err)
		}
	}
	if err := w.Commit(true); err != nil {
		b.Fatal(err)
	}
}

type scored struct {
	id    int
	score float32
}
type minHeap []scored

func (h minHeap) Len() int           { return len(h) }
func (h minHeap) Less(i, j int) bool { return h[i].score < h[j].score }
func (h minHeap) Swap(i, j int)      { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)        { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any          { o := *h; x := o[len(o)-1]; *h = o[:len(o)-1]; return x }

// exactTop returns the ids of the k best inner products, best first, by a
// brute-force scan in two goroutines.
func exactTop(vecs, q []float32, k int) []int {
	const dim = embed.Dim
	n := len(vecs) / dim
	const parts = 2
	tops := make([]minHeap, parts)
	var wg sync.WaitGroup
	for p := range parts {
		wg.Go(func() {
			h := &minHeap{}
			for i := p * n / parts; i < (p+1)*n/parts; i++ {
				v := vecs[i*dim : (i+1)*dim : (i+1)*dim]
				var s0, s1, s2, s3 float32
				for j := 0; j < dim; j += 4 {
					s0 += v[j] * q[j]
					s1 += v[j+1] * q[j+1]
					s2 += v[j+2] * q[j+2]
					s3 += v[j+3] * q[j+3]
				}
				s := s0 + s1 + s2 + s3
				if h.Len() < k {
					heap.Push(h, scored{i, s})
				} else if s > (*h)[0].score {
					(*h)[0] = scored{i, s}
					heap.Fix(h, 0)
				}
			}
			tops[p] = *h
		})
	}
	wg.Wait()
	all := slices.Concat(tops...)
	slices.SortFunc(all, func(a, b scored) int {
		if a.score > b.score {
			return -1
		}
		if a.score < b.score {
			return 1
		}
		return 0
	})
	ids := make([]int, 0, k)
	for _, s := range all[:min(k, len(all))] {
		ids = append(ids, s.id)
	}
	return ids
}

func percentile(d []time.Duration, p float64) float64 {
	s := slices.Clone(d)
	slices.Sort(s)
	i := int(math.Ceil(p*float64(len(s)))) - 1
	return float64(s[max(i, 0)].Microseconds()) / 1e3
}

func parseSize(s string) int {
	s = strings.TrimSpace(s)
	mult := 1
	switch {
	case strings.HasSuffix(s, "k"):
		mult, s = 1000, strings.TrimSuffix(s, "k")
	case strings.HasSuffix(s, "M"):
		mult, s = 1000000, strings.TrimSuffix(s, "M")
	}
	n, err := strconv.Atoi(s)
	if err != nil {
		panic("bad -search.sizes entry " + s)
	}
	return n * mult
}

// BenchmarkSearch measures Engine.Search (query embedding by the real model,
// the wired search over a real index, manifest lookups, snippets) on
// synthetic normalised vectors committed once per size outside the loop.
// One op runs every query once; p50/p95 are per query. recall@10 compares
// the engine's top 10 with an exact brute-force top 10 on the same vectors;
// exact-ms is that brute-force scan's time per query (Go, two goroutines).
// mode=dense and mode=hybrid search the same index; hybrid adds the keyword
// ranking and fusion (its recall@10 against the dense truth says how far
// keywords reorder the list, not a loss). -search.scanbits=8,4 runs every
// size and mode with each width of the first pass's codes in turn.
func BenchmarkSearch(b *testing.B) {
	for _, size := range strings.Split(*searchSizes, ",") {
		n := parseSize(size)
		var vecs []float32
		var dir string
		for _, run := range searchRuns(b) {
			mode := run.mode
			b.Run("chunks="+strings.TrimSpace(size)+"/mode="+string(mode)+run.suffix, func(b *testing.B) {
				if vecs == nil {
					// One index per size, shared by both modes.
					vecs = syntheticVectors(n, baseVectors(b), uint64(n))
					var err error
					if dir, err = os.MkdirTemp("", "search-bench-"); err != nil {
						b.Fatal(err)
					}
					writeIndex(b, filepath.Join(dir, "index"), vecs)
					if err := os.Mkdir(filepath.Join(dir, "data"), 0o755); err != nil {
						b.Fatal(err)
					}
				}
				e := openEngine(b, filepath.Join(dir, "data"), filepath.Join(dir, "index"), nil,
					func(c *engine.Config) { c.SearchMode = mode })
				if st := e.Status(); st.Chunks != n {
					b.Fatalf("engine sees %d chunks, wrote %d (index version mismatch?)", st.Chunks, n)
				}
				ctx := context.Background()
				req := func(q string) isearch.Request {
					return isearch.Request{Query: q, TopK: 10, ScoreThreshold: -1}
				}
				// Exact answers and recall, outside the timing.
				emb := embedder(b)
				hits, total := 0, 0
				var exact []time.Duration
				for _, q := range queries {
					qv, err := emb.Embed(nil, []string{q})
					if err != nil {
						b.Fatal(err)
					}
					start := time.Now()
					want := exactTop(vecs, qv, 10)
					exact = append(exact, time.Since(start))
					res, err := e.Search(ctx, req(q))
					if err != nil {
						b.Fatal(err)
					}
					got := map[int]bool{}
					for _, r := range res {
						f, err := strconv.Atoi(strings.TrimSuffix(strings.TrimPrefix(r.Path, "syn/"), ".txt"))
						if err != nil {
							b.Fatalf("unexpected path %q", r.Path)
						}
						got[f*chunksPerFile+r.ChunkIndex] = true
					}
					for _, id := range want {
						if got[id] {
							hits++
						}
					}
					total += len(want)
				}
				// Query embedding alone, for the split of the latency.
				var embedOnly []time.Duration
				for _, q := range queries {
					start := time.Now()
					if _, err := emb.Embed(nil, []string{q}); err != nil {
						b.Fatal(err)
					}
					embedOnly = append(embedOnly, time.Since(start))
				}
				var lat []time.Duration
				b.ReportAllocs()
				b.ResetTimer()
				for b.Loop() {
					for _, q := range queries {
						start := time.Now()
						res, err := e.Search(ctx, req(q))
						lat = append(lat, time.Since(start))
						if err != nil || len(res) != 10 {
							b.Fatalf("search %q: %d results, %v", q, len(res), err)
						}
					}
				}
				b.StopTimer()
				b.ReportMetric(percentile(lat, 0.50), "p50-ms")
				b.ReportMetric(percentile(lat, 0.95), "p95-ms")
				b.ReportMetric(percentile(embedOnly, 0.50), "embed-p50-ms")
				b.ReportMetric(float64(hits)/float64(total), "recall@10")
				b.ReportMetric(percentile(exact, 0.50), "exact-ms")
				e.Close()
			})
		}
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
}

// searchRun is one BenchmarkSearch configuration of a size.
type searchRun struct {
	mode   isearch.Mode
	suffix string // of the sub-benchmark's name
}

// searchRuns lists dense and hybrid.
func searchRuns(*testing.B) []searchRun {
	return []searchRun{{mode: isearch.Dense}, {mode: isearch.Hybrid}}
}
