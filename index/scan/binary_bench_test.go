package scan

import (
	"cmp"
	"fmt"
	"math/bits"
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

// BenchmarkFirstPass1M compares, at 1M rows of embedding-like vectors, the
// int8 first pass (200 candidates) with binary sign codes (m candidates),
// both rescored exactly in fp32; ms/query and recall@10 per variant.
func BenchmarkFirstPass1M(b *testing.B) {
	const rows, nq, k = 1_000_000, 16, 10
	g := newClustered(3, benchDim, 200, 0.3, 2.0, 1.0)
	vecs, queries := g.sample(rows), g.sample(nq)
	codes, err := Build(vecs, seqIDs(rows), benchDim)
	if err != nil {
		b.Fatal(err)
	}
	mean := meanOf(vecs, benchDim)
	signs := signCodes(vecs, benchDim, mean)
	qsigns := signCodes(queries, benchDim, mean)
	words := benchDim / 64
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
	b.Run("int8-200", func(b *testing.B) {
		run(b, func(q []float32, _ int) []int32 {
			return rescoreTop(vecs, benchDim, q, codes.candidates(q, 200, 0, nil, activeKernel), k)
		})
	})
	dist := make([]uint16, rows)
	for _, m := range []int{1000, 4000, 16000} {
		b.Run(fmt.Sprintf("binary-%d", m), func(b *testing.B) {
			run(b, func(q []float32, qi int) []int32 {
				cand := hammingTop(signs, words, qsigns[qi*words:(qi+1)*words], m, dist)
				return rescoreTop(vecs, benchDim, q, cand, k)
			})
		})
	}
}
