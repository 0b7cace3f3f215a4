package pgstore

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// queries are the statements of one index, its schema's name quoted once
// (pgx.Identifier.Sanitize) and never interpolated raw.
type queries struct {
	schema         string // quoted
	create         []string
	initMeta       string
	metaGen        string
	metaAll        string
	selectFiles    string
	countDead      string
	selectSegments string
	// reads of a view
	record, heads, full, nearest, vectors, textVectors string
	// nearestHalf walks a halfvec IVFFlat index (ANNHalfvec): candidates
	// in half-precision order, scored by their full vectors.
	nearestHalf string
	// nearestShard[half][i] are nearest (half: nearestHalf) limited to
	// shard i of a sharded IVFFlat index: its partial index's predicate.
	nearestShard [2][ivfShards]string
	// a commit
	reset                                 []string
	markDead, deleteFiles, deleteUnlisted string
	insertSegment, purge, updateMeta      string
	chunksTable, vectorsTable, filesTable pgx.Identifier
	// A bulk commit drops the HNSW index, copies, and builds it again.
	createHNSW string
}

// The record fields of a chunk, in the order scans read them.
const recordCols = "id, path, ext, mtime, checksum, chunk_index, char_start, char_end, page, line_start, line_end"

func newQueries(schemaName string, dim int, g HNSW) queries {
	t := newTables(schemaName)
	sc, meta, files, chunks, vectors, dead, lex := t.schema, t.meta, t.files, t.chunks, t.vectors, t.dead, t.lex
	createHNSW := fmt.Sprintf("CREATE INDEX IF NOT EXISTS vectors_hnsw ON %s USING hnsw (embedding vector_cosine_ops) WITH (m = %d, ef_construction = %d)",
		vectors, g.M, g.EfConstruction)
	// The vector index (HNSW or IVFFlat) is made by commits (planANN).
	vectorsDDL := []string{
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id bigint PRIMARY KEY,
			embedding vector(%d) NOT NULL)`, vectors, dim),
	}
	q := queries{
		schema:         sc,
		create:         tableDDL(t, vectorsDDL),
		initMeta:       fmt.Sprintf("INSERT INTO %s (version) VALUES ($1) ON CONFLICT DO NOTHING", meta),
		metaGen:        fmt.Sprintf("SELECT generation, version FROM %s", meta),
		metaAll:        fmt.Sprintf("SELECT version, generation, next_id, last_reindex, lexical FROM %s", meta),
		selectFiles:    fmt.Sprintf("SELECT path, mtime, size, checksum, ext, chunk_ids, page_starts, truncated FROM %s", files),
		countDead:      fmt.Sprintf("SELECT count(*) FROM %s", dead),
		selectSegments: fmt.Sprintf("SELECT name, data FROM %s WHERE name = ANY($1)", lex),

		record: fmt.Sprintf("SELECT %s, text, headings FROM %s WHERE id = $1", recordCols, chunks),
		heads:  fmt.Sprintf("SELECT %s FROM %s WHERE id = ANY($1)", recordCols, chunks),
		full:   fmt.Sprintf("SELECT %s, text, headings FROM %s WHERE id = ANY($1)", recordCols, chunks),
		// Rows of later commits (id ≥ the view's next id) and chunks the
		// view's commit or an earlier one deleted are filtered out;
		// iterative scans keep the ranking exact-ordered (strict_order).
		nearest: fmt.Sprintf(`SELECT v.id, (1 - (v.embedding <=> $1))::real FROM %s v
			WHERE v.id < $2 AND NOT EXISTS (SELECT 1 FROM %s d WHERE d.id = v.id AND d.generation <= $3)
			ORDER BY v.embedding <=> $1 LIMIT $4`, vectors, dead),
		// The ORDER BY is the index's expression, so the planner walks it.
		nearestHalf: fmt.Sprintf(`SELECT v.id, (1 - (v.embedding <=> $1::vector))::real FROM %s v
			WHERE v.id < $2 AND NOT EXISTS (SELECT 1 FROM %s d WHERE d.id = v.id AND d.generation <= $3)
			ORDER BY v.embedding::halfvec(%d) <=> $1::vector::halfvec(%d) LIMIT $4`, vectors, dead, dim, dim),
		vectors:     fmt.Sprintf("SELECT id, embedding FROM %s WHERE id = ANY($1)", vectors),
		textVectors: fmt.Sprintf("SELECT c.id, c.text, v.embedding FROM %s c JOIN %s v USING (id) WHERE c.id = ANY($1)", chunks, vectors),

		reset: append([]string{
			fmt.Sprintf("DROP TABLE IF EXISTS %s", vectors),
			fmt.Sprintf("TRUNCATE %s, %s, %s, %s", files, chunks, dead, lex),
		}, vectorsDDL...),
		markDead:       fmt.Sprintf("INSERT INTO %s (id, generation) SELECT unnest($1::bigint[]), $2 ON CONFLICT DO NOTHING", dead),
		deleteFiles:    fmt.Sprintf("DELETE FROM %s WHERE path = ANY($1)", files),
		deleteUnlisted: fmt.Sprintf("DELETE FROM %s WHERE NOT (name = ANY($1))", lex),
		insertSegment:  fmt.Sprintf("INSERT INTO %s (name, data) VALUES ($1, $2)", lex),
		// Rows of chunks deleted longer ago than the grace period go.
		purge: fmt.Sprintf(`WITH gone AS (DELETE FROM %s WHERE at < now() - $1::interval RETURNING id),
			v AS (DELETE FROM %s WHERE id IN (SELECT id FROM gone))
			DELETE FROM %s WHERE id IN (SELECT id FROM gone)`, dead, vectors, chunks),
		updateMeta: fmt.Sprintf(`UPDATE %s SET version = $1, generation = $2, next_id = $3,
			last_reindex = CASE WHEN $4 = '' THEN last_reindex ELSE $4 END, lexical = $5`, meta),
		chunksTable:  pgx.Identifier{schemaName, "chunks"},
		vectorsTable: pgx.Identifier{schemaName, "vectors"},
		filesTable:   pgx.Identifier{schemaName, "files"},
		createHNSW:   createHNSW,
	}
	for i := range ivfShards {
		for h, sql := range []string{q.nearest, q.nearestHalf} {
			q.nearestShard[h][i] = strings.Replace(sql, "WHERE v.id < $2", "WHERE "+shardPredicate("v.id", i, ivfShards)+" AND v.id < $2", 1)
		}
	}
	return q
}

// shardPredicate selects shard i of n by the chunk id (column), written
// the same in the partial index and in its kNN statement, so the planner
// proves the one from the other.
func shardPredicate(column string, i, n int) string {
	return fmt.Sprintf("%s %% %d = %d", column, n, i)
}

// tables are the quoted names of one index's schema and tables.
type tables struct{ schema, meta, files, chunks, vectors, dead, lex string }

func newTables(schemaName string) tables {
	sc := pgx.Identifier{schemaName}.Sanitize()
	t := func(name string) string { return sc + "." + pgx.Identifier{name}.Sanitize() }
	return tables{schema: sc, meta: t("meta"), files: t("files"), chunks: t("chunks"), vectors: t("vectors"), dead: t("dead"), lex: t("lexical")}
}

// tableDDL creates the schema and its tables, vectorsDDL last.
func tableDDL(t tables, vectorsDDL []string) []string {
	return append([]string{
		"CREATE SCHEMA IF NOT EXISTS " + t.schema,
		// One row, the commit point: a commit's last write.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			one boolean PRIMARY KEY DEFAULT true CHECK (one),
			version text NOT NULL,
			generation bigint NOT NULL DEFAULT 0,
			next_id bigint NOT NULL DEFAULT 1,
			last_reindex text NOT NULL DEFAULT '',
			lexical jsonb NOT NULL DEFAULT '[]')`, t.meta),
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			path text PRIMARY KEY,
			mtime double precision NOT NULL,
			size bigint NOT NULL,
			checksum text NOT NULL,
			ext text NOT NULL,
			chunk_ids bigint[] NOT NULL,
			page_starts integer[],
			truncated text NOT NULL DEFAULT '')`, t.files),
		// Rows are never updated: a changed file's chunks get new ids.
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id bigint PRIMARY KEY,
			path text NOT NULL,
			ext text NOT NULL,
			mtime double precision NOT NULL,
			checksum text NOT NULL,
			chunk_index integer NOT NULL,
			char_start integer NOT NULL,
			char_end integer NOT NULL,
			page integer NOT NULL,
			line_start integer NOT NULL,
			line_end integer NOT NULL,
			text text NOT NULL,
			headings text NOT NULL)`, t.chunks),
		// Deleted chunks, kept readable for views of older commits
		// until Grace has passed (apart from vectors: updating a row
		// there would insert it into the HNSW graph again).
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			id bigint PRIMARY KEY,
			generation bigint NOT NULL,
			at timestamptz NOT NULL DEFAULT now())`, t.dead),
		// The keyword index's segments (package lexical's format).
		fmt.Sprintf(`CREATE TABLE IF NOT EXISTS %s (
			name text PRIMARY KEY,
			data bytea NOT NULL)`, t.lex),
	}, vectorsDDL...)
}

// lockName is what the writer's advisory lock key is hashed from.
func lockName(schema string) string { return "micro-rag-mcp index " + schema }
