// Package scan is a fast approximate first pass over int8 copies of unit
// vectors: it returns candidate rows for exact fp32 rescoring elsewhere.
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
	"errors"
	"fmt"
	"math"
	"runtime"
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

// Kernel names the kernel Candidates runs on this machine: "avx512vnni",
// "avx2" or "generic".
func Kernel() string { return kernelNames[activeKernel] }

func hasKernel(k int) bool { return C.scan_has_kernel(C.int(k)) != 0 }

const (
	align = 64 // row stride and start alignment, in bytes: one zmm load
	// minRowsPerWorker keeps goroutine start-up small next to the scan.
	minRowsPerWorker = 256
)

// Codes is an immutable int8 copy of n unit vectors of dimension dim. Its
// memory is Go-allocated, so it needs no Close; it is safe for concurrent
// use.
type Codes struct {
	dim, stride, n int
	codes          []int8    // n rows of stride bytes, zero padded, aligned
	scales         []float32 // per row: code units back to vector units
	rowsums        []int32   // per row: sum of its codes, for the VNNI kernel
}

// Build quantises vecs, n rows of dim float32 values laid end to end, to
// int8 with one scale per row (its largest magnitude maps to 127; the
// alternatives measured are in docs/decisions.md). vecs is only read; the
// caller keeps it.
func Build(vecs []float32, dim int) (*Codes, error) {
	if dim <= 0 {
		return nil, fmt.Errorf("scan: dim %d must be positive", dim)
	}
	if len(vecs)%dim != 0 {
		return nil, fmt.Errorf("scan: %d values are not a whole number of %d-dim rows", len(vecs), dim)
	}
	n := len(vecs) / dim
	if n > math.MaxInt32 {
		return nil, errors.New("scan: more than 2^31-1 rows")
	}
	for i, v := range vecs {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("scan: row %d holds a non-finite value", i/dim)
		}
	}
	stride := (dim + align - 1) / align * align
	c := &Codes{
		dim:     dim,
		stride:  stride,
		n:       n,
		codes:   alignedInt8(n * stride),
		scales:  make([]float32, n),
		rowsums: make([]int32, n),
	}

	// Rows are independent: quantise them in parallel shares.
	c.fill(0, vecs)
	return c, nil
}

// fill quantises vecs into rows from, from+1, ... of c.
func (c *Codes) fill(from int, vecs []float32) {
	n, dim, stride := len(vecs)/c.dim, c.dim, c.stride
	workers := max(1, min(runtime.NumCPU(), n/4096))
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for i := n * w / workers; i < n*(w+1)/workers; i++ {
				r := from + i
				row := c.codes[r*stride : r*stride+dim]
				c.scales[r] = quantise(vecs[i*dim:(i+1)*dim], row)
				sum := int32(0)
				for _, x := range row {
					sum += int32(x)
				}
				c.rowsums[r] = sum
			}
		})
	}
	wg.Wait()
}

// Edit returns new codes holding c's rows except those marked in drop (one
// flag per row, or nil), in order, followed by add quantised: what Build
// would give on the edited vectors, at the cost of a copy of the kept rows
// instead of quantising them all again. c is unchanged.
func (c *Codes) Edit(drop []bool, add []float32) (*Codes, error) {
	if drop != nil && len(drop) != c.n {
		return nil, fmt.Errorf("scan: %d drop flags for %d rows", len(drop), c.n)
	}
	if len(add)%c.dim != 0 {
		return nil, fmt.Errorf("scan: %d values are not a whole number of %d-dim rows", len(add), c.dim)
	}
	for i, v := range add {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			return nil, fmt.Errorf("scan: added row %d holds a non-finite value", i/c.dim)
		}
	}
	kept := c.n
	for _, d := range drop {
		if d {
			kept--
		}
	}
	n := kept + len(add)/c.dim
	if n > math.MaxInt32 {
		return nil, errors.New("scan: more than 2^31-1 rows")
	}
	out := &Codes{dim: c.dim, stride: c.stride, n: n, codes: alignedInt8(n * c.stride),
		scales: make([]float32, n), rowsums: make([]int32, n)}
	r := 0
	for i := range c.n {
		if drop != nil && drop[i] {
			continue
		}
		copy(out.codes[r*c.stride:(r+1)*c.stride], c.codes[i*c.stride:(i+1)*c.stride])
		out.scales[r], out.rowsums[r] = c.scales[i], c.rowsums[i]
		r++
	}
	out.fill(kept, add)
	return out, nil
}

// quantise maps v's largest magnitude to 127, rounds the rest into dst and
// returns the scale back to v's units (0 for a zero vector). Codes stay in
// [-127, 127]: the kernels rely on -128 never occurring.
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

// alignedInt8 returns n zeroed bytes starting on an align boundary.
func alignedInt8(n int) []int8 {
	buf := make([]int8, n+align)
	off := 0
	if p := uintptr(unsafe.Pointer(unsafe.SliceData(buf))) % align; p != 0 {
		off = int(align - p)
	}
	return buf[off : off+n : off+n]
}

// Len is the number of rows.
func (c *Codes) Len() int { return c.n }

// Dim is the vector dimension.
func (c *Codes) Dim() int { return c.dim }

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

// Candidates appends to dst the row numbers of the approximately best n rows
// by inner product with query, best first, and returns the extended slice;
// dst and query stay the caller's. Fewer than n come back when there are
// fewer rows. Equal approximate scores go to the lower row, so the result is
// the same for any worker count and kernel. workers goroutines each scan a
// contiguous share of the rows (workers <= 0 means runtime.NumCPU(); shares
// stay at least 256 rows). It panics if len(query) != Dim().
func (c *Codes) Candidates(query []float32, n int, workers int, dst []int32) []int32 {
	return c.candidates(query, n, workers, dst, activeKernel)
}

func (c *Codes) candidates(query []float32, n, workers int, dst []int32, kernel int) []int32 {
	if len(query) != c.dim {
		panic(fmt.Sprintf("scan: query has %d values, want %d", len(query), c.dim))
	}
	n = min(n, c.n)
	if n <= 0 {
		return dst
	}
	if workers <= 0 {
		workers = runtime.NumCPU()
	}
	workers = max(1, min(workers, c.n/minRowsPerWorker))

	q := getScratch(c.stride, 0)
	defer scratchPool.Put(q)
	qcode := c.quantiseQuery(query, q.prep)

	parts := make([]*scratch, workers)
	var wg sync.WaitGroup
	for w := range workers {
		parts[w] = getScratch(c.stride, n)
		lo, hi := c.n*w/workers, c.n*(w+1)/workers
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
	qcode := unsafe.Slice((*int8)(unsafe.Pointer(unsafe.SliceData(buf))), c.stride)
	clear(qcode[c.dim:])
	quantise(query, qcode[:c.dim]) // its scale is common to all scores
	return qcode
}

func (c *Codes) scan(qcode []int8, lo, hi, n, kernel int, s *scratch) int {
	if hi <= lo {
		return 0
	}
	got := C.scan_topn(
		(*C.int8_t)(unsafe.Pointer(unsafe.SliceData(c.codes))),
		(*C.float)(unsafe.Pointer(unsafe.SliceData(c.scales))),
		(*C.int32_t)(unsafe.Pointer(unsafe.SliceData(c.rowsums))),
		C.int64_t(c.stride), C.int64_t(lo), C.int64_t(hi),
		(*C.int8_t)(unsafe.Pointer(unsafe.SliceData(qcode))),
		C.int32_t(n), C.int(kernel),
		(*C.uint8_t)(unsafe.Pointer(unsafe.SliceData(s.prep))),
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
