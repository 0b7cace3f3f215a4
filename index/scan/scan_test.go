package scan

import (
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"testing"
)

var allKernels = []int{kernelGeneric, kernelAVX2, kernelAVX512VNNI}

// refCandidates is the int8 scoring written plainly in Go: every row scored
// as dot(code, qcode) * scale, fully sorted by score then row.
func refCandidates(c *Codes, query []float32, n int) []int32 {
	qcode := c.quantiseQuery(query, make([]uint8, 2*c.stride+align))
	type hit struct {
		s float32
		i int32
	}
	hits := make([]hit, c.n)
	for r := range c.n {
		d := int32(0)
		for j := range c.stride {
			d += int32(c.codes[r*c.stride+j]) * int32(qcode[j])
		}
		hits[r] = hit{float32(d) * c.scales[r], int32(r)}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].s != hits[b].s {
			return hits[a].s > hits[b].s
		}
		return hits[a].i < hits[b].i
	})
	out := []int32{}
	for _, h := range hits[:min(n, c.n)] {
		out = append(out, h.i)
	}
	return out
}

func mustBuild(t testing.TB, vecs []float32, dim int) *Codes {
	t.Helper()
	c, err := Build(vecs, dim)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKernelName(t *testing.T) {
	if !slices.Contains([]string{"avx512vnni", "avx2", "generic"}, Kernel()) {
		t.Fatalf("Kernel() = %q", Kernel())
	}
	if !hasKernel(activeKernel) || !hasKernel(kernelGeneric) {
		t.Fatal("the chosen kernel or the generic one is reported unavailable")
	}
	t.Logf("kernel %s", Kernel())
}

// recallSets are 20k-row data sets with their queries: uniform random unit
// vectors, and clusters with close neighbours in an anisotropic cone like
// sentence embeddings.
var recallSets = sync.OnceValue(func() map[string][2][]float32 {
	const dim, n, nq = 384, 20000, 100
	sets := map[string][2][]float32{
		"random": {randUnit(1, n, dim), randUnit(2, nq, dim)},
	}
	for _, cfg := range []struct {
		name                string
		spread, mean, aniso float64
	}{
		{"clustered", 0.5, 0, 0},
		{"tight-clusters", 0.2, 0, 0},
		{"cone", 0.3, 2.0, 1.0},
	} {
		g := newClustered(3, dim, 200, cfg.spread, cfg.mean, cfg.aniso)
		sets[cfg.name] = [2][]float32{g.sample(n), g.sample(nq)}
	}
	return sets
})

func TestRecall(t *testing.T) {
	const dim = 384
	for name, set := range recallSets() {
		t.Run(name, func(t *testing.T) {
			vecs, qs := set[0], set[1]
			c := mustBuild(t, vecs, dim)
			pairs, found, in10 := 0, 0, 0
			for i := range len(qs) / dim {
				q := qs[i*dim : (i+1)*dim]
				got := c.Candidates(q, 100, 2, nil)
				if len(got) != 100 {
					t.Fatalf("got %d candidates", len(got))
				}
				for _, r := range exactTop(vecs, dim, q, 10) {
					pairs++
					p := slices.Index(got, r)
					if p >= 0 {
						found++
					}
					if p >= 0 && p < 10 {
						in10++
					}
				}
			}
			recall := float64(found) / float64(pairs)
			t.Logf("exact top-10 within top-100: %d/%d (%.4f); within top-10: %.4f",
				found, pairs, recall, float64(in10)/float64(pairs))
			if recall < 0.999 {
				t.Fatalf("recall %.4f < 0.999", recall)
			}
		})
	}
}

func TestKernelsAgree(t *testing.T) {
	for _, dim := range []int{1, 7, 31, 64, 100, 384, 385} {
		vecs := randUnit(uint64(dim), 3000, dim)
		// Duplicated rows give exact ties, which must break by row.
		copy(vecs[10*dim:20*dim], vecs[:10*dim])
		c := mustBuild(t, vecs, dim)
		qs := randUnit(uint64(dim)+100, 5, dim)
		copy(qs[:dim], vecs[:dim])
		for qi := range 5 {
			q := qs[qi*dim : (qi+1)*dim]
			for _, n := range []int{1, 10, 100, 1000} {
				want := refCandidates(c, q, n)
				for _, k := range allKernels {
					if !hasKernel(k) {
						continue
					}
					for _, w := range []int{1, 2, 3, 8} {
						got := c.candidates(q, n, w, nil, k)
						if !slices.Equal(got, want) {
							t.Fatalf("dim %d query %d n %d kernel %s workers %d: differs from reference\n got %v\nwant %v",
								dim, qi, n, kernelNames[k], w, got[:min(10, len(got))], want[:min(10, len(want))])
						}
					}
				}
			}
		}
	}
}

func TestEdgeCases(t *testing.T) {
	const dim = 50
	vecs := randUnit(9, 40, dim)
	q := vecs[3*dim : 4*dim]
	c := mustBuild(t, vecs, dim)
	if c.Len() != 40 || c.Dim() != dim {
		t.Fatalf("Len %d Dim %d", c.Len(), c.Dim())
	}
	for _, k := range allKernels {
		if !hasKernel(k) {
			continue
		}
		t.Run(kernelNames[k], func(t *testing.T) {
			// n > rows and workers > rows: every row, best first.
			all := c.candidates(q, 500, 100, nil, k)
			if len(all) != 40 {
				t.Fatalf("n>rows: %d rows", len(all))
			}
			if all[0] != 3 {
				t.Fatalf("the query's own row is at %d, not first", slices.Index(all, 3))
			}
			sorted := slices.Clone(all)
			slices.Sort(sorted)
			for i, r := range sorted {
				if int(r) != i {
					t.Fatalf("not a permutation of the rows: %v", sorted)
				}
			}
			if !slices.Equal(all, refCandidates(c, q, 40)) {
				t.Fatal("differs from reference")
			}
			// dst is appended to, not overwritten.
			dst := []int32{-7, -8}
			got := c.candidates(q, 5, 1, dst, k)
			if !slices.Equal(got[:2], []int32{-7, -8}) || !slices.Equal(got[2:], all[:5]) {
				t.Fatalf("append: %v", got)
			}
			if got := c.candidates(q, 0, 1, dst[:1], k); !slices.Equal(got, []int32{-7}) {
				t.Fatalf("n=0: %v", got)
			}
		})
	}

	empty := mustBuild(t, nil, dim)
	if empty.Len() != 0 {
		t.Fatalf("empty Len %d", empty.Len())
	}
	if got := empty.Candidates(q, 10, 0, []int32{1}); !slices.Equal(got, []int32{1}) {
		t.Fatalf("empty: %v", got)
	}

	// A zero vector and a zero query score 0 and must not break anything.
	zero := mustBuild(t, make([]float32, 3*dim), dim)
	if got := zero.Candidates(make([]float32, dim), 2, 1, nil); !slices.Equal(got, []int32{0, 1}) {
		t.Fatalf("zeros: %v", got)
	}
}

func TestBuildErrors(t *testing.T) {
	nan := randUnit(1, 2, 8)
	nan[9] = float32(math.NaN())
	inf := randUnit(1, 2, 8)
	inf[0] = float32(math.Inf(-1))
	for _, tc := range []struct {
		vecs []float32
		dim  int
	}{
		{make([]float32, 8), 0},
		{make([]float32, 8), -1},
		{make([]float32, 9), 8},
		{nan, 8},
		{inf, 8},
	} {
		if _, err := Build(tc.vecs, tc.dim); err == nil {
			t.Errorf("Build(len %d, dim %d) accepted", len(tc.vecs), tc.dim)
		}
	}
}

func TestQueryLengthPanics(t *testing.T) {
	c := mustBuild(t, randUnit(1, 4, 8), 8)
	defer func() {
		if recover() == nil {
			t.Fatal("no panic for a short query")
		}
	}()
	c.Candidates(make([]float32, 7), 1, 1, nil)
}

func TestConcurrentCandidates(t *testing.T) {
	const dim = 384
	vecs := randUnit(5, 5000, dim)
	c := mustBuild(t, vecs, dim)
	qs := randUnit(6, 8, dim)
	want := make([][]int32, 8)
	for i := range want {
		want[i] = c.Candidates(qs[i*dim:(i+1)*dim], 50, 1, nil)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			for range 20 {
				got := c.Candidates(qs[i*dim:(i+1)*dim], 50, 2, nil)
				if !slices.Equal(got, want[i]) {
					errs <- fmt.Errorf("query %d differs under concurrency", i)
					return
				}
			}
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
}

// TestEditMatchesBuild: dropping rows and adding new ones gives exactly the
// codes Build makes from the edited vectors.
func TestEditMatchesBuild(t *testing.T) {
	const dim, n = 70, 5000
	vecs := randUnit(11, n, dim)
	add := randUnit(12, 300, dim)
	drop := make([]bool, n)
	var kept []float32
	for i := range n {
		drop[i] = i%7 == 3 || i == 0 || i == n-1
		if !drop[i] {
			kept = append(kept, vecs[i*dim:(i+1)*dim]...)
		}
	}
	edited, err := mustBuild(t, vecs, dim).Edit(drop, add)
	if err != nil {
		t.Fatal(err)
	}
	want := mustBuild(t, append(kept, add...), dim)
	if edited.n != want.n || !slices.Equal(edited.codes, want.codes) || !slices.Equal(edited.scales, want.scales) || !slices.Equal(edited.rowsums, want.rowsums) {
		t.Fatalf("edited codes (%d rows) differ from a fresh build (%d rows)", edited.n, want.n)
	}
	q := randUnit(13, 1, dim)
	if got, exp := edited.Candidates(q, 20, 0, nil), want.Candidates(q, 20, 0, nil); !slices.Equal(got, exp) {
		t.Fatalf("candidates %v, want %v", got, exp)
	}
	same, err := want.Edit(nil, nil)
	if err != nil || !slices.Equal(same.codes, want.codes) {
		t.Fatalf("an empty edit changed the codes: %v", err)
	}
	if _, err := want.Edit(make([]bool, 3), nil); err == nil {
		t.Fatal("drop flags of the wrong length accepted")
	}
	if _, err := want.Edit(nil, []float32{float32(math.NaN())}); err == nil {
		t.Fatal("a partial row accepted")
	}
}
