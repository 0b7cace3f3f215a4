// Package pgstore keeps an index in PostgreSQL with pgvector: one schema
// per index, whose tables hold the file entries, the chunk records, their
// vectors (HNSW, cosine) and the keyword index's segments, so several
// server processes on several machines serve one index and exactly one of
// them writes at a time (an advisory lock). A commit is one transaction:
// a crash or a lost connection leaves the previous commit whole. The
// package serves the storage seam of package index (Backend, View,
// Updater) as the local folder does; index/docs/postgres.md describes the
// schema.
package pgstore

import (
	"context"
	"errors"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Store is one index in one PostgreSQL schema. It serves index.Backend.
type Store struct {
	pool    *pgxpool.Pool
	name    string // the schema's name
	version schema.Version
	opts    Options
	log     *slog.Logger
	lockKey int64
	q       queries

	current     atomic.Pointer[View]
	openErr     atomic.Pointer[error]
	efSearch    atomic.Int64
	probes      atomic.Int64  // Options.Probes, SetProbes
	lists       atomic.Int64  // the IVFFlat index's lists as last read (0: none)
	half        atomic.Bool   // that index is ANNHalfvec (kNN orders by its expression)
	shards      atomic.Int64  // that index's shards, searched at once (0 or 1: one index)
	lostAt      *atomic.Int64 // when a read last found its connection dropped (Unix ns; 0: never)
	buffersSaid atomic.Bool   // the log said the vector index outgrows shared_buffers

	// mu serialises loading and publishing commits and the writer role.
	mu           sync.Mutex
	writerActive bool
	closed       bool
	segs         map[string]*lexical.Segment // decoded keyword segments by name
}

// scrub removes the password of dsn from err's text.
func scrub(err error, dsn string) error {
	if cfg, perr := pgx.ParseConfig(dsn); perr == nil {
		return scrubPassword(err, cfg.Password)
	}
	return errors.New("postgres: the connection string does not parse")
}

// scrubPassword replaces the password in err's text; the error keeps its
// chain (errors.Is) when the password does not occur in it.
func scrubPassword(err error, password string) error {
	if err == nil || password == "" || !strings.Contains(err.Error(), password) {
		return err
	}
	return errors.New(strings.ReplaceAll(err.Error(), password, "xxxxx"))
}

// retryRead runs read once more when its connection turned out dropped (a
// restarted server, a terminated backend): the pool then pings each
// connection idle since then before handing it out (pingSince), so the
// second try runs on a live or a new connection and the reader sees no
// failure. A read is safe to run twice.
func (s *Store) retryRead(read func() error) error {
	err := read()
	// A failed dial is not tried again: the server is down, and a second
	// dial would double the wait for saying so.
	var dial *pgconn.ConnectError
	if err != nil && index.Unreachable(err) && !errors.As(err, &dial) {
		s.lostAt.Store(time.Now().UnixNano())
		err = read()
	}
	return err
}

// eachRow runs sql with args through retryRead, scanning each row into
// scan and then calling row; start runs before each try, so a second try
// begins from nothing.
func (s *Store) eachRow(ctx context.Context, start func(), scan []any, row func() error, sql string, args ...any) error {
	return s.retryRead(func() error {
		start()
		rows, _ := s.pool.Query(ctx, sql, args...)
		_, err := pgx.ForEachRow(rows, scan, row)
		return err
	})
}

// pingSince is the pool's ShouldPing: pgx's own rule (idle over a second)
// or idle since a dropped connection was seen, when every connection
// idle as long may be dead too.
func pingSince(lostAt *atomic.Int64) func(context.Context, pgxpool.ShouldPingParams) bool {
	return func(_ context.Context, p pgxpool.ShouldPingParams) bool {
		lost := lostAt.Load()
		return p.IdleDuration > time.Second || lost != 0 && time.Now().Add(-p.IdleDuration).UnixNano() <= lost
	}
}

// SetEfSearch changes Options.EfSearch for the searches that follow;
// ExactSearch scans every vector.
func (s *Store) SetEfSearch(ef int) {
	if ef != ExactSearch {
		ef = max(ef, 1)
	}
	s.efSearch.Store(int64(ef))
}

// probesNow is ivfflat.probes for a kNN query now.
func (s *Store) probesNow() int {
	if p := s.probes.Load(); p > 0 {
		return int(p)
	}
	return probesFor(max(int(s.lists.Load()), 1))
}

// setSearch notes the IVFFlat index kNN queries walk: its lists a shard
// (0: none), whether it is ANNHalfvec, and its shards.
func (s *Store) setSearch(lists int, half bool, shards int) {
	s.half.Store(half)
	s.lists.Store(int64(lists))
	s.shards.Store(int64(shards))
}

// shardRows is Options.ShardRows, else ShardRows.
func (s *Store) shardRows() int64 {
	if s.opts.ShardRows > 0 {
		return s.opts.ShardRows
	}
	return ShardRows
}

// SetProbes sets ivfflat.probes for later kNN queries on an IVFFlat index
// (0: probesFor the index's lists).
func (s *Store) SetProbes(n int) { s.probes.Store(int64(max(n, 0))) }

// OpenErr says why the store serves an empty index in place of the one in
// the database (index.ErrOtherVersion, damage), nil once it loaded one.
func (s *Store) OpenErr() error {
	if p := s.openErr.Load(); p != nil {
		return *p
	}
	return nil
}

// committed is the meta row: the commit point.
type committed struct {
	version     string
	gen         int64
	nextID      int64
	lastReindex string
	lexical     []lexical.SegmentRef
}

func readFiles(ctx context.Context, tx pgx.Tx, sql string) (map[string]*schema.FileEntry, error) {
	rows, _ := tx.Query(ctx, sql)
	files := map[string]*schema.FileEntry{}
	var f schema.FileEntry
	var pageStarts []int32
	if _, err := pgx.ForEachRow(rows, []any{&f.Path, &f.Mtime, &f.Size, &f.Checksum, &f.Ext, &f.ChunkIDs, &pageStarts, &f.Truncated}, func() error {
		e := f
		if len(pageStarts) > 0 {
			e.PageStarts = make([]int, len(pageStarts))
			for i, p := range pageStarts {
				e.PageStarts[i] = int(p)
			}
		}
		files[e.Path] = &e
		f.ChunkIDs, pageStarts = nil, nil
		return nil
	}); err != nil {
		return nil, err
	}
	return files, nil
}

// The seam's interfaces.
var (
	_ index.Backend = (*Store)(nil)
	_ index.View    = (*View)(nil)
	_ index.Updater = (*Updater)(nil)
)

// View is one commit of the index, immutable. The file entries, the live
// chunk ids and the keyword index are held in memory; records and vectors
// are read from the database, where rows never change and deleted ones
// stay for Options.Grace, so a view answers the same until released
// whatever commits after it.
type View struct {
	s           *Store
	refs        atomic.Int64
	gen         int64
	nextID      int64 // every chunk of this commit has a smaller id
	lastReindex string
	tombstones  int
	files       map[string]*schema.FileEntry
	paths       []string
	live        []int64 // sorted
	lex         *lexical.Index
	index.ViewMemo
}

// Updater is the only writer of an index, in every process that serves it:
// it holds a session advisory lock keyed by the schema on a connection of
// its own from Begin to Close, and commits on that connection, so a lost
// connection ends both the lock and the commit in progress (rolled back).
type Updater struct {
	s    *Store
	conn *pgxpool.Conn
	head *View // the last commit; changes apply on top of it
	base *View // the index as the run began; nil after a rebuild

	before  map[string]*schema.FileEntry
	files   map[string]*schema.FileEntry // head's entries with the changes
	live    int
	nextID  int64
	changed map[string]bool
	// Changes since head, written by the next Commit.
	addRecs   []schema.Record
	addVecs   []float32
	addDocs   []lexical.Doc
	removeIDs []int64
	rebuilt   bool // the index is another model's: the first commit resets it
	reset     bool // the reset is still to be committed
	dirty     bool
	// midRun: a checkpoint committed since the run's last commit; the
	// run's end is committed even with nothing left, to record its time.
	midRun bool
}
