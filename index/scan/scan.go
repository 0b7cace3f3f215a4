// Package scan is a fast approximate first pass over 4-bit copies of unit
// vectors: it returns candidate ids for exact fp32 rescoring
// elsewhere.
//
// The inner loop is C (cgo, no FAISS) with kernels picked once at start-up
// for the CPU: AVX-512 VNNI, AVX2, or portable C.
package scan

/*
#cgo CFLAGS: -O3 -std=c11
#include "scan.h"
*/
import "C"

import (
	"cmp"
	"errors"
	"fmt"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"unsafe"
)

// Kernel ids, matching scan.h.
const (
	kernelGeneric    = C.SCAN_GENERIC
	kernelAVX2       = C.SCAN_AVX2
	kernelAVX512VNNI = C.SCAN_AVX512VNNI
)

var kernelNames = map[int]string{
	kernelGeneric:    "generic",
	kernelAVX2:       "avx2",
	kernelAVX512VNNI: "avx512vnni",
}

// activeKernel is chosen once; tests pass other kernels explicitly.
var activeKernel = int(C.scan_best_kernel())

func hasKernel(k int) bool { return C.scan_has_kernel(C.int(k)) != 0 }

const (
	align = 64 // row stride and start alignment, in bytes: one zmm load
	// minRowsPerWorker keeps goroutine start-up small next to the scan.
	minRowsPerWorker = 256
)

// Codes is an immutable 4-bit copy of unit vectors of dimension dim, each row named by an id. It is a base block, shared with the codes
// it was edited from, plus a small tail of rows added since and a set of
// dead base rows: an edit copies its change, not every row. Its memory is Go-allocated, so
// it needs no Close; it is safe for concurrent use.
type Codes struct {
	dim, stride int
	base, tail  *block
	dead        []uint64 // bit r: base row r is no longer live; nil when none
	ndead       int
}

// block is rows of codes that never change once made.
type block struct {
	n      int
	codes  []int8    // n rows of stride bytes, zero padded, aligned
	scales []float32 // per row: code units back to vector units
	ids    []int64
	byID   []int32 // rows in id order; nil when ids ascend already
}

func (c *Codes) newBlock(n int) *block {
	return &block{n: n, codes: alignedInt8(n * c.stride), scales: make([]float32, n), ids: make([]int64, n)}
}

// editMax is how many dead and tail rows codes of n live rows carry before
// an edit compacts them into one block: the compaction copies every row, so
// it is paid once per n/64 changed rows, and the scan wastes at most ~1/64
// of its time on dead rows. It matches the FAISS delta's bound (deltaMax in
// package index).
func editMax(n int) int { return max(1024, n/64) }

// Build quantises vecs, n rows of dim float32 values laid end to end, to
// 4-bit codes with one scale per row (its largest magnitude maps to 7;
// int8 codes, twice the bytes to scan, and the other alternatives measured
// are in docs/decisions.md); ids[i] names row i. vecs and ids are only read; the caller keeps them.
func Build(vecs []float32, ids []int64, dim int) (*Codes, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("scan: dim %d must be positive", dim)
	}
	if err := checkRows(vecs, dim); err != nil {
		return nil, err
	}
	n := len(vecs) / dim
	if len(ids) != n {
		return nil, fmt.Errorf("scan: %d ids for %d rows", len(ids), n)
	}
	if n > math.MaxInt32 {
		return nil, errors.New("scan: more than 2^31-1 rows")
	}
	// Two codes a byte: a row of dim codes takes dim/2 bytes, rounded up
	// to align.
	c := &Codes{dim: dim, stride: (dim + 2*align - 1) / (2 * align) * align}
	c.base, c.tail = c.newBlock(n), c.newBlock(0)
	c.fill(c.base, 0, vecs)
	copy(c.base.ids, ids)
	c.base.indexIDs()
	return c, nil
}

// checkRows rejects vecs that are not whole rows of finite values.
func checkRows(vecs []float32, dim int) error {
	if len(vecs)%dim != 0 {
		return fmt.Errorf("scan: %d values are not a whole number of %d-dim rows", len(vecs), dim)
	}
	for i, v := range vecs {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return fmt.Errorf("scan: row %d holds a non-finite value", i/dim)
		}
	}
	return nil
}

// fill quantises vecs into rows from, from+1, ... of b.
func (c *Codes) fill(b *block, from int, vecs []float32) {
	dim, stride := c.dim, c.stride
	n := len(vecs) / dim
	// Rows are independent: quantise them in parallel shares.
	workers := max(1, min(runtime.NumCPU(), n/4096))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := n * w / workers; i < n*(w+1)/workers; i++ {
				r := from + i
				b.scales[r] = quantise4(vecs[i*dim:(i+1)*dim], b.codes[r*stride:(r+1)*stride])
			}
		})
	}
	wg.Wait()
}

// copyRows copies rows [r, r+n) of src into rows to, to+1, ... of b.
func (b *block) copyRows(to int, src *block, r, n, stride int) {
	copy(b.codes[to*stride:(to+n)*stride], src.codes[r*stride:(r+n)*stride])
	copy(b.scales[to:to+n], src.scales[r:r+n])
	copy(b.ids[to:to+n], src.ids[r:r+n])
}

// indexIDs prepares row lookups by id: ids usually ascend (chunk ids are
// handed out in order), and then a binary search needs no index.
func (b *block) indexIDs() {
	if slices.IsSorted(b.ids) {
		b.byID = nil
		return
	}
	b.byID = make([]int32, b.n)
	for i := range b.byID {
		b.byID[i] = int32(i)
	}
	slices.SortFunc(b.byID, func(x, y int32) int { return cmp.Compare(b.ids[x], b.ids[y]) })
}

// row returns the row named id, or -1.
func (b *block) row(id int64) int {
	if b.byID == nil {
		if i, ok := slices.BinarySearch(b.ids, id); ok {
			return i
		}
		return -1
	}
	i := sort.Search(b.n, func(i int) bool { return b.ids[b.byID[i]] >= id })
	if i < b.n && b.ids[b.byID[i]] == id {
		return int(b.byID[i])
	}
	return -1
}

func (c *Codes) isDead(r int) bool { return c.dead != nil && c.dead[r>>6]>>(r&63)&1 != 0 }

// Edit returns codes without the rows named in remove (ids it does not hold
// are ignored) and with addVecs added under addIDs, removals first. It
// shares c's base block: the cost is a copy of the dead-row set and of the
// small tail, until dead and tail rows pass editMax and the result is
// compacted into one block. c is unchanged.
func (c *Codes) Edit(remove, addIDs []int64, addVecs []float32) (*Codes, error) {
	if err := checkRows(addVecs, c.dim); err != nil {
		return nil, err
	}
	if len(addVecs)/c.dim != len(addIDs) {
		return nil, fmt.Errorf("scan: %d ids for %d added rows", len(addIDs), len(addVecs)/c.dim)
	}
	if c.rows()+len(addIDs) > math.MaxInt32 {
		return nil, errors.New("scan: more than 2^31-1 rows")
	}
	gone := make(map[int64]bool, len(remove))
	for _, id := range remove {
		gone[id] = true
	}
	// The tail is newer than the base: an id there shadows a dead base row.
	var keep []int
	for r, id := range c.tail.ids {
		if gone[id] {
			delete(gone, id)
		} else {
			keep = append(keep, r)
		}
	}
	out := &Codes{dim: c.dim, stride: c.stride, base: c.base, dead: c.dead, ndead: c.ndead}
	copied := false
	for id := range gone {
		r := c.base.row(id)
		if r < 0 || out.isDead(r) {
			continue
		}
		if !copied {
			out.dead = make([]uint64, (c.base.n+63)/64)
			copy(out.dead, c.dead)
			copied = true
		}
		out.dead[r>>6] |= 1 << (r & 63)
		out.ndead++
	}
	out.tail = out.newBlock(len(keep) + len(addIDs))
	for to, r := range keep {
		out.tail.copyRows(to, c.tail, r, 1, c.stride)
	}
	c.fill(out.tail, len(keep), addVecs)
	copy(out.tail.ids[len(keep):], addIDs)
	if out.ndead+out.tail.n > editMax(out.Len()) {
		out.compact()
	}
	return out, nil
}

// compact moves c's live rows, base then tail, into one new base block.
func (c *Codes) compact() {
	b := c.newBlock(c.Len())
	to := 0
	// Dead rows are few: copy the runs of live rows between them whole.
	for r := 0; r < c.base.n; {
		if c.isDead(r) {
			r++
			continue
		}
		end := r + 1
		for end < c.base.n && !c.isDead(end) {
			end++
		}
		b.copyRows(to, c.base, r, end-r, c.stride)
		to += end - r
		r = end
	}
	b.copyRows(to, c.tail, 0, c.tail.n, c.stride)
	b.indexIDs()
	c.base, c.tail, c.dead, c.ndead = b, c.newBlock(0), nil, 0
}

// quantise maps v's largest magnitude to 127, rounds the rest into dst and
// returns the scale back to v's units (0 for a zero vector): the query's
// code. Codes stay in [-127, 127].
func quantise(v []float32, dst []int8) float32 {
	maxAbs := 0.0
	for _, x := range v {
		maxAbs = max(maxAbs, math.Abs(float64(x)))
	}
	if maxAbs == 0 {
		clear(dst)
		return 0
	}
	k := 127 / maxAbs
	for j, x := range v {
		f := float64(x) * k
		// Round half away from zero; |f| <= 127 up to rounding error.
		if f >= 0 {
			dst[j] = int8(min(127, int32(f+0.5)))
		} else {
			dst[j] = int8(max(-127, int32(f-0.5)))
		}
	}
	return float32(maxAbs / 127)
}

// quantise4 writes v as 4-bit codes into the packed row dst (layout in
// scan.c) and returns the scale back to v's units. The row's largest
// magnitude maps to 7: clipping at 0.7 of it, saturating the rest, lost
// recall on clustered data (docs/decisions.md, "4-bit first pass").
func quantise4(v []float32, dst []int8) float32 {
	clip := 0.0
	for _, x := range v {
		clip = max(clip, math.Abs(float64(x)))
	}
	clear(dst)
	if clip == 0 {
		return 0
	}
	k := 7 / clip
	for j, x := range v {
		f := math.Round(float64(x) * k)
		u := uint8(int(max(-7, min(7, f))) + 8)
		at := j/128*64 + j%64
		if j%128 >= 64 {
			u <<= 4
		}
		dst[at] |= int8(u)
	}
	return float32(clip / 7)
}

// alignedInt8 returns n zeroed bytes starting on an align boundary.
func alignedInt8(n int) []int8 {
	buf := make([]int8, n+align)
	off := 0
	if p := uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % align; p != 0 {
		off = int(align - p)
	}
	return buf[off : off+n : off+n]
}

// Len is the number of live rows.
func (c *Codes) Len() int { return c.base.n - c.ndead + c.tail.n }

// rows is the number of rows scanned, dead ones included.
func (c *Codes) rows() int { return c.base.n + c.tail.n }

// id names a row as numbered by candidates: base rows, then tail rows.
func (c *Codes) id(r int32) int64 {
	if int(r) < c.base.n {
		return c.base.ids[r]
	}
	return c.tail.ids[int(r)-c.base.n]
}

// scratch is one worker's buffers, reused through a pool.
type scratch struct {
	prep  []uint8
	score []float32
	idx   []int32
	got   int
}

var scratchPool sync.Pool

func getScratch(stride, n int) *scratch {
	s, _ := scratchPool.Get().(*scratch)
	if s == nil {
		s = &scratch{}
	}
	if cap(s.prep) < 2*stride+align {
		s.prep = make([]uint8, 2*stride+align)
	}
	if cap(s.score) < n {
		s.score = make([]float32, n)
		s.idx = make([]int32, n)
	}
	s.prep, s.score, s.idx = s.prep[:2*stride+align], s.score[:n], s.idx[:n]
	return s
}

// Candidates appends to dst the ids of the approximately best n live rows
// by inner product with query, best first, and returns the extended slice;
// dst and query stay the caller's. Fewer than n come back when there are
// fewer rows. Equal approximate scores go to the earlier row, so the result
// is the same for any worker count and kernel. workers goroutines each scan
// a contiguous share of the rows (workers <= 0 means runtime.NumCPU();
// shares stay at least 256 rows). It panics if len(query) != Dim().
func (c *Codes) Candidates(query []float32, n int, workers int, dst []int64) []int64 {
	s := getScratch(c.stride, 0)
	defer scratchPool.Put(s)
	s.idx = c.candidates(query, n, workers, s.idx[:0], activeKernel)
	for _, r := range s.idx {
		dst = append(dst, c.id(r))
	}
	return dst
}

// candidates is Candidates on a given kernel, giving row numbers: base rows,
// then tail rows.
func (c *Codes) candidates(query []float32, n, workers int, dst []int32, kernel int) []int32 {
	if len(query) != c.dim {
		panic(fmt.Sprintf("scan: query has %d values, want %d", len(query), c.dim))
	}
	n = min(n, c.Len())
	if n <= 0 {
		return dst
	}
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	rows := c.rows()
	workers = max(1, min(workers, rows/minRowsPerWorker))

	q := getScratch(c.stride, 0)
	defer scratchPool.Put(q)
	qcode := c.quantiseQuery(query, q.prep)

	parts := make([]*scratch, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = getScratch(c.stride, n)
		lo, hi := rows*w/workers, rows*(w+1)/workers
		if w == workers-1 {
			parts[w].got = c.scan(qcode, lo, hi, n, kernel, parts[w])
			break
		}
		wg.Go(func() { parts[w].got = c.scan(qcode, lo, hi, n, kernel, parts[w]) })
	}
	wg.Wait()
	dst = merge(parts, n, dst)
	for _, p := range parts {
		scratchPool.Put(p)
	}
	return dst
}

// quantiseQuery writes the query's int8 code, zero padded to the stride, into
// buf and returns it.
func (c *Codes) quantiseQuery(query []float32, buf []uint8) []int8 {
	qcode := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(buf))), 2*c.stride)
	clear(qcode[c.dim:])
	quantise(query, qcode[:c.dim]) // its scale is common to all scores
	return qcode
}

// scan keeps in s the best n live rows of [lo, hi), best first, and returns
// how many it kept.
func (c *Codes) scan(qcode []int8, lo, hi, n, kernel int, s *scratch) int {
	kept := 0
	if lo < c.base.n {
		kept = c.topn(c.base, qcode, c.dead, lo, min(hi, c.base.n), 0, n, kernel, s, kept)
	}
	if hi > c.base.n {
		kept = c.topn(c.tail, qcode, nil, max(lo, c.base.n)-c.base.n, hi-c.base.n, c.base.n, n, kernel, s, kept)
	}
	C.scan_sort((*C.float)(unsafe.Pointer(unsafe.SliceData(s.score))),
		(*C.int32_t)(unsafe.Pointer(unsafe.SliceData(s.idx))), C.int(kept))
	return kept
}

// topn adds block b's live rows [lo, hi), numbered from row0, to the heap of the
// best n in s, which holds kept entries, and returns its new length.
func (c *Codes) topn(b *block, qcode []int8, dead []uint64, lo, hi, row0, n, kernel int, s *scratch, kept int) int {
	var deadp *C.uint64_t
	if dead != nil {
		deadp = (*C.uint64_t)(unsafe.Pointer(unsafe.SliceData(dead)))
	}
	got := C.scan_topn(
		(*C.int8_t)(unsafe.Pointer(unsafe.SliceData(b.codes))),
		(*C.float)(unsafe.Pointer(unsafe.SliceData(b.scales))),
		deadp, C.int64_t(c.stride), C.int64_t(lo), C.int64_t(hi), C.int32_t(row0),
		(*C.int8_t)(unsafe.Pointer(unsafe.SliceData(qcode))),
		C.int32_t(n), C.int(kernel),
		(*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(s.prep))),
		C.int(kept),
		(*C.float)(unsafe.Pointer(unsafe.SliceData(s.score))),
		(*C.int32_t)(unsafe.Pointer(unsafe.SliceData(s.idx))),
	)
	return int(got)
}

// merge appends the best n of the parts' sorted lists to dst, ordering by
// score, then by row so the result does not depend on the worker count.
func merge(parts []*scratch, n int, dst []int32) []int32 {
	if len(parts) == 1 {
		return append(dst, parts[0].idx[:parts[0].got]...)
	}
	var headBuf [16]int
	head := headBuf[:0]
	if len(parts) > len(headBuf) {
		head = make([]int, 0, len(parts))
	}
	head = head[:len(parts)]
	clear(head)
	for range n {
		best := -1
		for p, s := range parts {
			h := head[p]
			if h >= s.got {
				continue
			}
			if best < 0 {
				best = p
				continue
			}
			b := parts[best]
			bs, bi := b.score[head[best]], b.idx[head[best]]
			if s.score[h] > bs || (s.score[h] == bs && s.idx[h] < bi) {
				best = p
			}
		}
		if best < 0 {
			break
		}
		dst = append(dst, parts[best].idx[head[best]])
		head[best]++
	}
	return dst
}
