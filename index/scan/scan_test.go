package scan

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"sort"
	"sync"
	"testing"
)

var allKernels = []int{kernelGeneric, kernelAVX2, kernelAVX512VNNI}

// refCandidates is the scoring written plainly in Go: every live row
// (base rows, then tail rows) scored as dot(code, qcode) * scale, fully
// sorted by score then row.
func refCandidates(c *Codes, query []float32, n int) []int32 {
	qcode := c.quantiseQuery(query, make([]uint8, 2*c.stride+align))
	qlen := len(qcode)
	type hit struct {
		s float32
		i int32
	}
	var hits []hit
	for bi, b := range []*block{c.base, c.tail} {
		for r := range b.n {
			if bi == 0 && c.isDead(r) {
				continue
			}
			d := int32(0)
			for j := range qlen {
				d += c.codeAt(b, r, j) * int32(qcode[j])
			}
			hits = append(hits, hit{float32(d) * b.scales[r], int32(bi*c.base.n + r)})
		}
	}
	sort.Slice(hits, func(a, b int) bool {
		if hits[a].s != hits[b].s {
			return hits[a].s > hits[b].s
		}
		return hits[a].i < hits[b].i
	})
	out := []int32{}
	for _, h := range hits[:min(n, len(hits))] {
		out = append(out, h.i)
	}
	return out
}

// codeAt is the code of dim j of row r of b, read plainly.
func (c *Codes) codeAt(b *block, r, j int) int32 {
	x := uint8(b.codes[r*c.stride+j/128*64+j%64])
	if j%128 >= 64 {
		x >>= 4
	}
	return int32(x&15) - 8
}

// seqIDs names n rows 0, 1, ..., n-1.
func seqIDs(n int) []int64 {
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	return ids
}

func mustBuild(t testing.TB, vecs []float32, dim int) *Codes {
	t.Helper()
	c, err := Build(vecs, seqIDs(len(vecs)/dim), dim)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestKernelName(t *testing.T) {
	name := kernelNames[activeKernel]
	if !slices.Contains([]string{"avx512vnni", "avx2", "generic"}, name) {
		t.Fatalf("the chosen kernel is %q", name)
	}
	if !hasKernel(activeKernel) || !hasKernel(kernelGeneric) {
		t.Fatal("the chosen kernel or the generic one is reported unavailable")
	}
	t.Logf("kernel %s", name)
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
	// 4-bit codes are coarse: 200 candidates must hold the exact top 10
	// (the index rescores at least 400, scanWant).
	const candidates = 200
	for name, set := range recallSets() {
		t.Run(name, func(t *testing.T) {
			vecs, qs := set[0], set[1]
			c, err := Build(vecs, seqIDs(len(vecs)/dim), dim)
			if err != nil {
				t.Fatal(err)
			}
			pairs, found, in10 := 0, 0, 0
			for i := range len(qs) / dim {
				q := qs[i*dim : (i+1)*dim]
				got := c.candidates(q, candidates, 2, nil, activeKernel)
				if len(got) != candidates {
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
			t.Logf("exact top-10 within top-%d: %d/%d (%.4f); within top-10: %.4f",
				candidates, found, pairs, recall, float64(in10)/float64(pairs))
			if recall < 0.999 {
				t.Fatalf("recall %.4f < 0.999", recall)
			}
		})
	}
}

func TestKernelsAgree(t *testing.T) {
	for _, dim := range []int{1, 7, 31, 64, 100, 384, 385} {
		kernelsAgree(t, dim)
	}
}

func kernelsAgree(t *testing.T, dim int) {
	{
		vecs := randUnit(uint64(dim), 3000, dim)
		// Duplicated rows give exact ties, which must break by row.
		copy(vecs[10*dim:20*dim], vecs[:10*dim])
		built, err := Build(vecs, seqIDs(3000), dim)
		if err != nil {
			t.Fatal(err)
		}
		// Edited codes: dead base rows (every third of the first 600, the
		// query's own row among them) and a tail, itself edited again.
		var gone []int64
		for id := int64(0); id < 600; id += 3 {
			gone = append(gone, id)
		}
		edited, err := built.Edit(gone, []int64{5000, 5001, 5002}, randUnit(uint64(dim)+200, 3, dim))
		if err == nil {
			edited, err = edited.Edit([]int64{5001, 7}, []int64{5003}, vecs[:dim])
		}
		if err != nil || edited.ndead != 201 || edited.tail.n != 3 || edited.base != built.base {
			t.Fatalf("edit: %v (%d dead, %d tail rows)", err, edited.ndead, edited.tail.n)
		}
		qs := randUnit(uint64(dim)+100, 5, dim)
		copy(qs[:dim], vecs[:dim])
		for qi, c := range []*Codes{built, edited, built, edited, edited} {
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
	if c.Len() != 40 || c.dim != dim {
		t.Fatalf("Len %d Dim %d", c.Len(), c.dim)
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
	if got := empty.Candidates(q, 10, 0, []int64{1}); !slices.Equal(got, []int64{1}) {
		t.Fatalf("empty: %v", got)
	}

	// A zero vector and a zero query score 0 and must not break anything.
	zero := mustBuild(t, make([]float32, 3*dim), dim)
	if got := zero.Candidates(make([]float32, dim), 2, 1, nil); !slices.Equal(got, []int64{0, 1}) {
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
		if _, err := Build(tc.vecs, make([]int64, len(tc.vecs)/max(1, tc.dim)), tc.dim); err == nil {
			t.Errorf("Build(len %d, dim %d) accepted", len(tc.vecs), tc.dim)
		}
	}
}

func TestBuildIDCount(t *testing.T) {
	if _, err := Build(randUnit(1, 3, 8), []int64{1, 2}, 8); err == nil {
		t.Fatal("2 ids for 3 rows accepted")
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
	want := make([][]int64, 8)
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

// TestEditMatchesBuild: after many random edits (removing base and tail
// rows, adding rows, adding removed ids back), the codes give the same
// candidate ids as codes built fresh from the live vectors, an edit shares
// the base block until it compacts, and compaction keeps the dead and tail
// rows under editMax.
func TestEditMatchesBuild(t *testing.T) {
	const dim, n = 70, 3000
	rng := rand.New(rand.NewPCG(11, 12))
	vecOf := map[int64][]float32{}
	var order []int64 // live ids in row order: base, then tail
	for id := range int64(n) {
		vecOf[id] = randUnit(uint64(id)+1000, 1, dim)
		order = append(order, id)
	}
	liveVecs := func() []float32 {
		var v []float32
		for _, id := range order {
			v = append(v, vecOf[id]...)
		}
		return v
	}
	c, err := Build(liveVecs(), order, dim)
	if err != nil {
		t.Fatal(err)
	}
	next, compactions := int64(n), 0
	for step := range 150 {
		var remove, addIDs []int64
		var addVecs []float32
		for range rng.IntN(20) {
			i := rng.IntN(len(order))
			remove = append(remove, order[i])
			order = slices.Delete(order, i, i+1)
		}
		remove = append(remove, -5) // not held: ignored
		back := false
		for range rng.IntN(20) {
			id := next
			if len(remove) > 1 && !back && rng.IntN(4) == 0 {
				id, back = remove[0], true // a removed id comes back with a new vector
			} else {
				next++
			}
			if !slices.Contains(order, id) {
				vecOf[id] = randUnit(uint64(id)*7+uint64(step), 1, dim)
				order = append(order, id)
				addIDs = append(addIDs, id)
				addVecs = append(addVecs, vecOf[id]...)
			}
		}
		edited, err := c.Edit(remove, addIDs, addVecs)
		if err != nil {
			t.Fatal(err)
		}
		if edited.base != c.base {
			compactions++
		}
		c = edited
		if c.Len() != len(order) || c.ndead+c.tail.n > editMax(c.Len()) {
			t.Fatalf("step %d: %d live rows, want %d; %d dead + %d tail rows", step, c.Len(), len(order), c.ndead, c.tail.n)
		}
		if step%10 != 9 {
			continue
		}
		fresh, err := Build(liveVecs(), order, dim)
		if err != nil {
			t.Fatal(err)
		}
		for qi := range 3 {
			q := vecOf[order[rng.IntN(len(order))]]
			if qi == 2 {
				q = randUnit(uint64(step), 1, dim)
			}
			if got, want := c.Candidates(q, 50, 0, nil), fresh.Candidates(q, 50, 0, nil); !slices.Equal(got, want) {
				t.Fatalf("step %d: edited codes give %v, a fresh build %v", step, got[:5], want[:5])
			}
			for _, k := range allKernels {
				if hasKernel(k) && !slices.Equal(c.candidates(q, 50, 3, nil, k), refCandidates(c, q, 50)) {
					t.Fatalf("step %d: kernel %s differs from reference", step, kernelNames[k])
				}
			}
		}
	}
	if compactions == 0 {
		t.Fatal("no edit compacted the codes")
	}
	t.Logf("%d compactions over 150 edits", compactions)

	if _, err := c.Edit(nil, []int64{1}, []float32{float32(math.NaN())}); err == nil {
		t.Fatal("a partial row accepted")
	}
	if _, err := c.Edit(nil, []int64{1, 2}, randUnit(1, 1, dim)); err == nil {
		t.Fatal("2 ids for 1 row accepted")
	}
}
