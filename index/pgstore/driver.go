package pgstore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// A binary that imports this package serves --store postgres://...
func init() {
	index.RegisterBackend("postgres", index.Driver{Open: openBackend, Summary: summary})
}

func openBackend(ctx context.Context, cfg index.BackendConfig) (index.Backend, error) {
	o := cfg.Options
	s, err := Open(ctx, cfg.URL, cfg.Namespace, cfg.Version, Options{Logger: o.Logger, Clock: o.Clock, ReadOnly: o.ReadOnly, Compaction: o.Compaction})
	if err != nil {
		return nil, err
	}
	return s, nil
}

// writerHeld reports whether some session holds the writer's advisory lock
// of schema (a reindex in another process), as pg_locks lists it: looking
// takes no lock, so a status never makes a starting reindex busy. A bigint
// key is listed as classid (high 32 bits), objid (low) and objsubid 1.
func writerHeld(ctx context.Context, conn *pgx.Conn, schema string) (bool, error) {
	var held bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l, (SELECT hashtextextended($1, 0) AS k) h
		WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
		AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
		AND l.classid::bigint = (h.k >> 32) & 4294967295 AND l.objid::bigint = h.k & 4294967295)`, lockName(schema)).Scan(&held)
	return held, err
}

// summary reads the last commit's header and file entries, read-only and
// without the model: what status and list show.
func summary(ctx context.Context, cfg index.BackendConfig) (index.Summary, error) {
	var sum index.Summary
	dsn, err := ownParams(cfg.URL, &Options{})
	if err != nil {
		return sum, fmt.Errorf("postgres: %w", err)
	}
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return sum, fmt.Errorf("postgres: %w", err)
	}
	defer conn.Close(ctx)
	if sum.Reindexing, err = writerHeld(ctx, conn, cfg.Namespace); err != nil {
		return sum, fmt.Errorf("postgres: %w", err)
	}
	q := newQueries(cfg.Namespace, 1, HNSW{})
	var there bool
	if err := conn.QueryRow(ctx, "SELECT to_regclass($1) IS NOT NULL", q.schema+".meta").Scan(&there); err != nil {
		return sum, fmt.Errorf("postgres: %w", err)
	}
	if !there {
		return sum, nil // never written
	}
	err = pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{IsoLevel: pgx.RepeatableRead, AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		var c committed
		var lex []byte
		if err := tx.QueryRow(ctx, q.metaAll).Scan(&c.version, &c.gen, &c.nextID, &c.lastReindex, &lex); err != nil {
			return err
		}
		var v schema.Version
		if json.Unmarshal([]byte(c.version), &v) == nil {
			sum.Model = v.Model
		}
		files, err := readFiles(ctx, tx, q.selectFiles)
		if err != nil {
			return err
		}
		for _, f := range files {
			sum.Files = append(sum.Files, f)
			sum.Chunks += len(f.ChunkIDs)
		}
		slices.SortFunc(sum.Files, func(a, b *schema.FileEntry) int { return strings.Compare(a.Path, b.Path) })
		sum.LastReindex = c.lastReindex
		if err := tx.QueryRow(ctx, q.countDead).Scan(&sum.Tombstones); err != nil {
			return err
		}
		have, err := readANN(ctx, tx, q.vectorsTable)
		if err != nil {
			return err
		}
		sum.VectorIndex = describeANN(have, DefaultEfSearch)
		var shared int64
		if err := tx.QueryRow(ctx, sharedBuffersSQL).Scan(&shared); err != nil {
			return err
		}
		sum.VectorIndex += bufferNote(have, shared)
		return tx.QueryRow(ctx, `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint FROM pg_class c
			JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1 AND c.relkind = 'r'`, cfg.Namespace).Scan(&sum.Bytes)
	})
	if errors.Is(err, pgx.ErrNoRows) {
		return index.Summary{Reindexing: sum.Reindexing}, nil // a first run before its first commit
	}
	if err != nil {
		return sum, fmt.Errorf("postgres: read summary: %w", err)
	}
	return sum, nil
}
