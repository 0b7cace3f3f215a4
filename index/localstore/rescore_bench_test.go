package localstore

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/scan"
)

// BenchmarkScanSearch1M times a snapshot's scan-then-rescore search over
// 1M clustered 384-dim vectors for k=30 (what a top-10 engine search asks
// for): ms/query end to end, and candidates-ms for the first pass alone,
// so the rest is the exact rescoring from FAISS. It runs twice, as the
// load of other jobs varies.
func BenchmarkScanSearch1M(b *testing.B) {
	const n, dim, nq, k = 1_000_000, 384, 32, 30
	vecs := clusteredVectors(n+nq, dim)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	idx, err := newIndex(dim)
	if err != nil {
		b.Fatal(err)
	}
	if err := idx.AddWithIDs(vecs[:n*dim], ids); err != nil {
		b.Fatal(err)
	}
	queries := vecs[n*dim:]
	l := newLayered(idx)
	defer l.Close()
	for run := range 2 {
		b.Run(fmt.Sprintf("run=%d", run+1), func(b *testing.B) {
			stored, _, err := l.Export(nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			codes, err := scan.Build(stored, ids, dim)
			if err != nil {
				b.Fatal(err)
			}
			stored = nil
			runtime.GC() // the exported copy is 1.5 GB: not on the timed path
			sn := &Snapshot{index: l, codes: codes}
			var cand, all time.Duration
			for i := 0; b.Loop(); i++ {
				q := queries[(i%nq)*dim : (i%nq+1)*dim]
				// Interleaved so the load of other jobs hits both alike.
				start := time.Now()
				codes.Candidates(q, scanWant(k), 0, nil)
				mid := time.Now()
				sn.rescored(q, k)
				cand, all = cand+mid.Sub(start), all+time.Since(mid)
			}
			b.ReportMetric(float64(all.Nanoseconds())/1e6/float64(b.N), "ms/query")
			b.ReportMetric(float64(cand.Nanoseconds())/1e6/float64(b.N), "candidates-ms")
		})
	}
}

// clusteredVectors returns n unit vectors around 128 random centres, with
// noise of about the centre's norm (like bench's synthetic vectors).
func clusteredVectors(n, dim int) []float32 {
	rng := rand.New(rand.NewPCG(9, 9))
	centres := make([]float64, 128*dim)
	for i := range centres {
		centres[i] = rng.NormFloat64()
	}
	out := make([]float32, n*dim)
	var wg sync.WaitGroup
	for p := range 2 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(10, uint64(p)))
			x := make([]float64, dim)
			for i := p * n / 2; i < (p+1)*n/2; i++ {
				c := centres[r.IntN(128)*dim:]
				norm := 0.0
				for j := range x {
					x[j] = c[j] + r.NormFloat64()
					norm += x[j] * x[j]
				}
				for j := range x {
					out[i*dim+j] = float32(x[j] / math.Sqrt(norm))
				}
			}
		})
	}
	wg.Wait()
	return out
}
