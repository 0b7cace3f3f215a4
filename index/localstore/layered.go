package localstore

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sync/atomic"

	"github.com/micro-rag/micro-rag-mcp/index/faiss"
)

// sharedIndex is a FAISS index read by several snapshots; its C memory is
// freed when the last of them is released.
type sharedIndex struct {
	refs atomic.Int64
	idx  *faiss.Index
}

func (b *sharedIndex) release() {
	if b.refs.Add(-1) == 0 {
		b.idx.Close()
	}
}

// layered is a snapshot's vectors: a base FAISS index shared with earlier
// snapshots plus what commits since changed, so a small commit copies only
// its change instead of the whole index. The delta is folded into a fresh
// base once it outgrows deltaMax.
type layered struct {
	base    *sharedIndex
	added   map[int64][]float32 // vectors committed since base
	removed map[int64]bool      // ids of base no longer live
}

// deltaMax is how many added and removed vectors a snapshot carries on top
// of a base of n vectors before a commit folds them into a new base: the
// fold costs a copy of the index, so it is paid once per n/64 changes.
func deltaMax(n int64) int { return int(max(1024, n/64)) }

// newLayered takes idx as a base with no delta.
func newLayered(idx *faiss.Index) *layered {
	b := &sharedIndex{idx: idx}
	b.refs.Store(1)
	return &layered{base: b}
}

// Close drops this snapshot's share of the base.
func (l *layered) Close() {
	l.base.release()
}

func (l *layered) D() int { return l.base.idx.D() }

func (l *layered) Ntotal() int64 {
	return l.base.idx.Ntotal() - int64(len(l.removed)) + int64(len(l.added))
}

// Reconstruct returns the live vector of id, into dst when it has room.
func (l *layered) Reconstruct(id int64, dst []float32) ([]float32, error) {
	if v, ok := l.added[id]; ok {
		return append(dst[:0], v...), nil
	}
	if l.removed[id] {
		return nil, fmt.Errorf("reconstruct: chunk %d was removed", id)
	}
	return l.base.idx.Reconstruct(id, dst)
}

// SearchInto fills dist and labels (k each, -1 labels past the last hit)
// with the best live vectors by inner product, best first.
func (l *layered) SearchInto(query []float32, k int, dist []float32, labels []int64) error {
	if len(l.added) == 0 && len(l.removed) == 0 {
		return l.base.idx.SearchInto(query, k, dist, labels)
	}
	var best []idScore
	if n := l.base.idx.Ntotal(); n > 0 {
		kb := int(min(int64(k+len(l.removed)), n))
		bd, bl := make([]float32, kb), make([]int64, kb)
		if err := l.base.idx.SearchInto(query, kb, bd, bl); err != nil {
			return err
		}
		for i, id := range bl {
			if id >= 0 && !l.removed[id] {
				best = append(best, idScore{id, bd[i]})
			}
		}
	}
	for id, v := range l.added {
		best = append(best, idScore{id, dot(v, query)})
	}
	slices.SortFunc(best, bestFirst)
	for i := range k {
		if i < len(best) {
			dist[i], labels[i] = best[i].score, best[i].id
		} else {
			dist[i], labels[i] = 0, -1
		}
	}
	return nil
}

// idScore is a vector's id and its inner product with a query.
type idScore struct {
	id    int64
	score float32
}

// bestFirst orders by score, high first, ties by id so results are stable.
func bestFirst(a, b idScore) int {
	return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id))
}

// Export appends every live vector and its id: the base's, then the added
// ones by id.
func (l *layered) Export(vecs []float32, ids []int64) ([]float32, []int64, error) {
	d := l.D()
	from := len(ids)
	vecs, ids, err := l.base.idx.Export(vecs, ids)
	if err != nil {
		return nil, nil, err
	}
	if len(l.removed) > 0 {
		keep := from
		for i := from; i < len(ids); i++ {
			if l.removed[ids[i]] {
				continue
			}
			copy(vecs[keep*d:(keep+1)*d], vecs[i*d:(i+1)*d])
			ids[keep] = ids[i]
			keep++
		}
		vecs, ids = vecs[:keep*d], ids[:keep]
	}
	for _, id := range slices.Sorted(maps.Keys(l.added)) {
		vecs = append(vecs, l.added[id]...)
		ids = append(ids, id)
	}
	return vecs, ids, nil
}

// next returns the vectors after removing and adding: sharing l's base
// while the delta stays small, else (or when fold is set) as a new base
// holding exactly the live vectors. l is left unchanged.
func (l *layered) next(remove, addIDs []int64, addVecs []float32, fold bool) (*layered, error) {
	d := l.D()
	if len(addVecs) != len(addIDs)*d {
		return nil, errors.New("layered: vectors and ids disagree")
	}
	if fold || len(l.added)+len(l.removed)+len(remove)+len(addIDs) > deltaMax(l.base.idx.Ntotal()) {
		return l.fold(remove, addIDs, addVecs)
	}
	n := &layered{added: map[int64][]float32{}, removed: map[int64]bool{}}
	maps.Copy(n.added, l.added)
	maps.Copy(n.removed, l.removed)
	for _, id := range remove {
		if _, ok := n.added[id]; ok {
			delete(n.added, id)
		} else {
			n.removed[id] = true
		}
	}
	for i, id := range addIDs {
		n.added[id] = slices.Clone(addVecs[i*d : (i+1)*d])
	}
	l.base.refs.Add(1)
	n.base = l.base
	return n, nil
}

// fold copies the base with l's delta and the given changes applied; the
// new vectors go straight to FAISS (a full build passes them all here).
func (l *layered) fold(remove, addIDs []int64, addVecs []float32) (*layered, error) {
	gone := slices.Collect(maps.Keys(l.removed))
	dropped := map[int64]bool{}
	for _, id := range remove {
		if _, ok := l.added[id]; ok {
			dropped[id] = true
		} else {
			gone = append(gone, id)
		}
	}
	var ids []int64
	var vecs []float32
	for _, id := range slices.Sorted(maps.Keys(l.added)) {
		if !dropped[id] {
			ids = append(ids, id)
			vecs = append(vecs, l.added[id]...)
		}
	}
	if len(ids) == 0 {
		ids, vecs = addIDs, addVecs
	} else {
		ids, vecs = append(ids, addIDs...), append(vecs, addVecs...)
	}
	idx, err := l.base.idx.Clone()
	if err != nil {
		return nil, err
	}
	if len(gone) > 0 {
		if _, err := idx.RemoveIDs(gone); err != nil {
			idx.Close()
			return nil, err
		}
	}
	if len(ids) > 0 {
		if err := idx.AddWithIDs(vecs, ids); err != nil {
			idx.Close()
			return nil, err
		}
	}
	return newLayered(idx), nil
}

// dot is the inner product of two vectors of v's length.
func dot(v, w []float32) float32 {
	var d float32
	for i, x := range v {
		d += x * w[i]
	}
	return d
}
