package localstore

import (
	"hash/maphash"
	"iter"
	"maps"
)

// cowShards is how many maps a cowMap is split into. A commit copies only
// the shards it changes: at 1M chunks one shard holds about 4,000 of them.
const cowShards = 256

// cowMap is a map that snapshots share with the writer. Share returns a
// view in O(cowShards) and marks every shard shared; a later Set or Delete
// copies the one shard it touches first. Views are read concurrently; each
// is changed by one goroutine at most.
type cowMap[K comparable, V any] struct {
	shards *[cowShards]*cowShard[K, V]
	shard  func(K) uint8
	n      int
}

type cowShard[K comparable, V any] struct {
	m      map[K]V
	shared bool // read by a view other than its owner; copy before changing
}

var pathSeed = maphash.MakeSeed()

func (c *cowMap[K, V]) Len() int { return c.n }

func (c *cowMap[K, V]) Get(k K) (V, bool) {
	var zero V
	s := c.shards[c.shard(k)]
	if s == nil {
		return zero, false
	}
	v, ok := s.m[k]
	return v, ok
}

// own returns k's shard, ready to change: a shard shared with another view
// is copied first.
func (c *cowMap[K, V]) own(k K) *cowShard[K, V] {
	i := c.shard(k)
	s := c.shards[i]
	switch {
	case s == nil:
		s = &cowShard[K, V]{m: map[K]V{}}
		c.shards[i] = s
	case s.shared:
		s = &cowShard[K, V]{m: maps.Clone(s.m)}
		c.shards[i] = s
	}
	return s
}

func (c *cowMap[K, V]) Set(k K, v V) {
	s := c.own(k)
	if _, ok := s.m[k]; !ok {
		c.n++
	}
	s.m[k] = v
}

func (c *cowMap[K, V]) Delete(k K) {
	if _, ok := c.Get(k); !ok {
		return
	}
	delete(c.own(k).m, k)
	c.n--
}

// Share returns a view with c's contents. Both c and the view copy a shard
// before their next change to it.
func (c *cowMap[K, V]) Share() *cowMap[K, V] {
	view := &cowMap[K, V]{shards: new([cowShards]*cowShard[K, V]), shard: c.shard, n: c.n}
	for i, s := range c.shards {
		if s != nil && !s.shared {
			s.shared = true
		}
		view.shards[i] = s
	}
	return view
}

// All yields every entry, in no particular order.
func (c *cowMap[K, V]) All() iter.Seq2[K, V] {
	return func(yield func(K, V) bool) {
		for _, s := range c.shards {
			if s == nil {
				continue
			}
			for k, v := range s.m {
				if !yield(k, v) {
					return
				}
			}
		}
	}
}
