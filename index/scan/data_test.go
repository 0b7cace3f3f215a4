package scan

import (
	"math"
	"math/rand/v2"
	"slices"
)

// randUnit returns n seeded random unit vectors of dimension dim.
//
//go:norace
func randUnit(seed uint64, n, dim int) []float32 {
	rng := rand.New(rand.NewPCG(seed, 1))
	v := make([]float32, n*dim)
	for i := range v {
		v[i] = float32(rng.NormFloat64())
	}
	normalise(v, dim)
	return v
}

// clustered mimics sentence embeddings: unit vectors near one of k centroids
// (so many neighbours are close), sharing a common mean direction and with
// uneven variance across dimensions. spread is the noise relative to the
// centroid; mean and aniso (0 for none) shape the whole cloud.
type clustered struct {
	dim       int
	centroids [][]float64
	dimSD     []float64
	spread    float64
	rng       *rand.Rand
}

func newClustered(seed uint64, dim, k int, spread, mean, aniso float64) *clustered {
	rng := rand.New(rand.NewPCG(seed, 2))
	c := &clustered{dim: dim, spread: spread, rng: rng, dimSD: make([]float64, dim)}
	common := make([]float64, dim)
	for j := range common {
		common[j] = rng.NormFloat64()
		c.dimSD[j] = math.Exp(aniso * rng.NormFloat64())
	}
	unit(common)
	for range k {
		cen := make([]float64, dim)
		for j := range cen {
			cen[j] = rng.NormFloat64() * c.dimSD[j]
		}
		unit(cen)
		for j := range cen {
			cen[j] += mean * common[j]
		}
		unit(cen)
		c.centroids = append(c.centroids, cen)
	}
	return c
}

//go:norace
func (c *clustered) sample(n int) []float32 {
	out := make([]float32, n*c.dim)
	x := make([]float64, c.dim)
	sd := c.spread / math.Sqrt(float64(c.dim))
	for i := range n {
		cen := c.centroids[c.rng.IntN(len(c.centroids))]
		for j := range x {
			x[j] = cen[j] + sd*c.rng.NormFloat64()*c.dimSD[j]
		}
		unit(x)
		for j := range x {
			out[i*c.dim+j] = float32(x[j])
		}
	}
	return out
}

func unit(x []float64) {
	s := 0.0
	for _, v := range x {
		s += v * v
	}
	s = 1 / math.Sqrt(s)
	for j := range x {
		x[j] *= s
	}
}

//go:norace
func normalise(v []float32, dim int) {
	for i := 0; i < len(v); i += dim {
		s := 0.0
		for _, x := range v[i : i+dim] {
			s += float64(x) * float64(x)
		}
		s = 1 / math.Sqrt(s)
		for j := i; j < i+dim; j++ {
			v[j] = float32(float64(v[j]) * s)
		}
	}
}

// exactTop returns the rows of the k largest inner products (float64), best
// first, ties by row. It is the bulk of the recall tests' time and reads
// data no other goroutine writes, so it skips race instrumentation.
//
//go:norace
func exactTop(vecs []float32, dim int, q []float32, k int) []int32 {
	n := len(vecs) / dim
	type hit struct {
		s float64
		i int32
	}
	hits := make([]hit, n)
	for r := range n {
		s := 0.0
		for j, x := range vecs[r*dim : (r+1)*dim] {
			s += float64(x) * float64(q[j])
		}
		hits[r] = hit{s, int32(r)}
	}
	slices.SortFunc(hits, func(a, b hit) int {
		if a.s != b.s {
			if a.s > b.s {
				return -1
			}
			return 1
		}
		return int(a.i - b.i)
	})
	out := make([]int32, 0, k)
	for _, h := range hits[:min(k, n)] {
		out = append(out, h.i)
	}
	return out
}
