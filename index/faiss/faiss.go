// Package faiss is a small cgo binding over Debian's static FAISS 1.7.3,
// shaped like go-faiss. Debian's libfaiss lacks the FAISS C API, so the
// package carries its own C++ shim (shim.cpp) that turns C++ exceptions into
// Go errors.
//
// Thread safety: an Index is not safe for concurrent mutation. Concurrent
// Search/SearchInto/Reconstruct calls on one index that nobody mutates are
// safe for the flat and IDMap2 indexes this project uses (FAISS searches
// are const). Mutating calls (Add, AddWithIDs, RemoveIDs) need exclusive
// access. Close must not run while any other call on the same index is in
// flight: callers reference-count snapshots and close only after the last
// reader is done.
package faiss

/*
#cgo CXXFLAGS: -std=c++17 -fopenmp -O2
#if !__has_include(<faiss/IndexIDMap.h>)
#error "FAISS headers not found (Debian package libfaiss-dev): run `make setup`"
#endif
#include <stdlib.h>
#include "shim.h"
*/
import "C"

import (
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"unsafe"
)

// MetricInnerProduct is FAISS's number for the inner-product metric, the
// only one this project uses.
const MetricInnerProduct = 0

// ErrClosed is returned by calls on an index that was closed or whose
// ownership moved into another index.
var ErrClosed = errors.New("faiss: index is closed")

// Index is a FAISS index in C++ memory. Call Close when done; a cleanup
// frees a forgotten index at garbage collection only as a safety net.
type Index struct {
	ptr     C.fs_index
	d       int
	mu      sync.Mutex // serialises Close/ownership transfer only
	cleanup runtime.Cleanup
}

func wrap(ptr C.fs_index) *Index {
	idx := &Index{ptr: ptr, d: int(C.fs_index_d(ptr))}
	idx.cleanup = runtime.AddCleanup(idx, func(p C.fs_index) { C.fs_index_free(p) }, ptr)
	return idx
}

// cError turns a shim error string into a Go error and frees it.
func cError(op string, msg *C.char) error {
	if msg == nil {
		return nil
	}
	defer C.free(unsafe.Pointer(msg))
	return fmt.Errorf("faiss: %s: %s", op, C.GoString(msg))
}

// NewIndexFlatIP returns an exact inner-product index of dimension d.
func NewIndexFlatIP(d int) (*Index, error) {
	if d <= 0 {
		return nil, fmt.Errorf("faiss: dimension %d must be positive", d)
	}
	var p C.fs_index
	if err := cError("IndexFlat", C.fs_index_flat(C.int(d), C.int(MetricInnerProduct), &p)); err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// NewIDMap2 wraps inner in an IndexIDMap2, which maps caller-chosen int64
// ids to vectors and supports Reconstruct by id. It takes ownership of
// inner: afterwards inner's methods return ErrClosed and inner.Close is a
// no-op; closing the returned index frees both.
func NewIDMap2(inner *Index) (*Index, error) {
	inner.mu.Lock()
	defer inner.mu.Unlock()
	if inner.ptr == nil {
		return nil, ErrClosed
	}
	var p C.fs_index
	if err := cError("IndexIDMap2", C.fs_index_idmap2(inner.ptr, &p)); err != nil {
		return nil, err
	}
	inner.detach()
	return wrap(p), nil
}

// ReadIndex loads an index written by WriteIndex or by FAISS itself.
func ReadIndex(path string) (*Index, error) {
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	var p C.fs_index
	if err := cError("read_index", C.fs_read_index(cs, &p)); err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// WriteIndex serialises idx to path in FAISS's own format. It writes path
// in place; callers wanting atomic replacement write a temporary file and
// rename it.
func WriteIndex(idx *Index, path string) error {
	if idx.ptr == nil {
		return ErrClosed
	}
	cs := C.CString(path)
	defer C.free(unsafe.Pointer(cs))
	err := cError("write_index", C.fs_write_index(idx.ptr, cs))
	runtime.KeepAlive(idx)
	return err
}

// detach gives up ownership of the C++ index without freeing it; the
// caller holds idx.mu.
func (idx *Index) detach() {
	idx.cleanup.Stop()
	idx.ptr = nil
}

// Close frees the index. It is idempotent and must not run concurrently
// with other calls on the same index.
func (idx *Index) Close() error {
	idx.mu.Lock()
	defer idx.mu.Unlock()
	if idx.ptr == nil {
		return nil
	}
	idx.cleanup.Stop()
	C.fs_index_free(idx.ptr)
	idx.ptr = nil
	return nil
}

// revMapSize is the size of an IDMap2's id-to-row hash map (-1 for other
// indexes): 0 once the shim keeps it compact (shim.cpp).
func (idx *Index) revMapSize() int64 {
	n := C.fs_index_rev_map_size(idx.ptr)
	runtime.KeepAlive(idx)
	return int64(n)
}

// D is the vector dimension.
func (idx *Index) D() int { return idx.d }

// Ntotal is the number of vectors in the index (0 once closed).
func (idx *Index) Ntotal() int64 {
	if idx.ptr == nil {
		return 0
	}
	n := int64(C.fs_index_ntotal(idx.ptr))
	runtime.KeepAlive(idx)
	return n
}

// MetricType is the FAISS metric number (MetricInnerProduct for every index
// this project builds).
func (idx *Index) MetricType() int {
	if idx.ptr == nil {
		return -1
	}
	m := int(C.fs_index_metric(idx.ptr))
	runtime.KeepAlive(idx)
	return m
}

// rows checks that x holds whole vectors and returns how many.
func (idx *Index) rows(x []float32) (int, error) {
	if idx.ptr == nil {
		return 0, ErrClosed
	}
	if len(x)%idx.d != 0 {
		return 0, fmt.Errorf("faiss: vector data length %d is not a multiple of dimension %d", len(x), idx.d)
	}
	return len(x) / idx.d, nil
}

// Add appends the row-major vectors in x with sequential ids.
func (idx *Index) Add(x []float32) error {
	n, err := idx.rows(x)
	if err != nil || n == 0 {
		return err
	}
	err = cError("add", C.fs_index_add(idx.ptr, C.int64_t(n), (*C.float)(&x[0])))
	runtime.KeepAlive(idx)
	return err
}

// AddWithIDs appends the row-major vectors in x under the given ids, one
// per vector. Flat indexes refuse it; wrap them with NewIDMap2.
func (idx *Index) AddWithIDs(x []float32, ids []int64) error {
	n, err := idx.rows(x)
	if err != nil {
		return err
	}
	if len(ids) != n {
		return fmt.Errorf("faiss: %d ids for %d vectors", len(ids), n)
	}
	if n == 0 {
		return nil
	}
	err = cError("add_with_ids", C.fs_index_add_with_ids(idx.ptr, C.int64_t(n), (*C.float)(&x[0]), (*C.int64_t)(&ids[0])))
	runtime.KeepAlive(idx)
	return err
}

// RemoveIDs removes the vectors with the given ids and returns how many
// were removed. On a bare flat index ids are positions, and the remaining
// vectors shift down.
func (idx *Index) RemoveIDs(ids []int64) (int, error) {
	if idx.ptr == nil {
		return 0, ErrClosed
	}
	if len(ids) == 0 {
		return 0, nil
	}
	var removed C.int64_t
	err := cError("remove_ids", C.fs_index_remove_ids(idx.ptr, C.int64_t(len(ids)), (*C.int64_t)(&ids[0]), &removed))
	runtime.KeepAlive(idx)
	return int(removed), err
}

// SearchInto writes the k nearest neighbours of each query in x, row-major,
// into caller-owned buffers, so a hot path can reuse them and allocate
// nothing: distances[i*k+j] and labels[i*k+j] are query i's j-th hit (label
// -1 when fewer than k vectors exist). distances and labels must each hold
// at least len(x)/D()*k elements; the first len(x)/D()*k are overwritten.
func (idx *Index) SearchInto(x []float32, k int, distances []float32, labels []int64) error {
	n, err := idx.rows(x)
	if err != nil {
		return err
	}
	if k <= 0 {
		return fmt.Errorf("faiss: k = %d must be positive", k)
	}
	if len(distances) < n*k || len(labels) < n*k {
		return fmt.Errorf("faiss: result buffers hold %d distances and %d labels, need %d", len(distances), len(labels), n*k)
	}
	if n == 0 {
		return nil
	}
	msg := C.fs_index_search(idx.ptr, C.int64_t(n), (*C.float)(&x[0]), C.int64_t(k), (*C.float)(&distances[0]), (*C.int64_t)(&labels[0]))
	runtime.KeepAlive(idx)
	return cError("search", msg)
}

// Reconstruct returns the stored vector for id: the external id on an
// IDMap2 index, the position on a flat one. It writes into dst when dst
// has capacity for D() values, else allocates.
func (idx *Index) Reconstruct(id int64, dst []float32) ([]float32, error) {
	if idx.ptr == nil {
		return nil, ErrClosed
	}
	if cap(dst) >= idx.d {
		dst = dst[:idx.d]
	} else {
		dst = make([]float32, idx.d)
	}
	err := cError("reconstruct", C.fs_index_reconstruct(idx.ptr, C.int64_t(id), (*C.float)(&dst[0])))
	runtime.KeepAlive(idx)
	if err != nil {
		return nil, err
	}
	return dst, nil
}

// Clone returns a deep copy (faiss::clone_index) that shares nothing with
// idx; the copy must be closed separately.
func (idx *Index) Clone() (*Index, error) {
	if idx.ptr == nil {
		return nil, ErrClosed
	}
	var p C.fs_index
	err := cError("clone_index", C.fs_index_clone(idx.ptr, &p))
	runtime.KeepAlive(idx)
	if err != nil {
		return nil, err
	}
	return wrap(p), nil
}

// BadNorms counts the vectors of an IDMap2-over-flat index whose length is
// farther than tol from 1 (NaN included) and returns the id of the first
// one (-1 when none). Stored vectors are normalised, so any such vector is
// damage. It reads the vectors in place.
func (idx *Index) BadNorms(tol float32) (count, firstID int64, err error) {
	if idx.ptr == nil {
		return 0, -1, ErrClosed
	}
	var n, first C.int64_t
	err = cError("bad_norms", C.fs_index_bad_norms(idx.ptr, C.float(tol), &n, &first))
	runtime.KeepAlive(idx)
	return int64(n), int64(first), err
}

// Export copies every vector and its external id out of an IDMap2 index, in
// storage order, appending to vecs and ids (caller-owned buffers).
func (idx *Index) Export(vecs []float32, ids []int64) ([]float32, []int64, error) {
	if idx.ptr == nil {
		return nil, nil, ErrClosed
	}
	n := int(idx.Ntotal())
	vecs = slices.Grow(vecs, n*idx.d)
	ids = slices.Grow(ids, n)
	if n == 0 {
		return vecs, ids, nil
	}
	v := vecs[len(vecs) : len(vecs)+n*idx.d]
	l := ids[len(ids) : len(ids)+n]
	err := cError("export", C.fs_index_export(idx.ptr, (*C.float)(&v[0]), (*C.int64_t)(&l[0])))
	runtime.KeepAlive(idx)
	if err != nil {
		return nil, nil, err
	}
	return vecs[:len(vecs)+n*idx.d], ids[:len(ids)+n], nil
}
