package pgstore

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"

	pgx "github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// Acquire returns the current view with a reference the caller must
// Release; nil after Close. It never waits for a writer.
func (s *Store) Acquire() index.View {
	if v := s.acquire(); v != nil {
		return v
	}
	return nil // not a nil *View inside a non-nil View
}

func (s *Store) acquire() *View {
	for {
		v := s.current.Load()
		if v == nil || v.tryRef() {
			return v
		}
	}
}

func (s *Store) publish(v *View) {
	s.openErr.Store(nil)
	if old := s.current.Swap(v); old != nil {
		old.Release()
	}
}

// Refresh publishes the latest commit when another process (or server)
// committed since the current view: one small query when nothing changed.
// It never publishes while this process's writer runs.
func (s *Store) Refresh() (bool, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed || s.writerActive {
		return false, nil
	}
	return s.refreshLocked(context.Background())
}

func (s *Store) refreshLocked(ctx context.Context) (bool, error) {
	var gen int64
	var version string
	if err := s.retryRead(func() error { return s.pool.QueryRow(ctx, s.q.metaGen).Scan(&gen, &version) }); err != nil {
		return false, fmt.Errorf("postgres: read commit: %w", err)
	}
	if version != s.version.String() {
		return false, index.ErrOtherVersion
	}
	if cur := s.current.Load(); cur != nil && cur.gen == gen {
		return false, nil
	}
	v, err := s.load(ctx)
	if err != nil {
		return false, err
	}
	s.publish(v)
	return true, nil
}

// load reads the latest commit whole in one repeatable-read transaction:
// meta, file entries, tombstones and the keyword segments not yet decoded.
func (s *Store) load(ctx context.Context) (*View, error) {
	var v *View
	err := pgx.BeginTxFunc(ctx, s.pool, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var c committed
		var lex []byte
		if err := tx.QueryRow(ctx, s.q.metaAll).Scan(&c.version, &c.gen, &c.nextID, &c.lastReindex, &lex); err != nil {
			return err
		}
		if c.version != s.version.String() {
			return index.ErrOtherVersion
		}
		if err := json.Unmarshal(lex, &c.lexical); err != nil {
			return fmt.Errorf("postgres: meta.lexical: %w", err)
		}
		files, err := readFiles(ctx, tx, s.q.selectFiles)
		if err != nil {
			return err
		}
		var tomb int
		if err := tx.QueryRow(ctx, s.q.countDead).Scan(&tomb); err != nil {
			return err
		}
		segs, err := s.segments(ctx, tx, c.lexical)
		if err != nil {
			return err
		}
		ann, err := s.readANN(ctx, tx)
		if err != nil {
			return err
		}
		s.setSearch(searchIndex(ann))
		// Said once a store (a server opens one), as status says it:
		// the server's operator reads the log, not status. Once said,
		// later loads do not ask the server again.
		var shared int64
		if !s.buffersSaid.Load() {
			if err := tx.QueryRow(ctx, sharedBuffersSQL).Scan(&shared); err != nil {
				return err
			}
		}
		if size, over := overBuffers(ann, shared); over && !s.buffersSaid.Swap(true) {
			s.log.Warn("postgres: the vector index is larger than the server's shared_buffers, so each search copies what it scans from the OS cache: set shared_buffers above the index's size for faster searches",
				"index", bytesize.Format(size), "shared_buffers", bytesize.Format(shared))
		}
		v, err = s.newView(c, files, segs, tomb)
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: load index: %w", err)
	}
	return v, nil
}

// segments returns the decoded keyword segments refs lists, reading only
// the ones not decoded before; the cache keeps only those.
func (s *Store) segments(ctx context.Context, tx pgx.Tx, refs []lexical.SegmentRef) ([]*lexical.Segment, error) {
	var want []string
	for _, r := range refs {
		if _, ok := s.segs[r.Name]; !ok {
			want = append(want, r.Name)
		}
	}
	if len(want) > 0 {
		rows, _ := tx.Query(ctx, s.q.selectSegments, want)
		raw := map[string][]byte{}
		var name string
		var data []byte
		if _, err := pgx.ForEachRow(rows, []any{&name, &data}, func() error {
			raw[name] = data
			return nil
		}); err != nil {
			return nil, err
		}
		for _, r := range refs {
			if _, ok := s.segs[r.Name]; ok {
				continue
			}
			seg, err := lexical.DecodeSegment(r, raw[r.Name])
			if err != nil {
				return nil, fmt.Errorf("keyword segment %s: %w", r.Name, err)
			}
			s.segs[r.Name] = seg
		}
	}
	out := make([]*lexical.Segment, len(refs))
	keep := make(map[string]*lexical.Segment, len(refs))
	for i, r := range refs {
		out[i] = s.segs[r.Name]
		keep[r.Name] = out[i]
	}
	s.segs = keep
	return out, nil
}

// newView makes a view of commit c from its file entries and keyword
// segments, checking that they list the same live chunks.
func (s *Store) newView(c committed, files map[string]*schema.FileEntry, segs []*lexical.Segment, tomb int) (*View, error) {
	v := &View{s: s, gen: c.gen, nextID: c.nextID, lastReindex: c.lastReindex, tombstones: tomb, files: files}
	v.paths = make([]string, 0, len(files))
	n := 0
	for p, f := range files {
		v.paths = append(v.paths, p)
		n += len(f.ChunkIDs)
	}
	slices.Sort(v.paths)
	v.live = make([]int64, 0, n)
	for _, f := range files {
		v.live = append(v.live, f.ChunkIDs...)
	}
	slices.Sort(v.live)
	v.lex = lexical.FromSegments(segs, v.isLive)
	if v.lex.Live() != len(v.live) {
		return nil, fmt.Errorf("keyword index has %d live chunks, the file entries %d", v.lex.Live(), len(v.live))
	}
	v.refs.Store(1)
	return v, nil
}

func (s *Store) emptyView() *View {
	v := &View{s: s, nextID: 1, files: map[string]*schema.FileEntry{}, lex: lexical.Empty()}
	v.refs.Store(1)
	return v
}
