package faiss

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
)

// randNormalized returns n seeded random d-dim vectors of unit L2 norm.
func randNormalized(seed uint64, n, d int) []float32 {
	rng := rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15))
	x := make([]float32, n*d)
	for i := range n {
		v := x[i*d : (i+1)*d]
		var s float64
		for j := range v {
			f := rng.NormFloat64()
			v[j] = float32(f)
			s += f * f
		}
		inv := 1 / math.Sqrt(s)
		for j := range v {
			v[j] = float32(float64(v[j]) * inv)
		}
	}
	return x
}

func mustFlatIP(t testing.TB, d int) *Index {
	t.Helper()
	idx, err := NewIndexFlatIP(d)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

func mustIDMap2(t testing.TB, d int) *Index {
	t.Helper()
	inner, err := NewIndexFlatIP(d)
	if err != nil {
		t.Fatal(err)
	}
	idx, err := NewIDMap2(inner)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idx.Close() })
	return idx
}

// bruteForce scores every row of data against q in float64.
func bruteForce(data, q []float32, d int) []float64 {
	n := len(data) / d
	scores := make([]float64, n)
	for i := range n {
		var s float64
		for j, v := range data[i*d : (i+1)*d] {
			s += float64(v) * float64(q[j])
		}
		scores[i] = s
	}
	return scores
}

// checkTopK compares FAISS's hits for one query against exact scores,
// allowing any order among scores closer than tol (ties).
func checkTopK(t *testing.T, scores []float64, dist []float32, labels []int64, idOf func(int64) int, tol float64) {
	t.Helper()
	sorted := slices.Clone(scores)
	sort.Sort(sort.Reverse(sort.Float64Slice(sorted)))
	seen := map[int64]bool{}
	for j, l := range labels {
		if l < 0 {
			t.Fatalf("rank %d: label -1 with %d vectors indexed", j, len(scores))
		}
		if seen[l] {
			t.Fatalf("rank %d: label %d returned twice", j, l)
		}
		seen[l] = true
		ref := scores[idOf(l)]
		if math.Abs(ref-float64(dist[j])) > tol {
			t.Errorf("rank %d label %d: faiss score %v, exact %v", j, l, dist[j], ref)
		}
		if math.Abs(ref-sorted[j]) > tol {
			t.Errorf("rank %d label %d: exact score %v but the rank-%d exact score is %v", j, l, ref, j, sorted[j])
		}
	}
}

func TestFlatIPMatchesBruteForce(t *testing.T) {
	const n, d, nq, k = 5000, 384, 8, 10
	data := randNormalized(1, n, d)
	idx := mustFlatIP(t, d)
	if err := idx.Add(data); err != nil {
		t.Fatal(err)
	}
	if idx.Ntotal() != n || idx.D() != d || idx.MetricType() != MetricInnerProduct {
		t.Fatalf("ntotal %d d %d metric %d", idx.Ntotal(), idx.D(), idx.MetricType())
	}
	// Half the queries are stored vectors (their own top hit, score 1), half fresh.
	queries := randNormalized(2, nq, d)
	for i := range nq / 2 {
		copy(queries[i*d:(i+1)*d], data[(i*997)*d:(i*997+1)*d])
	}
	dist, labels, err := idx.Search(queries, k)
	if err != nil {
		t.Fatal(err)
	}
	if len(dist) != nq*k || len(labels) != nq*k {
		t.Fatalf("got %d distances, %d labels", len(dist), len(labels))
	}
	for i := range nq {
		q := queries[i*d : (i+1)*d]
		checkTopK(t, bruteForce(data, q, d), dist[i*k:(i+1)*k], labels[i*k:(i+1)*k], func(l int64) int { return int(l) }, 1e-4)
		if i < nq/2 && (labels[i*k] != int64(i*997) || math.Abs(float64(dist[i*k])-1) > 1e-4) {
			t.Errorf("query %d: top hit %d score %v, want itself (%d) at 1", i, labels[i*k], dist[i*k], i*997)
		}
	}

	// SearchInto fills caller buffers with the same answer.
	d2 := make([]float32, nq*k+3)
	l2 := make([]int64, nq*k+3)
	if err := idx.SearchInto(queries, k, d2, l2); err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d2[:nq*k], dist) || !slices.Equal(l2[:nq*k], labels) {
		t.Error("SearchInto differs from Search")
	}
}

func TestSearchMoreThanStored(t *testing.T) {
	idx := mustFlatIP(t, 4)
	if err := idx.Add(randNormalized(3, 3, 4)); err != nil {
		t.Fatal(err)
	}
	_, labels, err := idx.Search(randNormalized(4, 1, 4), 5)
	if err != nil {
		t.Fatal(err)
	}
	got := slices.Clone(labels[:3])
	slices.Sort(got)
	if !slices.Equal(got, []int64{0, 1, 2}) || labels[3] != -1 || labels[4] != -1 {
		t.Fatalf("labels %v, want a permutation of 0..2 then -1 -1", labels)
	}
}

func TestIDMap2SearchAndReconstruct(t *testing.T) {
	const n, d = 1000, 32
	data := randNormalized(5, n, d)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(1_000_000 + 7*i)
	}
	idx := mustIDMap2(t, d)
	if err := idx.AddWithIDs(data, ids); err != nil {
		t.Fatal(err)
	}
	q := data[123*d : 124*d]
	dist, labels, err := idx.Search(q, 10)
	if err != nil {
		t.Fatal(err)
	}
	pos := map[int64]int{}
	for i, id := range ids {
		pos[id] = i
	}
	checkTopK(t, bruteForce(data, q, d), dist, labels, func(l int64) int { return pos[l] }, 1e-4)
	if labels[0] != ids[123] {
		t.Fatalf("top label %d, want %d", labels[0], ids[123])
	}
	buf := make([]float32, 0, d)
	for _, i := range []int{0, 123, n - 1} {
		v, err := idx.Reconstruct(ids[i], buf)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(v, data[i*d:(i+1)*d]) {
			t.Fatalf("reconstruct id %d differs", ids[i])
		}
		if &v[0] != &buf[:1][0] {
			t.Fatal("Reconstruct did not reuse dst")
		}
	}
	if _, err := idx.Reconstruct(42, nil); err == nil {
		t.Fatal("reconstruct of an absent id succeeded")
	}
}

func TestRemoveIDs(t *testing.T) {
	const n, d = 1000, 16
	data := randNormalized(6, n, d)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(5000 + 3*i)
	}
	idx := mustIDMap2(t, d)
	if err := idx.AddWithIDs(data, ids); err != nil {
		t.Fatal(err)
	}
	var gone []int64
	goneSet := map[int64]bool{}
	for i := 0; i < n; i += 9 {
		gone = append(gone, ids[i])
		goneSet[ids[i]] = true
	}
	// Ids never added are ignored, not counted.
	removed, err := idx.RemoveIDs(append(slices.Clone(gone), 1, 2, 5001))
	if err != nil {
		t.Fatal(err)
	}
	if removed != len(gone) {
		t.Fatalf("removed %d, want %d", removed, len(gone))
	}
	if got, want := idx.Ntotal(), int64(n-len(gone)); got != want {
		t.Fatalf("ntotal %d, want %d", got, want)
	}
	// Every survivor is still found, no removed id ever comes back.
	_, labels, err := idx.Search(data[:50*d], n)
	if err != nil {
		t.Fatal(err)
	}
	for qi := range 50 {
		hits := labels[qi*n : (qi+1)*n]
		found := 0
		for _, l := range hits {
			if goneSet[l] {
				t.Fatalf("removed id %d returned", l)
			}
			if l >= 0 {
				found++
			}
		}
		if found != n-len(gone) {
			t.Fatalf("query %d found %d vectors, want %d", qi, found, n-len(gone))
		}
	}
	// The id map stays consistent after the compaction.
	for i, id := range ids {
		v, err := idx.Reconstruct(id, nil)
		if goneSet[id] {
			if err == nil {
				t.Fatalf("reconstruct of removed id %d succeeded", id)
			}
			continue
		}
		if err != nil || !slices.Equal(v, data[i*d:(i+1)*d]) {
			t.Fatalf("reconstruct id %d: err %v or wrong vector", id, err)
		}
	}
	if removed, err := idx.RemoveIDs(gone); err != nil || removed != 0 {
		t.Fatalf("second removal: %d, %v", removed, err)
	}
}

func TestWriteReadRoundTrip(t *testing.T) {
	const n, d = 2000, 384
	data := randNormalized(7, n, d)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i*i + 11)
	}
	idx := mustIDMap2(t, d)
	if err := idx.AddWithIDs(data, ids); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "faiss.index")
	if err := WriteIndex(idx, path); err != nil {
		t.Fatal(err)
	}
	back, err := ReadIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	defer back.Close()
	if back.Ntotal() != n || back.D() != d || back.MetricType() != MetricInnerProduct {
		t.Fatalf("read back ntotal %d d %d metric %d", back.Ntotal(), back.D(), back.MetricType())
	}
	queries := randNormalized(8, 5, d)
	d1, l1, err := idx.Search(queries, 20)
	if err != nil {
		t.Fatal(err)
	}
	d2, l2, err := back.Search(queries, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(d1, d2) || !slices.Equal(l1, l2) {
		t.Fatal("search results differ after the round trip")
	}
	for i, id := range ids {
		v, err := back.Reconstruct(id, nil)
		if err != nil || !slices.Equal(v, data[i*d:(i+1)*d]) {
			t.Fatalf("reconstruct id %d after read: %v", id, err)
		}
	}
	// Writing the read-back index gives the same bytes.
	path2 := filepath.Join(t.TempDir(), "again.index")
	if err := WriteIndex(back, path2); err != nil {
		t.Fatal(err)
	}
	b1, _ := os.ReadFile(path)
	b2, _ := os.ReadFile(path2)
	if len(b1) == 0 || !slices.Equal(b1, b2) {
		t.Fatalf("rewritten file differs (%d vs %d bytes)", len(b1), len(b2))
	}
}

func TestCloneIsIndependentUnderConcurrentGrowth(t *testing.T) {
	const n, d, k = 2000, 64, 10
	data := randNormalized(9, n, d)
	idx := mustIDMap2(t, d)
	ids := make([]int64, n)
	for i := range ids {
		ids[i] = int64(i)
	}
	if err := idx.AddWithIDs(data, ids); err != nil {
		t.Fatal(err)
	}
	clone, err := idx.Clone()
	if err != nil {
		t.Fatal(err)
	}
	defer clone.Close()
	queries := randNormalized(10, 4, d)
	wantD, wantL, err := clone.Search(queries, k)
	if err != nil {
		t.Fatal(err)
	}

	// The original grows with vectors identical to the queries (they would
	// top every search) while two readers search the clone.
	var wg sync.WaitGroup
	errs := make(chan error, 3)
	wg.Go(func() {
		for round := range 30 {
			extra := slices.Concat(queries, randNormalized(uint64(100+round), 50, d))
			extraIDs := make([]int64, len(extra)/d)
			for i := range extraIDs {
				extraIDs[i] = int64(1_000_000 + round*1000 + i)
			}
			if err := idx.AddWithIDs(extra, extraIDs); err != nil {
				errs <- err
				return
			}
		}
	})
	for range 2 {
		wg.Go(func() {
			dist := make([]float32, len(wantD))
			labels := make([]int64, len(wantL))
			for range 100 {
				if err := clone.SearchInto(queries, k, dist, labels); err != nil {
					errs <- err
					return
				}
				if !slices.Equal(dist, wantD) || !slices.Equal(labels, wantL) {
					errs <- errors.New("clone results changed while the original grew")
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
	if clone.Ntotal() != n {
		t.Fatalf("clone ntotal %d, want %d", clone.Ntotal(), n)
	}
	if want := int64(n + 30*(4+50)); idx.Ntotal() != want {
		t.Fatalf("original ntotal %d, want %d", idx.Ntotal(), want)
	}
	_, l, err := idx.Search(queries[:d], 1)
	if err != nil || l[0] < 1_000_000 {
		t.Fatalf("original's top hit %v (%v), want one of the added copies", l, err)
	}
}

func TestErrorsFromCpp(t *testing.T) {
	dir := t.TempDir()
	garbage := filepath.Join(dir, "garbage.index")
	if err := os.WriteFile(garbage, []byte("this is not a faiss index, just some bytes"), 0o644); err != nil {
		t.Fatal(err)
	}
	if idx, err := ReadIndex(garbage); err == nil {
		idx.Close()
		t.Fatal("ReadIndex of garbage succeeded")
	} else if !strings.Contains(err.Error(), "read_index") {
		t.Fatalf("unexpected error %v", err)
	}
	if _, err := ReadIndex(filepath.Join(dir, "missing.index")); err == nil {
		t.Fatal("ReadIndex of a missing file succeeded")
	}
	// A truncated real index fails too.
	idx := mustIDMap2(t, 8)
	if err := idx.AddWithIDs(randNormalized(11, 10, 8), []int64{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}); err != nil {
		t.Fatal(err)
	}
	full := filepath.Join(dir, "full.index")
	if err := WriteIndex(idx, full); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(full)
	trunc := filepath.Join(dir, "trunc.index")
	os.WriteFile(trunc, b[:len(b)/2], 0o644)
	if idx, err := ReadIndex(trunc); err == nil {
		idx.Close()
		t.Fatal("ReadIndex of a truncated file succeeded")
	}
	if err := WriteIndex(idx, filepath.Join(dir, "no", "such", "dir", "x.index")); err == nil {
		t.Fatal("WriteIndex into a missing directory succeeded")
	}

	flat := mustFlatIP(t, 8)
	if err := flat.AddWithIDs(randNormalized(12, 2, 8), []int64{1, 2}); err == nil {
		t.Fatal("AddWithIDs on a bare flat index succeeded")
	}
	if err := flat.Add(randNormalized(12, 2, 8)); err != nil {
		t.Fatal(err)
	}
	if _, err := flat.Reconstruct(2, nil); err == nil {
		t.Fatal("Reconstruct past ntotal succeeded")
	}
	if _, err := flat.Reconstruct(-1, nil); err == nil {
		t.Fatal("Reconstruct(-1) succeeded")
	}
}

func TestArgumentChecks(t *testing.T) {
	idx := mustFlatIP(t, 4)
	if err := idx.Add(make([]float32, 7)); err == nil {
		t.Error("Add accepted 7 floats for d=4")
	}
	if _, _, err := idx.Search(make([]float32, 5), 1); err == nil {
		t.Error("Search accepted 5 floats for d=4")
	}
	if _, _, err := idx.Search(make([]float32, 4), 0); err == nil {
		t.Error("Search accepted k=0")
	}
	if err := idx.SearchInto(make([]float32, 8), 3, make([]float32, 5), make([]int64, 6)); err == nil {
		t.Error("SearchInto accepted short buffers")
	}
	if err := idx.Add(nil); err != nil || idx.Ntotal() != 0 {
		t.Errorf("empty Add: %v, ntotal %d", err, idx.Ntotal())
	}
	m := mustIDMap2(t, 4)
	if err := m.AddWithIDs(make([]float32, 8), []int64{1}); err == nil {
		t.Error("AddWithIDs accepted 1 id for 2 vectors")
	}
	if _, err := NewIndexFlatIP(0); err == nil {
		t.Error("NewIndexFlatIP(0) succeeded")
	}
}

func TestCloseIdempotentAndOwnership(t *testing.T) {
	idx, err := NewIndexFlatIP(4)
	if err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := idx.Close(); err != nil {
		t.Fatal(err)
	}
	if err := idx.Add(make([]float32, 4)); !errors.Is(err, ErrClosed) {
		t.Fatalf("Add after Close: %v", err)
	}
	if _, _, err := idx.Search(make([]float32, 4), 1); !errors.Is(err, ErrClosed) {
		t.Fatalf("Search after Close: %v", err)
	}
	if _, err := idx.Clone(); !errors.Is(err, ErrClosed) {
		t.Fatalf("Clone after Close: %v", err)
	}
	if err := WriteIndex(idx, filepath.Join(t.TempDir(), "x")); !errors.Is(err, ErrClosed) {
		t.Fatalf("WriteIndex after Close: %v", err)
	}
	if idx.Ntotal() != 0 {
		t.Fatal("Ntotal after Close")
	}

	// NewIDMap2 takes the inner index: it is unusable afterwards and
	// closing it does not free what the wrapper owns.
	inner, err := NewIndexFlatIP(4)
	if err != nil {
		t.Fatal(err)
	}
	m, err := NewIDMap2(inner)
	if err != nil {
		t.Fatal(err)
	}
	if err := inner.Add(make([]float32, 4)); !errors.Is(err, ErrClosed) {
		t.Fatalf("inner Add after transfer: %v", err)
	}
	if err := inner.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := NewIDMap2(inner); !errors.Is(err, ErrClosed) {
		t.Fatalf("second NewIDMap2 on the same inner: %v", err)
	}
	if err := m.AddWithIDs([]float32{1, 0, 0, 0}, []int64{77}); err != nil {
		t.Fatal(err)
	}
	_, l, err := m.Search([]float32{1, 0, 0, 0}, 1)
	if err != nil || l[0] != 77 {
		t.Fatalf("search through wrapper: %v %v", l, err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestConcurrentSearchOneIndex(t *testing.T) {
	const n, d, k = 3000, 64, 5
	data := randNormalized(13, n, d)
	idx := mustFlatIP(t, d)
	if err := idx.Add(data); err != nil {
		t.Fatal(err)
	}
	// 3 queries take FAISS's sequential path, 32 take the BLAS path.
	for _, nq := range []int{3, 32} {
		queries := randNormalized(uint64(14+nq), nq, d)
		wantD, wantL, err := idx.Search(queries, k)
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		errs := make(chan error, 4)
		for range 4 {
			wg.Go(func() {
				for range 30 {
					dist, labels, err := idx.Search(queries, k)
					if err != nil {
						errs <- err
						return
					}
					if !slices.Equal(labels, wantL) {
						errs <- fmt.Errorf("%d queries: labels changed under concurrency", nq)
						return
					}
					for i := range dist {
						// BLAS may split the work differently when busy.
						if math.Abs(float64(dist[i]-wantD[i])) > 1e-5 {
							errs <- fmt.Errorf("%d queries: distance %v, alone %v", nq, dist[i], wantD[i])
							return
						}
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
}

func TestExport(t *testing.T) {
	flat, _ := NewIndexFlatIP(4)
	idx, err := NewIDMap2(flat)
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	vecs := []float32{1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0}
	if err := idx.AddWithIDs(vecs, []int64{7, 9, 11}); err != nil {
		t.Fatal(err)
	}
	idx.RemoveIDs([]int64{9})
	gotV, gotIDs, err := idx.Export([]float32{42}, nil)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(gotIDs, []int64{7, 11}) || !slices.Equal(gotV, []float32{42, 1, 0, 0, 0, 0, 0, 1, 0}) {
		t.Fatalf("export = %v %v", gotV, gotIDs)
	}
	flat2, _ := NewIndexFlatIP(4)
	defer flat2.Close()
	flat2.Add([]float32{1, 0, 0, 0})
	if _, _, err := flat2.Export(nil, nil); err == nil {
		t.Fatal("export of a bare flat index should fail")
	}
}

func TestBadNorms(t *testing.T) {
	idx := mustIDMap2(t, 4)
	nan := float32(math.NaN())
	vecs := []float32{
		1, 0, 0, 0,
		0.6, 0.8, 0, 0,
		3, 0, 0, 0, // too long
		0, 0, 0, 1,
		nan, 0, 0, 0, // not a number
		0, 0, 0, 0, // zero
	}
	if err := idx.AddWithIDs(vecs, []int64{10, 11, 12, 13, 14, 15}); err != nil {
		t.Fatal(err)
	}
	n, first, err := idx.BadNorms(1e-3)
	if err != nil || n != 3 || first != 12 {
		t.Fatalf("BadNorms = %d, first %d, %v; want 3, first 12", n, first, err)
	}
	idx.RemoveIDs([]int64{12, 14, 15})
	if n, first, err := idx.BadNorms(1e-3); err != nil || n != 0 || first != -1 {
		t.Fatalf("after removal BadNorms = %d, first %d, %v; want 0, -1", n, first, err)
	}
	flat := mustFlatIP(t, 4)
	if _, _, err := flat.BadNorms(1e-3); err == nil {
		t.Fatal("norm check of a bare flat index should fail")
	}
}

// TestCompactIDMap2MatchesModel: an IDMap2 whose ids only grow keeps no
// id-to-row hash map (after a read, clone, add or remove), and still
// reconstructs, searches, removes, clones and round-trips exactly like a
// plain model of it; ids out of order bring FAISS's own map back, and
// everything still agrees.
func TestCompactIDMap2MatchesModel(t *testing.T) {
	const d = 16
	rng := rand.New(rand.NewPCG(11, 12))
	idx := mustIDMap2(t, d)
	model := map[int64][]float32{}
	next := int64(100)
	add := func(n int, ids []int64) {
		vecs := randNormalized(rng.Uint64(), n, d)
		if ids == nil {
			for range n {
				next += 1 + rng.Int64N(5)
				ids = append(ids, next)
			}
		}
		if err := idx.AddWithIDs(vecs, ids); err != nil {
			t.Fatal(err)
		}
		for i, id := range ids {
			model[id] = vecs[i*d : (i+1)*d]
		}
	}
	check := func(step string, wantCompact bool) {
		t.Helper()
		if got := idx.revMapSize() == 0; got != wantCompact {
			t.Fatalf("%s: rev_map has %d entries, compact %v wanted", step, idx.revMapSize(), wantCompact)
		}
		if idx.Ntotal() != int64(len(model)) {
			t.Fatalf("%s: %d vectors, model %d", step, idx.Ntotal(), len(model))
		}
		for id, want := range model {
			got, err := idx.Reconstruct(id, nil)
			if err != nil || !slices.Equal(got, want) {
				t.Fatalf("%s: reconstruct %d: %v", step, id, err)
			}
			_, labels, err := idx.Search(want, 1)
			if err != nil || labels[0] != id {
				t.Fatalf("%s: nearest to %d is %v (%v)", step, id, labels, err)
			}
		}
		for _, absent := range []int64{0, 99, next + 1, next + 1000} {
			if _, err := idx.Reconstruct(absent, nil); err == nil {
				t.Fatalf("%s: reconstruct of absent id %d succeeded", step, absent)
			}
		}
	}
	remove := func(k int) {
		var ids []int64
		for id := range model {
			if len(ids) == k {
				break
			}
			ids = append(ids, id)
		}
		n, err := idx.RemoveIDs(append(ids, next+77))
		if err != nil || n != len(ids) {
			t.Fatalf("removed %d of %d (%v)", n, len(ids), err)
		}
		for _, id := range ids {
			delete(model, id)
		}
	}
	add(300, nil)
	check("first add", true)
	remove(40)
	check("remove", true)
	add(50, nil)
	check("second add", true)
	clone, err := idx.Clone()
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "compact.index")
	if err := WriteIndex(idx, path); err != nil {
		t.Fatal(err)
	}
	idx.Close()
	idx = clone
	check("clone", true)
	idx.Close()
	if idx, err = ReadIndex(path); err != nil {
		t.Fatal(err)
	}
	defer func() { idx.Close() }()
	check("read back", true)
	// An id below the largest: the map comes back, and stays through removes.
	low := int64(101)
	for model[low] != nil {
		low++
	}
	add(1, []int64{low})
	check("id out of order", false)
	remove(20)
	check("remove with the map", false)
}

// Search is SearchInto with the buffers made: how the tests ask.
func (idx *Index) Search(x []float32, k int) (distances []float32, labels []int64, err error) {
	n, err := idx.rows(x)
	if err != nil {
		return nil, nil, err
	}
	if k <= 0 {
		return nil, nil, fmt.Errorf("faiss: k = %d must be positive", k)
	}
	distances, labels = make([]float32, n*k), make([]int64, n*k)
	if err := idx.SearchInto(x, k, distances, labels); err != nil {
		return nil, nil, err
	}
	return distances, labels, nil
}
