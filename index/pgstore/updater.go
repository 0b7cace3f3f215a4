package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math"
	"slices"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

var errClosed = errors.New("postgres: the index writer is closed")

// Begin takes the writer role: the advisory lock, or at once an error
// wrapping index.ErrLocked when another process (or this one) holds it. It
// starts from the latest commit, or from nothing when that commit is
// another model's or chunking's.
func (s *Store) Begin() (index.Updater, error) {
	u, err := s.begin(context.Background())
	if err != nil {
		return nil, err
	}
	return u, nil
}

func (s *Store) begin(ctx context.Context) (*Updater, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errClosed
	}
	if s.opts.ReadOnly {
		return nil, errors.New("postgres: the index is open read-only")
	}
	if s.writerActive {
		return nil, index.ErrLocked
	}
	var conn *pgxpool.Conn
	var ok bool
	// Taking the lock changes nothing until it succeeds, so a dropped
	// connection is tried again as a read is.
	err := s.retryRead(func() error {
		c, err := s.pool.Acquire(ctx)
		if err != nil {
			return err
		}
		if err := c.QueryRow(ctx, "SELECT pg_try_advisory_lock($1)", s.lockKey).Scan(&ok); err != nil {
			c.Release()
			return fmt.Errorf("advisory lock: %w", err)
		}
		conn = c
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	if !ok {
		conn.Release()
		return nil, fmt.Errorf("schema %s: %w", s.name, index.ErrLocked)
	}
	u := &Updater{s: s, conn: conn, changed: map[string]bool{}}
	_, err = s.refreshLocked(ctx)
	switch {
	case errors.Is(err, index.ErrOtherVersion):
		s.log.Warn("index was built by another model, chunking or schema: rebuilding from scratch", "schema", s.name)
		u.rebuilt, u.reset = true, true
		s.publish(s.emptyView())
	case err != nil:
		u.unlock(s.lockKey)
		return nil, err
	}
	u.head = s.acquire()
	if !u.rebuilt {
		u.base = s.acquire()
	}
	if !u.rebuilt {
		// A vector index of another kind (the ann parameter), or one
		// to shard, is converted by the next commit, even a run that
		// changes no file; a stray index beside it goes too.
		have, err := s.readANN(ctx, conn)
		if err != nil {
			u.head.Release()
			u.base.Release()
			u.unlock(s.lockKey)
			return nil, err
		}
		if len(have) > 0 && planANN(s.wantANN(have), have, int64(len(u.head.live)), u.head.nextID, false, s.shardRows()).changes() {
			u.dirty = true
		}
	}
	u.before = maps.Clone(u.head.files)
	u.files = maps.Clone(u.head.files)
	u.live, u.nextID = len(u.head.live), u.head.nextID
	s.writerActive = true
	return u, nil
}

func (u *Updater) unlock(key int64) {
	ctx := context.Background()
	if _, err := u.conn.Exec(ctx, "SELECT pg_advisory_unlock($1)", key); err != nil {
		// A connection that cannot unlock may hold the lock: drop it.
		u.conn.Hijack().Close(ctx)
		return
	}
	u.conn.Release()
}

// Before returns the files as they were when the run began. Read-only.
func (u *Updater) Before() map[string]*schema.FileEntry { return u.before }

// Base is the view as the run began (nil after a rebuild).
func (u *Updater) Base() index.View {
	if u.base == nil {
		return nil
	}
	return u.base
}

// Chunks is the number of live chunks with the uncommitted changes.
func (u *Updater) Chunks() int { return u.live }

// PutFile replaces what is indexed for f.Path with chunks and their
// normalised vectors (len(chunks)×dim values).
func (u *Updater) PutFile(f schema.FileEntry, chunks []schema.Record, vectors []float32) error {
	dim := u.s.version.Dim
	if len(vectors) != len(chunks)*dim {
		return fmt.Errorf("put %s: %d vectors for %d chunks", f.Path, len(vectors)/dim, len(chunks))
	}
	if err := checkUnit(vectors, dim); err != nil {
		return fmt.Errorf("put %s: %w", f.Path, err)
	}
	u.RemoveFile(f.Path)
	ids := make([]int64, len(chunks))
	name := lexical.NameField(f.Path)
	for i := range chunks {
		ids[i] = u.nextID
		u.nextID++
		r := chunks[i]
		r.ID, r.Path, r.Ext, r.Mtime, r.Checksum, r.EmbeddingDim, r.Deleted = ids[i], f.Path, f.Ext, f.Mtime, f.Checksum, dim, false
		chunks[i] = r
		u.addRecs = append(u.addRecs, r)
		u.addDocs = append(u.addDocs, lexical.Doc{ID: r.ID, Name: name, Heading: r.Headings, Body: r.Text})
	}
	u.addVecs = append(u.addVecs, vectors...)
	entry := f
	entry.ChunkIDs = ids
	u.files[f.Path] = &entry
	u.live += len(ids)
	u.changed[f.Path], u.dirty = true, true
	return nil
}

// checkUnit refuses vectors that are not unit length: they would score
// above 1 or below their true rank.
func checkUnit(vectors []float32, dim int) error {
	for i := 0; i+dim <= len(vectors); i += dim {
		var n float64
		for _, x := range vectors[i : i+dim] {
			n += float64(x) * float64(x)
		}
		if math.Abs(n-1) > 1e-3 || math.IsNaN(n) {
			return fmt.Errorf("vector %d has length %.4f, not 1", i/dim, math.Sqrt(n))
		}
	}
	return nil
}

// TouchFile records a new mtime and size for a file whose text is unchanged.
func (u *Updater) TouchFile(path string, mtime float64, size int64) {
	old, ok := u.files[path]
	if !ok || (old.Mtime == mtime && old.Size == size) {
		return
	}
	e := *old
	e.Mtime, e.Size = mtime, size
	u.files[path] = &e
	u.changed[path], u.dirty = true, true
}

// RemoveFile deletes a file and its chunks.
func (u *Updater) RemoveFile(path string) {
	old, ok := u.files[path]
	if !ok {
		return
	}
	gone := make(map[int64]bool, len(old.ChunkIDs))
	for _, id := range old.ChunkIDs {
		gone[id] = true
	}
	// Chunks added since the last commit are forgotten; the others are
	// deleted by the next commit.
	dim := u.s.version.Dim
	keep := 0
	for i, r := range u.addRecs {
		if gone[r.ID] {
			delete(gone, r.ID)
			continue
		}
		copy(u.addVecs[keep*dim:(keep+1)*dim], u.addVecs[i*dim:(i+1)*dim])
		u.addRecs[keep], u.addDocs[keep] = r, u.addDocs[i]
		keep++
	}
	u.addRecs, u.addDocs, u.addVecs = u.addRecs[:keep], u.addDocs[:keep], u.addVecs[:keep*dim]
	for _, id := range old.ChunkIDs {
		if gone[id] {
			u.removeIDs = append(u.removeIDs, id)
		}
	}
	u.live -= len(old.ChunkIDs)
	delete(u.files, path)
	u.changed[path], u.dirty = true, true
}

// Commit writes every change since the last commit in one transaction and
// publishes the new view; end says whether it is the run's last commit. A
// failed commit (a lost connection, an error) writes nothing: the previous
// commit stays, and the changes stay pending here.
func (u *Updater) Commit(end schema.RunEnd) error {
	if u.s == nil {
		return errClosed
	}
	if !u.dirty && !(end == schema.EndOfRun && (u.reset || u.midRun)) {
		return nil
	}
	ctx := context.Background()
	s := u.s
	c, err := u.prepare(end)
	if err != nil {
		return err
	}
	began := time.Now()
	var plan annPlan // the vector index searched after the commit
	err = pgx.BeginFunc(ctx, u.conn, func(tx pgx.Tx) error {
		var err error
		plan, err = u.write(ctx, tx, c)
		return err
	})
	if err != nil {
		return fmt.Errorf("postgres: commit: %w", err)
	}
	wrote, added, removed := time.Since(began), len(u.addRecs), len(u.removeIDs)
	s.setSearch(plan.lists, plan.half, plan.shards)
	u.published(ctx, c.gen, c.last, c.lex, c.raw)
	s.log.Debug("postgres: commit", "generation", c.gen, "added", added, "removed", removed,
		"transaction", wrote, "publish", time.Since(began)-wrote)
	return nil
}

// pendingCommit is what one Commit writes, made before its transaction.
type pendingCommit struct {
	gen     int64
	lex     *lexical.Index // the keyword index as of the commit
	raw     []byte         // its new segment, nil when none
	refs    []byte         // its segment list, JSON for meta
	last    string         // when the run ended (RFC 3339), "" mid-run
	changed []string       // the files whose entries are written again, sorted
}

// prepare builds the commit's keyword index (compacting it as
// index.Compaction has it for the local index) and what meta records.
func (u *Updater) prepare(end schema.RunEnd) (pendingCommit, error) {
	s := u.s
	c := pendingCommit{gen: u.head.gen + 1}
	head := u.head.lex
	if u.reset {
		head = lexical.Empty()
	}
	compact := s.opts.Compaction.Due(head.Dead()+len(u.removeIDs), u.live)
	var err error
	if c.lex, c.raw, err = head.Delete(u.removeIDs).Add(lexical.SegmentName(c.gen), u.addDocs, compact); err != nil {
		return c, err
	}
	if c.refs, err = json.Marshal(c.lex.Segments()); err != nil {
		return c, err
	}
	if end == schema.EndOfRun {
		c.last = s.opts.Clock().UTC().Format(time.RFC3339)
	}
	c.changed = slices.Sorted(maps.Keys(u.changed))
	return c, nil
}

// write is the commit's transaction: rows out, rows and vector indexes
// in, then the keyword segment and, last, meta (the commit point). It
// returns its plan for the vector index: the IVFFlat index searched after
// the commit.
func (u *Updater) write(ctx context.Context, tx pgx.Tx, c pendingCommit) (plan annPlan, err error) {
	s, q := u.s, &u.s.q
	if u.reset {
		for _, sql := range q.reset {
			if _, err := tx.Exec(ctx, sql); err != nil {
				return plan, err
			}
		}
	}
	have, err := s.readANN(ctx, tx)
	if err != nil {
		return plan, err
	}
	bulk := len(u.addRecs) >= s.opts.BulkMin && len(u.addRecs) >= len(u.head.live)
	plan = planANN(s.wantANN(have), have, int64(u.live), u.nextID, bulk, s.shardRows())
	// The statements around the copies go in two round trips (a batch
	// runs in order and stops at the first error).
	var before pgx.Batch
	if len(u.removeIDs) > 0 {
		before.Queue(q.markDead, u.removeIDs, c.gen)
	}
	if len(c.changed) > 0 {
		before.Queue(q.deleteFiles, c.changed)
	}
	if err := runBatch(ctx, tx, &before); err != nil {
		return plan, err
	}
	if err := u.dropIndexes(ctx, tx, plan.dropBefore); err != nil {
		return plan, err
	}
	if err := u.copyChunks(ctx, tx); err != nil {
		return plan, err
	}
	if plan.buildHNSW {
		if err := u.buildHNSW(ctx, tx); err != nil {
			return plan, err
		}
	}
	if err := u.copyFiles(ctx, tx, c.changed); err != nil {
		return plan, err
	}
	// Readers keep searching the old IVFFlat index while the new one
	// builds; dropping it locks the table until the commit, just after.
	if plan.buildIVF > 0 {
		if err := u.buildIVFFlat(ctx, tx, plan.buildIVF, plan.half, plan.shards, c.gen); err != nil {
			return plan, err
		}
	}
	if err := u.dropIndexes(ctx, tx, plan.dropAfter); err != nil {
		return plan, err
	}
	names := make([]string, 0, len(c.lex.Segments()))
	for _, r := range c.lex.Segments() {
		names = append(names, r.Name)
	}
	var after pgx.Batch
	if c.raw != nil {
		after.Queue(q.insertSegment, lexical.SegmentName(c.gen), c.raw)
	}
	after.Queue(q.deleteUnlisted, names)
	after.Queue(q.purge, s.opts.Grace.String())
	// The commit point, last: readers compare the generation.
	after.Queue(q.updateMeta, s.version.String(), c.gen, u.nextID, c.last, c.refs)
	return plan, runBatch(ctx, tx, &after)
}

// runBatch sends b's statements in one round trip, in order.
func runBatch(ctx context.Context, tx pgx.Tx, b *pgx.Batch) error {
	if b.Len() == 0 {
		return nil
	}
	br := tx.SendBatch(ctx, b)
	for range b.Len() {
		if _, err := br.Exec(); err != nil {
			br.Close()
			return err
		}
	}
	return br.Close()
}

// copyChunks writes the added records and vectors with COPY (binary).
func (u *Updater) copyChunks(ctx context.Context, tx pgx.Tx) error {
	if len(u.addRecs) == 0 {
		return nil
	}
	q := &u.s.q
	recs := u.addRecs
	_, err := tx.CopyFrom(ctx, q.chunksTable,
		[]string{"id", "path", "ext", "mtime", "checksum", "chunk_index", "char_start", "char_end", "page", "line_start", "line_end", "text", "headings"},
		pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) {
			r := &recs[i]
			return []any{r.ID, r.Path, r.Ext, r.Mtime, r.Checksum, r.ChunkIndex, r.CharStart, r.CharEnd, r.Page, r.LineStart, r.LineEnd, r.Text, r.Headings}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy chunks: %w", err)
	}
	dim := u.s.version.Dim
	_, err = tx.CopyFrom(ctx, q.vectorsTable, []string{"id", "embedding"},
		pgx.CopyFromSlice(len(recs), func(i int) ([]any, error) {
			return []any{recs[i].ID, u.addVecs[i*dim : (i+1)*dim : (i+1)*dim]}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy vectors: %w", err)
	}
	return nil
}

// copyFiles writes the entries of the changed paths (their old rows are
// deleted before).
func (u *Updater) copyFiles(ctx context.Context, tx pgx.Tx, changed []string) error {
	var put []*schema.FileEntry
	for _, p := range changed {
		if f, ok := u.files[p]; ok {
			put = append(put, f)
		}
	}
	if len(put) == 0 {
		return nil
	}
	_, err := tx.CopyFrom(ctx, u.s.q.filesTable,
		[]string{"path", "mtime", "size", "checksum", "ext", "chunk_ids", "page_starts", "truncated"},
		pgx.CopyFromSlice(len(put), func(i int) ([]any, error) {
			f := put[i]
			var pages []int32
			for _, p := range f.PageStarts {
				pages = append(pages, int32(p))
			}
			return []any{f.Path, f.Mtime, f.Size, f.Checksum, f.Ext, f.ChunkIDs, pages, f.Truncated}, nil
		}))
	if err != nil {
		return fmt.Errorf("copy files: %w", err)
	}
	return nil
}

// published makes the committed state the current view and clears the
// pending changes.
func (u *Updater) published(ctx context.Context, gen int64, last string, lex *lexical.Index, raw []byte) {
	s := u.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if raw != nil {
		refs := lex.Segments()
		if seg, err := lexical.DecodeSegment(refs[len(refs)-1], raw); err == nil {
			s.segs[seg.Ref().Name] = seg
		}
	}
	if last == "" {
		last = u.head.lastReindex
	}
	// The tombstone count is read back: the purge may have dropped some.
	var tomb int
	if err := s.pool.QueryRow(ctx, s.q.countDead).Scan(&tomb); err != nil {
		s.log.Warn("counting deleted chunks", "err", err)
	}
	v := &View{s: s, gen: gen, nextID: u.nextID, lastReindex: last, tombstones: tomb, files: maps.Clone(u.files), lex: lex}
	v.paths = slices.Sorted(maps.Keys(v.files))
	v.live = u.liveIDs()
	v.refs.Store(1)
	listed := lex.Segments()
	maps.DeleteFunc(s.segs, func(name string, _ *lexical.Segment) bool {
		return !slices.ContainsFunc(listed, func(r lexical.SegmentRef) bool { return r.Name == name })
	})
	s.publish(v)
	u.head.Release()
	u.head = s.acquire()
	u.addRecs, u.addVecs, u.addDocs, u.removeIDs = nil, nil, nil, nil
	u.changed = map[string]bool{}
	u.dirty, u.reset = false, false
	u.midRun = last == "" // a checkpoint
}

// liveIDs are the committed chunk ids, sorted: head's without the removed
// ones, then the added ones (all above head's, in order). A merge, not a
// sort of every id: a one-file commit into 1M chunks sorted 1M ids.
func (u *Updater) liveIDs() []int64 {
	gone := slices.Sorted(slices.Values(u.removeIDs))
	live := make([]int64, 0, u.live)
	j := 0
	for _, id := range u.head.live {
		for j < len(gone) && gone[j] < id {
			j++
		}
		if j < len(gone) && gone[j] == id {
			continue
		}
		live = append(live, id)
	}
	for i := range u.addRecs {
		live = append(live, u.addRecs[i].ID)
	}
	return live
}

// Close gives up the writer role; uncommitted changes are dropped.
func (u *Updater) Close() error {
	s := u.s
	if s == nil {
		return nil
	}
	u.s = nil
	if u.base != nil {
		u.base.Release()
	}
	u.head.Release()
	u.unlock(s.lockKey)
	s.mu.Lock()
	s.writerActive = false
	s.mu.Unlock()
	return nil
}
