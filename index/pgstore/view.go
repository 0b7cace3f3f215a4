package pgstore

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

func (v *View) tryRef() bool {
	for {
		n := v.refs.Load()
		if n <= 0 {
			return false
		}
		if v.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference taken by Acquire.
func (v *View) Release() { v.refs.Add(-1) }

func (v *View) Files() int           { return len(v.files) }
func (v *View) Chunks() int          { return len(v.live) }
func (v *View) Tombstones() int      { return v.tombstones }
func (v *View) LastReindex() string  { return v.lastReindex }
func (v *View) Paths() []string      { return v.paths }
func (v *View) isLive(id int64) bool { _, ok := slices.BinarySearch(v.live, id); return ok }
func (v *View) ctx() context.Context { return context.Background() }
func (v *View) File(path string) (*schema.FileEntry, bool) {
	f, ok := v.files[path]
	return f, ok
}

func (v *View) checkLive(id int64) error {
	if !v.isLive(id) {
		return fmt.Errorf("chunk %d is not in the index's commit %d", id, v.gen)
	}
	return nil
}

// Record returns one live chunk's record.
func (v *View) Record(id int64) (schema.Record, error) {
	if err := v.checkLive(id); err != nil {
		return schema.Record{}, err
	}
	var r schema.Record
	err := v.s.retryRead(func() error {
		return v.s.pool.QueryRow(v.ctx(), v.s.q.record, id).Scan(append(headFields(&r), &r.Text, &r.Headings)...)
	})
	if err != nil {
		return schema.Record{}, fmt.Errorf("postgres: chunk %d: %w", id, err)
	}
	r.EmbeddingDim = v.s.version.Dim
	return r, nil
}

func headFields(r *schema.Record) []any {
	return []any{&r.ID, &r.Path, &r.Ext, &r.Mtime, &r.Checksum, &r.ChunkIndex, &r.CharStart, &r.CharEnd, &r.Page, &r.LineStart, &r.LineEnd}
}

// Head is Record without the text and headings.
func (v *View) Head(id int64) (schema.Record, error) {
	h, err := v.Heads([]int64{id})
	if err != nil {
		return schema.Record{}, err
	}
	return h[0], nil
}

// Heads is Head for many chunks in one query, in the order of ids.
func (v *View) Heads(ids []int64) ([]schema.Record, error) {
	return inOrder(v, ids, "row", func(ids []int64) (map[int64]schema.Record, error) { return v.records(v.s.q.heads, ids, false) })
}

// inOrder is what read gives for live chunks ids, in the order of ids; a
// chunk it gives nothing for is an error naming what (a row, a vector).
func inOrder[T any](v *View, ids []int64, what string, read func(ids []int64) (map[int64]T, error)) ([]T, error) {
	for _, id := range ids {
		if err := v.checkLive(id); err != nil {
			return nil, err
		}
	}
	byID, err := read(ids)
	if err != nil {
		return nil, err
	}
	out := make([]T, len(ids))
	for i, id := range ids {
		x, ok := byID[id]
		if !ok {
			return nil, fmt.Errorf("postgres: chunk %d has no %s", id, what)
		}
		out[i] = x
	}
	return out, nil
}

// records reads the rows of ids by sql (heads, or with text when full).
func (v *View) records(sql string, ids []int64, full bool) (map[int64]schema.Record, error) {
	var out map[int64]schema.Record
	var r schema.Record
	scan := headFields(&r)
	if full {
		scan = append(scan, &r.Text, &r.Headings)
	}
	err := v.s.eachRow(v.ctx(), func() { out = make(map[int64]schema.Record, len(ids)) }, scan, func() error {
		r.EmbeddingDim = v.s.version.Dim
		out[r.ID] = r
		return nil
	}, sql, ids)
	if err != nil {
		return nil, fmt.Errorf("postgres: read chunks: %w", err)
	}
	return out, nil
}

// FileChunk returns chunk i (from 0) of a file.
func (v *View) FileChunk(path string, i int) (schema.Record, bool, error) {
	f, ok := v.files[path]
	if !ok {
		return schema.Record{}, false, nil
	}
	if i < 0 || i >= len(f.ChunkIDs) {
		return schema.Record{}, true, fmt.Errorf("%s has chunks 0 to %d; there is no chunk %d", path, len(f.ChunkIDs)-1, i)
	}
	// Chunk ids are kept in chunk order (PutFile hands them out so).
	r, err := v.Record(f.ChunkIDs[i])
	if err == nil && r.ChunkIndex != i {
		err = fmt.Errorf("%s: chunk %d holds chunk index %d", path, f.ChunkIDs[i], r.ChunkIndex)
	}
	return r, true, err
}

// Nearest returns up to k live chunks nearest the normalised query vector,
// best first, scored by their stored (full-precision) vectors: by the
// IVFFlat index with its probes, or the HNSW index with ef_search =
// max(EfSearch, k), at most MaxEfSearch (the iterative scan goes on past
// it for a larger k).
func (v *View) Nearest(query []float32, k int) ([]index.Match, error) {
	if k <= 0 || len(v.live) == 0 {
		return nil, nil
	}
	k = min(k, len(v.live))
	var out []index.Match
	if err := v.s.retryRead(func() (err error) { out, err = v.sendNearest(query, k); return err }); err != nil {
		return nil, fmt.Errorf("postgres: kNN: %w", err)
	}
	// An IVFFlat iterative scan returns rows in relaxed order.
	slices.SortStableFunc(out, func(a, b index.Match) int { return cmp.Compare(b.Score, a.Score) })
	return out[:min(k, len(out))], nil
}

// sendNearest sends Nearest's settings and query in one batch, made
// afresh for each try (a batch sent once remembers its connection's
// prepared statements); a sharded IVFFlat index gets one such batch a
// shard, on connections of their own at once, the rows merged.
func (v *View) sendNearest(query []float32, k int) ([]index.Match, error) {
	ef := int(v.s.efSearch.Load())
	var settings [][2]string
	sqls, limit := []string{v.s.q.nearest}, k
	if ef == ExactSearch {
		// A sequential scan: every distance computed, no graph.
		settings = [][2]string{{"enable_indexscan", "off"}}
	} else {
		// Both settings are sent: the index may have changed kind since
		// lists was read, and the other is ignored.
		settings = [][2]string{
			{"hnsw.ef_search", strconv.Itoa(min(max(ef, k), MaxEfSearch))},
			{"ivfflat.probes", strconv.Itoa(v.s.probesNow())},
		}
		half := 0
		if v.s.half.Load() {
			// Half precision moves a cosine by about 1e-5, enough to
			// swap near-ties: the nearest 2k by it are scored at full
			// precision and cut to k by Nearest.
			sqls, limit, half = []string{v.s.q.nearestHalf}, 2*k, 1
		}
		if v.s.shards.Load() == ivfShards {
			sqls = v.s.q.nearestShard[half][:]
		}
	}
	if len(sqls) == 1 {
		return v.nearestBatch(settings, sqls[0], query, limit)
	}
	found := make([][]index.Match, len(sqls))
	errs := make([]error, len(sqls))
	var wg sync.WaitGroup
	for i, sql := range sqls {
		wg.Go(func() { found[i], errs[i] = v.nearestBatch(settings, sql, query, limit) })
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	return slices.Concat(found...), nil
}

// nearestBatch runs sql's kNN query with settings (local to the batch,
// one implicit transaction) in one round trip.
func (v *View) nearestBatch(settings [][2]string, sql string, query []float32, limit int) ([]index.Match, error) {
	b := &pgx.Batch{}
	for _, s := range settings {
		b.Queue("SELECT set_config($1, $2, true)", s[0], s[1])
	}
	b.Queue(sql, query, v.nextID, v.gen, limit)
	br := v.s.pool.SendBatch(v.ctx(), b)
	defer br.Close()
	for range b.Len() - 1 {
		if _, err := br.Exec(); err != nil {
			return nil, err
		}
	}
	rows, _ := br.Query()
	out := make([]index.Match, 0, limit)
	var m index.Match
	if _, err := pgx.ForEachRow(rows, []any{&m.ID, &m.Score}, func() error {
		out = append(out, m)
		return nil
	}); err != nil {
		return nil, err
	}
	return out, br.Close()
}

// Search is Nearest with the records read.
func (v *View) Search(query []float32, k int) ([]index.Hit, error) {
	near, err := v.Nearest(query, k)
	if err != nil || len(near) == 0 {
		return nil, err
	}
	ids := make([]int64, len(near))
	for i, m := range near {
		ids[i] = m.ID
	}
	recs, err := inOrder(v, ids, "row", func(ids []int64) (map[int64]schema.Record, error) { return v.records(v.s.q.full, ids, true) })
	if err != nil {
		return nil, err
	}
	hits := make([]index.Hit, len(near))
	for i, m := range near {
		hits[i] = index.Hit{Record: recs[i], Score: m.Score}
	}
	return hits, nil
}

// Similarities are the cosines of the query and the stored vectors of ids
// (exact, computed here as the local index computes them).
func (v *View) Similarities(query []float32, ids []int64) ([]float32, error) {
	vecs, err := v.Vectors(ids)
	if err != nil {
		return nil, err
	}
	out := make([]float32, len(ids))
	for i, vec := range vecs {
		out[i] = dot(vec, query)
	}
	return out, nil
}

// Vectors are the stored vectors of live chunks ids, in the order of ids.
func (v *View) Vectors(ids []int64) ([][]float32, error) {
	return inOrder(v, ids, "vector", v.vectorsOf)
}

func (v *View) vectorsOf(ids []int64) (map[int64][]float32, error) {
	var out map[int64][]float32
	var id int64
	var vec []float32
	if err := v.s.eachRow(v.ctx(), func() { out = make(map[int64][]float32, len(ids)) }, []any{&id, &vec}, func() error {
		out[id] = vec
		vec = nil
		return nil
	}, v.s.q.vectors, ids); err != nil {
		return nil, fmt.Errorf("postgres: read vectors: %w", err)
	}
	return out, nil
}

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

// ChunkVectors returns the stored vectors of a file's chunks by text hash;
// nil when the file is not indexed or the read fails (everything is then
// embedded again).
func (v *View) ChunkVectors(path string) map[uint64][]float32 {
	f, ok := v.files[path]
	if !ok || len(f.ChunkIDs) == 0 {
		return nil
	}
	var out map[uint64][]float32
	var id int64
	var text string
	var vec []float32
	if err := v.s.eachRow(v.ctx(), func() { out = make(map[uint64][]float32, len(f.ChunkIDs)) }, []any{&id, &text, &vec}, func() error {
		out[schema.TextHash(text)] = vec
		vec = nil
		return nil
	}, v.s.q.textVectors, f.ChunkIDs); err != nil {
		v.s.log.Warn("reading stored vectors; the file's chunks are embedded again", "path", path, "err", err)
		return nil
	}
	return out
}

// LexicalQuery looks query's keyword terms up in the view's keyword index
// (package lexical's own, so scores equal the local backend's).
func (v *View) LexicalQuery(query string) index.KeywordQuery {
	return v.lex.Query(query)
}
