package scan

import (
	"cmp"
	"fmt"
	"math"
	"math/bits"
	"math/rand/v2"
	"slices"
	"sync"
	"testing"
)

// This file measures a cheaper first pass than the int8 scan, binary sign
// codes (one bit per dimension, Hamming distance by popcount), against the
// int8 pass at 1M rows, each followed by exact fp32 rescoring read from a
// contiguous slice. It reports time per query and recall@10 against the
// exact top 10, so the trade can be judged before wiring it into the index.
// On the clustered, anisotropic "cone" data sign codes lose too much: even
// 16,000 rescored candidates leave recall@10 far below the int8 pass's.

// meanOf is the mean row: sign codes are taken about it, since embeddings
// share a common direction that would otherwise set most bits alike.
func meanOf(vecs []float32, dim int) []float32 {
	sum := make([]float64, dim)
	for i, x := range vecs {
		sum[i%dim] += float64(x)
	}
	out := make([]float32, dim)
	for j, s := range sum {
		out[j] = float32(s / float64(len(vecs)/dim))
	}
	return out
}

// signCodes packs the signs of each row minus mean into dim/64 words.
func signCodes(vecs []float32, dim int, mean []float32) []uint64 {
	words := dim / 64
	n := len(vecs) / dim
	out := make([]uint64, n*words)
	for r := range n {
		for j, x := range vecs[r*dim : (r+1)*dim] {
			if x > mean[j] {
				out[r*words+j/64] |= 1 << (j % 64)
			}
		}
	}
	return out
}

// hammingTop returns the rows of the m smallest Hamming distances to q (ties
// beyond m cut arbitrarily), scanning in two goroutines and selecting by a
// histogram of distances instead of a heap.
func hammingTop(codes []uint64, words int, q []uint64, m int, dist []uint16) []int32 {
	n := len(codes) / words
	var wg sync.WaitGroup
	hist := make([][]int, 2)
	for p := range 2 {
		hist[p] = make([]int, words*64+1)
		wg.Go(func() {
			h := hist[p]
			for r := p * n / 2; r < (p+1)*n/2; r++ {
				row := codes[r*words : (r+1)*words : (r+1)*words]
				d := 0
				for w, x := range row {
					d += bits.OnesCount64(x ^ q[w])
				}
				dist[r] = uint16(d)
				h[d]++
			}
		})
	}
	wg.Wait()
	limit, seen := 0, 0
	for ; limit < len(hist[0]); limit++ {
		seen += hist[0][limit] + hist[1][limit]
		if seen >= m {
			break
		}
	}
	out := make([]int32, 0, seen)
	for r, d := range dist[:n] {
		if int(d) <= limit {
			out = append(out, int32(r))
		}
	}
	return out
}

// rescoreTop scores rows exactly against vecs and returns the best k.
func rescoreTop(vecs []float32, dim int, q []float32, rows []int32, k int) []int32 {
	type hit struct {
		s float32
		r int32
	}
	hits := make([]hit, len(rows))
	for i, r := range rows {
		v := vecs[int(r)*dim : (int(r)+1)*dim : (int(r)+1)*dim]
		var s float32
		for j, x := range v {
			s += x * q[j]
		}
		hits[i] = hit{s, r}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.s != b.s {
			return cmp.Compare(b.s, a.s)
		}
		return cmp.Compare(a.r, b.r)
	})
	out := make([]int32, 0, k)
	for _, h := range hits[:min(k, len(hits))] {
		out = append(out, h.r)
	}
	return out
}

func recallAt(got, want []int32) float64 {
	hit := 0
	for _, w := range want {
		if slices.Contains(got, w) {
			hit++
		}
	}
	return float64(hit) / float64(len(want))
}

// searchLike mimics BenchmarkSearch's vectors (bench/search_timing_test.go):
// one of 128 cone-shaped centres plus isotropic noise of about the same
// norm, normalised (cosine to the centre about 0.7).
//
//go:norace
func searchLike(seed uint64, n, dim int) []float32 {
	g := newClustered(seed, dim, 128, 0, 2.0, 1.0)
	rng := rand.New(rand.NewPCG(seed, 3))
	out := make([]float32, n*dim)
	x := make([]float64, dim)
	sd := 1 / math.Sqrt(float64(dim))
	for i := range n {
		cen := g.centroids[rng.IntN(len(g.centroids))]
		for j := range x {
			x[j] = cen[j] + sd*rng.NormFloat64()
		}
		unit(x)
		for j := range x {
			out[i*dim+j] = float32(x[j])
		}
	}
	return out
}

// BenchmarkFirstPass1M compares first passes over 1M rows of embedding-like
// vectors, each followed by exact fp32 rescoring of its candidates: 4-bit
// codes (the row's largest magnitude maps to 7; int8 codes and clipping at
// 0.7 are in docs/decisions.md) and, on the cone data, binary sign codes;
// ms/query and recall@10 against the exact top 10 per variant.
func BenchmarkFirstPass1M(b *testing.B) {
	const rows, nq, k = 1_000_000, 32, 10
	for _, set := range []string{"search-like", "cone"} {
		var vecs, queries []float32
		switch set {
		case "cone":
			g := newClustered(3, benchDim, 200, 0.3, 2.0, 1.0)
			vecs, queries = g.sample(rows), g.sample(nq)
		default:
			all := searchLike(5, rows+nq, benchDim)
			vecs, queries = all[:rows*benchDim], all[rows*benchDim:]
		}
		want := make([][]int32, nq)
		for i := range nq {
			want[i] = exactTop(vecs, benchDim, queries[i*benchDim:(i+1)*benchDim], k)
		}
		run := func(b *testing.B, search func(q []float32, i int) []int32) {
			recall, i := 0.0, 0
			for b.Loop() {
				qi := i % nq
				got := search(queries[qi*benchDim:(qi+1)*benchDim], qi)
				recall += recallAt(got, want[qi])
				i++
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/query")
			b.ReportMetric(recall/float64(i), "recall@10")
		}
		firstPass := func(name string, c *Codes, m, workers int) {
			b.Run(fmt.Sprintf("data=%s/%s-%d/workers=%d", set, name, m, workers), func(b *testing.B) {
				run(b, func(q []float32, _ int) []int32 {
					return rescoreTop(vecs, benchDim, q, c.candidates(q, m, workers, nil, activeKernel), k)
				})
			})
		}
		nibbles, err := Build(vecs, seqIDs(rows), benchDim)
		if err != nil {
			b.Fatal(err)
		}
		for _, m := range []int{200, 500, 1000, 2000} {
			firstPass("4bit", nibbles, m, 0)
		}
		firstPass("4bit", nibbles, 1000, 1)
		if set != "cone" {
			continue
		}
		mean := meanOf(vecs, benchDim)
		signs := signCodes(vecs, benchDim, mean)
		qsigns := signCodes(queries, benchDim, mean)
		words := benchDim / 64
		dist := make([]uint16, rows)
		for _, m := range []int{1000, 4000, 16000} {
			b.Run(fmt.Sprintf("data=%s/binary-%d", set, m), func(b *testing.B) {
				run(b, func(q []float32, qi int) []int32 {
					cand := hammingTop(signs, words, qsigns[qi*words:(qi+1)*words], m, dist)
					return rescoreTop(vecs, benchDim, q, cand, k)
				})
			})
		}
	}
}
