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
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Options tune a Store; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// EfSearch is hnsw.ef_search for kNN queries (raised to k when k is
	// larger): the candidate list whose size trades recall for speed.
	// ExactSearch scans every vector instead (BENCHMARKS.md compares them).
	EfSearch int
	// Grace is how long the rows of deleted chunks stay readable after the
	// commit that deleted them, for views of older commits (a server that
	// has not refreshed yet). Default 10 minutes.
	Grace time.Duration
	// Clock gives the time of a run's last commit (tests set it).
	Clock func() time.Time
	// MaxConns caps the connection pool (default: pgxpool's).
	MaxConns int32
	// ReadOnly creates nothing (no extension, schema or table) and never
	// writes; a schema not there yet is served as an empty index.
	ReadOnly bool
	// Compaction says when a commit rewrites the keyword segments without
	// their deleted chunks, as it does for the local index.
	Compaction index.Compaction
	// ANN is the vector index a writer keeps: ANNIVFFlat or ANNHNSW; a
	// writer given another than the index has converts it at its next
	// commit. Unset, it keeps the index's (a new index: DefaultANN).
	// The store URL's ann parameter sets it.
	ANN string
	// Probes is ivfflat.probes for kNN queries on an IVFFlat index; 0
	// takes probesFor(lists).
	Probes int
	// HNSW are the graph's build parameters, used when the index is made.
	HNSW HNSW
	// BulkMin is the number of chunks from which a commit that at least
	// doubles the index builds the HNSW graph afresh after copying the
	// rows (much faster than inserting into it row by row; searches of
	// the table wait for that commit). Default 10,000.
	BulkMin int
	// BuildMemory caps the maintenance_work_mem a commit that builds the
	// HNSW graph asks for: it asks what the graph of its rows needs
	// (about 3.6 KB a chunk at 384 dimensions, m 32; never less than the
	// server's setting). A graph larger than this is built on disk, many
	// times slower. Default DefaultBuildMemory; the store URL's
	// build_memory parameter sets it when this is 0.
	BuildMemory int64
}

// HNSW are pgvector's HNSW build parameters.
type HNSW struct {
	M              int // links per node (pgvector's default 16)
	EfConstruction int // candidate list while building (default 64)
}

// DefaultEfSearch is the ef_search that measured recall@10 0.990 against
// exact search with DefaultHNSW on BenchmarkPgstore's 100k clustered
// 384-dimension vectors (200: 0.93, 400: 0.96; BENCHMARKS.md). The
// query's k raises it when larger.
const DefaultEfSearch = 800

// MaxEfSearch is the largest hnsw.ef_search pgvector accepts (0.8: 1000);
// larger values are lowered to it.
const MaxEfSearch = 1000

// DefaultHNSW are the build parameters of new indexes: with pgvector's own
// (16, 64) recall@10 was 0.97 at ef_search 200 on 10k benchmark vectors,
// with these 0.99.
var DefaultHNSW = HNSW{M: 32, EfConstruction: 128}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.EfSearch <= 0 && o.EfSearch != ExactSearch {
		o.EfSearch = DefaultEfSearch
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Minute
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.HNSW.M <= 0 {
		o.HNSW.M = DefaultHNSW.M
	}
	if o.HNSW.EfConstruction <= 0 {
		o.HNSW.EfConstruction = DefaultHNSW.EfConstruction
	}
	if o.BulkMin <= 0 {
		o.BulkMin = 10000
	}
	if o.BuildMemory <= 0 {
		o.BuildMemory = DefaultBuildMemory
	}
	if o.Compaction == (index.Compaction{}) {
		o.Compaction = index.DefaultOptions().Compaction
	}
	return o
}

// Store is one index in one PostgreSQL schema. It serves index.Backend.
type Store struct {
	pool    *pgxpool.Pool
	name    string // the schema's name
	version schema.Version
	opts    Options
	log     *slog.Logger
	lockKey int64
	q       queries

	current  atomic.Pointer[View]
	openErr  atomic.Pointer[error]
	efSearch atomic.Int64
	probes   atomic.Int64 // Options.Probes, SetProbes
	lists    atomic.Int64 // the IVFFlat index's lists as last read (0: none)

	// mu serialises loading and publishing commits and the writer role.
	mu           sync.Mutex
	writerActive bool
	closed       bool
	segs         map[string]*lexical.Segment // decoded keyword segments by name
}

// Open connects to the database dsn names, creates the vector extension
// (when missing and the role may), the schema and its tables (when
// missing, unless ReadOnly), and publishes the committed index as the
// first view. schemaName is quoted wherever it is used (any text of 1 to
// 63 bytes is safe; index.Namespace makes plain ones). An index
// built for another model or chunking is served as empty (OpenErr says
// so) and rebuilt by the next writer. Errors never carry the password.
func Open(ctx context.Context, dsn, schemaName string, v schema.Version, opts Options) (*Store, error) {
	dsn, err := ownParams(dsn, &opts)
	if err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	opts = opts.withDefaults()
	if schemaName == "" || len(schemaName) > 63 {
		return nil, fmt.Errorf("postgres: schema name must have 1 to 63 bytes, not %d", len(schemaName))
	}
	if v.Dim <= 0 {
		return nil, fmt.Errorf("postgres: vector dimension %d", v.Dim)
	}
	if err := checkANN(opts.ANN); err != nil {
		return nil, fmt.Errorf("postgres: %w", err)
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return nil, scrub(fmt.Errorf("postgres: connection string: %w", err), dsn)
	}
	password := cfg.ConnConfig.Password
	if opts.MaxConns > 0 {
		cfg.MaxConns = opts.MaxConns
	}
	// Strict order: a filtered kNN scan (rows of other commits) goes on
	// until it has k rows, ranked as exact search ranks them.
	cfg.ConnConfig.RuntimeParams["hnsw.iterative_scan"] = "strict_order"
	// IVFFlat has only relaxed order: Nearest sorts what it returns.
	cfg.ConnConfig.RuntimeParams["ivfflat.iterative_scan"] = "relaxed_order"
	// pgx prepares its statements; after five runs PostgreSQL may switch
	// to a generic plan, which cannot see the query vector and sorts every
	// row instead of walking the graph (measured at 100k: 62 ms instead
	// of 11). Each kNN query is planned with its own values.
	cfg.ConnConfig.RuntimeParams["plan_cache_mode"] = "force_custom_plan"
	cfg.AfterConnect = registerVector
	cfg.ConnConfig.OnNotice = logNotice(opts.Logger)
	if !opts.ReadOnly {
		if err := ensureExtension(ctx, cfg.ConnConfig); err != nil {
			return nil, scrubPassword(err, password)
		}
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, scrubPassword(fmt.Errorf("postgres: %w", err), password)
	}
	s := &Store{pool: pool, name: schemaName, version: v, opts: opts, log: opts.Logger,
		q: newQueries(schemaName, v.Dim, opts.HNSW), segs: map[string]*lexical.Segment{}}
	if err := s.init(ctx); err != nil {
		pool.Close()
		return nil, scrubPassword(err, password)
	}
	if opts.ReadOnly && !s.exists(ctx) {
		s.efSearch.Store(int64(opts.EfSearch))
		s.current.Store(s.emptyView())
		return s, nil
	}
	s.efSearch.Store(int64(opts.EfSearch))
	s.probes.Store(int64(opts.Probes))
	s.current.Store(s.emptyView())
	if _, err := s.Refresh(); err != nil {
		s.log.Warn("index not loaded; the next reindex rebuilds it", "schema", schemaName, "err", err)
		s.openErr.Store(&err)
	}
	return s, nil
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

// ensureExtension creates pgvector's extension when it is missing, with a
// connection of its own (the pool's connections learn the vector type's
// OID when they connect).
func ensureExtension(ctx context.Context, cfg *pgx.ConnConfig) error {
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	var have bool
	if err := conn.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'vector')").Scan(&have); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if have {
		return nil
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS vector"); err != nil {
		return fmt.Errorf("postgres: the vector extension (pgvector) is not in this database and could not be created (a superuser or the database owner runs CREATE EXTENSION vector): %w", err)
	}
	return nil
}

// init creates the schema and its tables when missing, serialised with
// other processes doing the same by a transaction-scoped advisory lock.
func (s *Store) init(ctx context.Context) error {
	if err := s.pool.QueryRow(ctx, "SELECT hashtextextended($1, 0)", "micro-rag-mcp index "+s.name).Scan(&s.lockKey); err != nil {
		return fmt.Errorf("postgres: %w", err)
	}
	if s.opts.ReadOnly {
		return nil
	}
	return pgx.BeginFunc(ctx, s.pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, "SELECT pg_advisory_xact_lock($1)", s.lockKey+1); err != nil {
			return err
		}
		// CREATE SCHEMA IF NOT EXISTS needs CREATE on the database even when
		// the schema is there: a role that owns only its schema (made for
		// it by an administrator) must not run it.
		var have bool
		if err := tx.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_namespace WHERE nspname = $1)", s.name).Scan(&have); err != nil {
			return err
		}
		for _, ddl := range s.q.create {
			if have && strings.HasPrefix(ddl, "CREATE SCHEMA ") {
				continue
			}
			if _, err := tx.Exec(ctx, ddl); err != nil {
				return fmt.Errorf("postgres: create schema %s: %w", s.q.schema, err)
			}
		}
		_, err := tx.Exec(ctx, s.q.initMeta, s.version.String())
		return err
	})
}

// exists reports whether the index's meta table is there.
func (s *Store) exists(ctx context.Context) bool {
	var ok bool
	err := s.pool.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", s.q.schema+".meta").Scan(&ok)
	return err == nil && ok
}

// Close releases the current view and the connections.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	s.mu.Unlock()
	if old := s.current.Swap(nil); old != nil {
		old.Release()
	}
	s.pool.Close()
	return nil
}

// ExactSearch as EfSearch makes kNN queries scan every vector (no HNSW).
const ExactSearch = -1

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

// SetProbes sets ivfflat.probes for later kNN queries on an IVFFlat index
// (0: probesFor the index's lists).
func (s *Store) SetProbes(n int) { s.probes.Store(int64(max(n, 0))) }

// Schema is the index's schema name.
func (s *Store) Schema() string { return s.name }

// OpenErr says why the store serves an empty index in place of the one in
// the database (index.ErrOtherVersion, damage), nil once it loaded one.
func (s *Store) OpenErr() error {
	if p := s.openErr.Load(); p != nil {
		return *p
	}
	return nil
}

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
	if err := s.pool.QueryRow(ctx, s.q.metaGen).Scan(&gen, &version); err != nil {
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

// committed is the meta row: the commit point.
type committed struct {
	version     string
	gen         int64
	nextID      int64
	lastReindex string
	lexical     []lexical.SegmentRef
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
		s.lists.Store(int64(searchLists(ann)))
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

// The seam's interfaces.
var (
	_ index.Backend = (*Store)(nil)
	_ index.View    = (*View)(nil)
	_ index.Updater = (*Updater)(nil)
)
