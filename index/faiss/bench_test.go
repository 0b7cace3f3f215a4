package faiss

import (
	"sync"
	"testing"
)

const benchN, benchD, benchK = 100_000, 384, 10

var benchData = sync.OnceValue(func() []float32 { return randNormalized(42, benchN, benchD) })

// benchSearch times single-query top-10 searches with reused buffers.
func benchSearch(b *testing.B, idx *Index) {
	b.Helper()
	queries := randNormalized(43, 64, benchD)
	dist := make([]float32, benchK)
	labels := make([]int64, benchK)
	b.SetBytes(int64(idx.Ntotal()) * benchD * 4) // bytes scanned per query
	b.ReportAllocs()
	i := 0
	for b.Loop() {
		q := queries[(i%64)*benchD : (i%64+1)*benchD]
		if err := idx.SearchInto(q, benchK, dist, labels); err != nil {
			b.Fatal(err)
		}
		i++
	}
	if labels[0] < 0 {
		b.Fatal("no hit")
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/1e6/float64(b.N), "ms/query")
}

func BenchmarkSearchTop10(b *testing.B) {
	data := benchData()

	b.Run("flat", func(b *testing.B) {
		idx := mustFlatIP(b, benchD)
		if err := idx.Add(data); err != nil {
			b.Fatal(err)
		}
		benchSearch(b, idx)
	})
	b.Run("idmap2-flat", func(b *testing.B) {
		idx := mustIDMap2(b, benchD)
		ids := make([]int64, benchN)
		for i := range ids {
			ids[i] = int64(i)
		}
		if err := idx.AddWithIDs(data, ids); err != nil {
			b.Fatal(err)
		}
		benchSearch(b, idx)
	})
}

// BenchmarkBadNorms is the load-time length check over 100k × 384 vectors;
// ms-at-1M scales it to a million.
func BenchmarkBadNorms(b *testing.B) {
	idx := mustIDMap2(b, benchD)
	ids := make([]int64, benchN)
	for i := range ids {
		ids[i] = int64(i)
	}
	if err := idx.AddWithIDs(benchData(), ids); err != nil {
		b.Fatal(err)
	}
	b.SetBytes(benchN * benchD * 4)
	for b.Loop() {
		if n, _, err := idx.BadNorms(1e-3); err != nil || n != 0 {
			b.Fatalf("%d bad, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Milliseconds())/float64(b.N)*10, "ms-at-1M")
}
