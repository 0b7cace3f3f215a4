package scan

import (
	"fmt"
	"sync"
	"testing"
)

const benchDim, benchQueries = 384, 64

// benchData holds seeded unit vectors per row count, built once per process.
var benchData = map[int]func() []float32{
	100_000:   sync.OnceValue(func() []float32 { return randUnit(42, 100_000, benchDim) }),
	1_000_000: sync.OnceValue(func() []float32 { return randUnit(42, 1_000_000, benchDim) }),
}

// benchCodes returns the codes of benchData[rows], built once.
func benchCodes(rows int) *Codes {
	benchCodesMu.Lock()
	defer benchCodesMu.Unlock()
	if c, ok := benchCodesCache[rows]; ok {
		return c
	}
	c, err := Build(benchData[rows](), seqIDs(rows), benchDim)
	if err != nil {
		panic(err)
	}
	benchCodesCache[rows] = c
	return c
}

var (
	benchCodesMu    sync.Mutex
	benchCodesCache = map[int]*Codes{}
)

func reportPerQuery(b *testing.B) {
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/query")
}

// BenchmarkCandidates times Candidates(n=100) with every kernel this CPU
// runs, on one and two goroutines.
func BenchmarkCandidates(b *testing.B) {
	queries := randUnit(43, benchQueries, benchDim)
	for _, rows := range []int{100_000, 1_000_000} {
		for _, k := range allKernels {
			if !hasKernel(k) {
				continue
			}
			for _, workers := range []int{1, 2} {
				name := fmt.Sprintf("rows=%d/kernel=%s/workers=%d", rows, kernelNames[k], workers)
				b.Run(name, func(b *testing.B) {
					c := benchCodes(rows)
					dst := make([]int32, 0, 100)
					b.SetBytes(int64(rows) * int64(c.stride)) // code bytes scanned per query
					b.ReportAllocs()
					i := 0
					for b.Loop() {
						q := queries[(i%benchQueries)*benchDim : (i%benchQueries+1)*benchDim]
						dst = c.candidates(q, 100, workers, dst[:0], k)
						i++
					}
					if len(dst) != 100 {
						b.Fatalf("%d candidates", len(dst))
					}
					reportPerQuery(b)
				})
			}
		}
	}
}

// BenchmarkFP32Reference is the exact float32 scan in plain Go (eight
// accumulators, top-100 kept by insertion), one goroutine, for comparison.
func BenchmarkFP32Reference(b *testing.B) {
	queries := randUnit(43, benchQueries, benchDim)
	for _, rows := range []int{100_000, 1_000_000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) {
			vecs := benchData[rows]()
			top := make([]int32, 0, 100)
			scores := make([]float32, 0, 100)
			b.SetBytes(int64(len(vecs)) * 4)
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				q := queries[(i%benchQueries)*benchDim : (i%benchQueries+1)*benchDim]
				top, scores = fp32Top(vecs, q, 100, top[:0], scores[:0])
				i++
			}
			if len(top) != 100 {
				b.Fatalf("%d results", len(top))
			}
			reportPerQuery(b)
		})
	}
}

func fp32Top(vecs, q []float32, n int, top []int32, scores []float32) ([]int32, []float32) {
	dim := len(q)
	for r := 0; r*dim < len(vecs); r++ {
		x := vecs[r*dim : (r+1)*dim : (r+1)*dim]
		var s0, s1, s2, s3, s4, s5, s6, s7 float32
		for j := 0; j+8 <= dim; j += 8 {
			s0 += x[j] * q[j]
			s1 += x[j+1] * q[j+1]
			s2 += x[j+2] * q[j+2]
			s3 += x[j+3] * q[j+3]
			s4 += x[j+4] * q[j+4]
			s5 += x[j+5] * q[j+5]
			s6 += x[j+6] * q[j+6]
			s7 += x[j+7] * q[j+7]
		}
		s := s0 + s1 + s2 + s3 + s4 + s5 + s6 + s7
		if len(top) == n && s <= scores[n-1] {
			continue
		}
		p := len(top)
		if p < n {
			top, scores = append(top, 0), append(scores, 0)
		} else {
			p = n - 1
		}
		for ; p > 0 && scores[p-1] < s; p-- {
			top[p], scores[p] = top[p-1], scores[p-1]
		}
		top[p], scores[p] = int32(r), s
	}
	return top, scores
}

// BenchmarkBuild times quantising 100k rows.
func BenchmarkBuild(b *testing.B) {
	vecs := benchData[100_000]()
	b.SetBytes(int64(len(vecs)) * 4)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := Build(vecs, seqIDs(len(vecs)/benchDim), benchDim); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/build")
}

// BenchmarkEdit times one commit's edit of 1M-row codes (10 rows removed,
// 10 added): "shared" is Edit as commits run it, sharing the
// base block; "copy-all" also compacts every time, which is what an edit
// cost before the base was shared (every row copied).
func BenchmarkEdit(b *testing.B) {
	const rows = 1_000_000
	add := randUnit(44, 10, benchDim)
	base := benchCodes(rows)
	for _, all := range []bool{false, true} {
		name := "shared"
		if all {
			name = "copy-all"
		}
		b.Run(name, func(b *testing.B) {
			c, next := base, int64(rows)
			b.ReportAllocs()
			for b.Loop() {
				remove := make([]int64, 10)
				for i := range remove {
					remove[i] = (next*7919 + int64(i)*104729) % rows
				}
				addIDs := []int64{next, next + 1, next + 2, next + 3, next + 4, next + 5, next + 6, next + 7, next + 8, next + 9}
				next += 10
				edited, err := c.Edit(remove, addIDs, add)
				if err != nil {
					b.Fatal(err)
				}
				if all {
					edited.compact()
				}
				c = edited
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/edit")
		})
	}
}
