package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"

	pgx "github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

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
	lostAt := new(atomic.Int64)
	cfg.ShouldPing = pingSince(lostAt)
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
	s := &Store{pool: pool, name: schemaName, version: v, opts: opts, log: opts.Logger, lostAt: lostAt,
		q: newQueries(schemaName, v.Dim, opts.HNSW), segs: map[string]*lexical.Segment{}}
	if err := s.createSchema(ctx); err != nil {
		pool.Close()
		return nil, scrubPassword(err, password)
	}
	s.efSearch.Store(int64(opts.EfSearch))
	s.probes.Store(int64(opts.Probes))
	s.current.Store(s.emptyView())
	if opts.ReadOnly && !s.exists(ctx) {
		return s, nil
	}
	if _, err := s.Refresh(); err != nil {
		s.log.Warn("index not loaded; the next reindex rebuilds it", "schema", schemaName, "err", err)
		s.openErr.Store(&err)
	}
	return s, nil
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

// createSchema creates the schema and its tables when missing, serialised with
// other processes doing the same by a transaction-scoped advisory lock.
func (s *Store) createSchema(ctx context.Context) error {
	if err := s.pool.QueryRow(ctx, "SELECT hashtextextended($1, 0)", lockName(s.name)).Scan(&s.lockKey); err != nil {
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
		if have {
			if err := checkOwnTables(ctx, tx, s.name); err != nil {
				return err
			}
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

// indexTables are the names of the tables an index keeps in its schema.
var indexTables = []string{"meta", "files", "chunks", "vectors", "dead", "lexical"}

// checkOwnTables refuses a schema that another program uses for tables of
// the index's names: CREATE TABLE IF NOT EXISTS would keep theirs, writes
// would fail on them with a baffling column error, and a rebuild would
// truncate them. Other tables beside the index's are left alone.
func checkOwnTables(ctx context.Context, tx pgx.Tx, schemaName string) error {
	var metaColumns []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(a.attname::text), '{}')
		FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = 'meta' AND a.attnum > 0 AND NOT a.attisdropped`, schemaName).Scan(&metaColumns); err != nil {
		return err
	}
	if len(metaColumns) > 0 {
		for _, col := range []string{"one", "version", "generation", "next_id"} {
			if !slices.Contains(metaColumns, col) {
				return fmt.Errorf("postgres: schema %q holds a table meta that is not an index's (no column %s): it belongs to another program; name a schema of the index's own with schema= in the store URL", schemaName, col)
			}
		}
		return nil // an index's: its tables were made with it, in one transaction
	}
	var clash []string
	if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(c.relname::text ORDER BY c.relname), '{}')
		FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
		WHERE n.nspname = $1 AND c.relname = ANY($2) AND c.relkind IN ('r', 'p', 'v', 'm', 'f')`, schemaName, indexTables).Scan(&clash); err != nil {
		return err
	}
	if len(clash) > 0 {
		return fmt.Errorf("postgres: schema %q holds no index but tables named %s, which an index keeps: they belong to another program; name a schema of the index's own with schema= in the store URL", schemaName, strings.Join(clash, ", "))
	}
	return nil
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

// ownParams takes this package's parameters out of a URL connection
// string into the options opts leaves unset. A key=value connection
// string (not a URL) is returned as it is.
func ownParams(dsn string, opts *Options) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return dsn, nil // pgx reports a bad one, scrubbed
	}
	q := u.Query()
	if !q.Has(KeywordParam) && !q.Has(BuildMemoryParam) && !q.Has(ANNParam) {
		return dsn, nil
	}
	if opts.ANN == "" {
		opts.ANN = q.Get(ANNParam)
	}
	if k := cmp.Or(q.Get(KeywordParam), KeywordSegments); k != KeywordSegments {
		return "", fmt.Errorf("%s=%q: the only keyword side is %s (PostgreSQL full text was removed; index/docs/postgres.md says why)", KeywordParam, k, KeywordSegments)
	}
	if err := checkANN(q.Get(ANNParam)); err != nil {
		return "", err
	}
	if q.Has(BuildMemoryParam) {
		mem, err := parseMemory(q.Get(BuildMemoryParam))
		if err != nil {
			return "", err
		}
		if opts.BuildMemory <= 0 {
			opts.BuildMemory = mem
		}
	}
	q.Del(KeywordParam)
	q.Del(BuildMemoryParam)
	q.Del(ANNParam)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// checkANN refuses a vector index kind this package does not have (""
// ann: the index's own, or the default).
func checkANN(ann string) error {
	if ann != "" && ann != ANNHalfvec && ann != ANNIVFFlat && ann != ANNHNSW {
		return fmt.Errorf("%s=%q: the vector index is %s, %s or %s", ANNParam, ann, ANNHalfvec, ANNIVFFlat, ANNHNSW)
	}
	return nil
}
