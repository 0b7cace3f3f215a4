package pgstore

import (
	"context"
	"fmt"
	"log/slog"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// graphBytes estimates the memory pgvector's in-memory HNSW build needs
// for rows vectors of dim dimensions with m links: the vector, 2m links
// (16 bytes each) at layer 0, a few on the upper layers and the element's
// header. pgvector reported "graph no longer fits" after 23,053 rows in
// 64 MB at 384 dimensions, m 32 (2,911 bytes a row; this gives 2,896),
// so a quarter more and 16 MB are added.
func graphBytes(rows int64, dim, m int) int64 {
	perRow := int64(4*dim + 8 + 36*m + 200)
	return rows*perRow*5/4 + 16<<20
}

// parseMemory reads a size as PostgreSQL writes memory settings: a number
// with kB, MB, GB or TB (powers of 1024), or bytes when bare.
func parseMemory(s string) (int64, error) {
	s = strings.TrimSpace(s)
	units := []struct {
		suffix string
		shift  uint
	}{{"kB", 10}, {"MB", 20}, {"GB", 30}, {"TB", 40}, {"B", 0}}
	shift := uint(0)
	for _, u := range units {
		if n, ok := strings.CutSuffix(s, u.suffix); ok {
			s, shift = strings.TrimSpace(n), u.shift
			break
		}
	}
	n, err := strconv.ParseInt(s, 10, 64)
	if err != nil || n <= 0 || n > (1<<62)>>shift {
		return 0, fmt.Errorf("%s=%q is not a memory size such as 4GB or 512MB", BuildMemoryParam, s)
	}
	return n << shift, nil
}

// buildHNSW builds the graph over the vectors table in tx with
// maintenance_work_mem raised, up to BuildMemory, to what the graph of its
// rows needs (never lowered below the server's setting): a graph that
// outgrows it is built on disk, many times slower. pgvector's report of
// the parallel workers it used is logged.
func (u *Updater) buildHNSW(ctx context.Context, tx pgx.Tx) error {
	s := u.s
	rows := int64(u.live)
	need := graphBytes(rows, s.version.Dim, s.opts.HNSW.M)
	mem := min(need, s.opts.BuildMemory)
	if need > mem {
		s.log.Warn("the HNSW graph may not fit into the build memory: building it on disk, much slower (raise "+BuildMemoryParam+")",
			"rows", rows, "need_mb", need>>20, "build_memory_mb", mem>>20)
	}
	if err := raiseBuildMemory(ctx, tx, mem); err != nil {
		return err
	}
	return createIndex(ctx, tx, s.q.createHNSW, "HNSW")
}

// createIndex builds a vector index (of kind what) by ddl with DEBUG1
// messages on: they carry pgvector's "using N parallel workers".
func createIndex(ctx context.Context, tx pgx.Tx, ddl, what string) error {
	if _, err := tx.Exec(ctx, "SET LOCAL client_min_messages = debug1"); err != nil {
		return err
	}
	if _, err := tx.Exec(ctx, ddl); err != nil {
		return fmt.Errorf("build the %s index: %w", what, err)
	}
	_, err := tx.Exec(ctx, "SET LOCAL client_min_messages = notice")
	return err
}

// raiseBuildMemory sets maintenance_work_mem for the rest of tx to mem
// when that is more than the server's setting (never lowers it).
func raiseBuildMemory(ctx context.Context, tx pgx.Tx, mem int64) error {
	var have int64
	if err := tx.QueryRow(ctx, "SELECT pg_size_bytes(current_setting('maintenance_work_mem'))").Scan(&have); err != nil {
		return err
	}
	if mem <= have {
		return nil
	}
	_, err := tx.Exec(ctx, fmt.Sprintf("SET LOCAL maintenance_work_mem = '%dkB'", mem>>10))
	return err
}

// logNotice logs the server's warnings, pgvector's notice that a graph no
// longer fits into maintenance_work_mem and how an index is built
// (serially, or with how many parallel workers: debug messages). The
// notices of CREATE … IF NOT EXISTS are not logged.
func logNotice(log *slog.Logger) func(*pgconn.PgConn, *pgconn.Notice) {
	return func(_ *pgconn.PgConn, n *pgconn.Notice) {
		switch {
		case n.Severity == "WARNING" || strings.Contains(n.Message, "maintenance_work_mem"):
			log.Warn("postgres: "+n.Message, "detail", n.Detail)
		case strings.Contains(n.Message, "parallel workers") || strings.Contains(n.Message, "serially"):
			log.Info("postgres: " + n.Message)
		}
	}
}
