package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
)

// keywordSizes is a table of what each keyword side of the index in
// schema takes in the database: the own segments' table, and per
// full-text column its values and its GIN index.
func keywordSizes(ctx context.Context, url, schema string) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	sc := pgx.Identifier{schema}.Sanitize()
	var chunks, heap, lex int64
	if err := conn.QueryRow(ctx, fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s.chunks),
		pg_table_size('%[1]s.chunks'), pg_total_relation_size('%[1]s.lexical')`, sc)).Scan(&chunks, &heap, &lex); err != nil {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nKeyword side storage in schema %s (%d chunk rows; the chunks table with its TOAST, all columns: %.1f MB):\n\n", schema, chunks, mb(heap))
	sb.WriteString("| keyword side | what | MB | bytes per chunk |\n|---|---|---|---|\n")
	fmt.Fprintf(&sb, "| own BM25 segments | `lexical` table (bytea, with TOAST) | %.2f | %.0f |\n", mb(lex), float64(lex)/float64(max(chunks, 1)))
	rows, _ := conn.Query(ctx, `SELECT a.attname FROM pg_attribute a WHERE a.attrelid = to_regclass($1)
		AND a.attname LIKE 'tsv\_%' AND NOT a.attisdropped ORDER BY a.attname`, sc+".chunks")
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return "", err
	}
	for _, col := range cols {
		var vals, gin int64
		q := fmt.Sprintf(`SELECT coalesce(sum(pg_column_size(%s)), 0)::bigint, pg_relation_size(to_regclass($1)) FROM %s.chunks`,
			pgx.Identifier{col}.Sanitize(), sc)
		if err := conn.QueryRow(ctx, q, sc+"."+pgx.Identifier{"chunks_" + col + "_gin"}.Sanitize()).Scan(&vals, &gin); err != nil {
			return "", err
		}
		fmt.Fprintf(&sb, "| full text %s | column values (tsvector) | %.2f | %.0f |\n", strings.TrimPrefix(col, "tsv_"), mb(vals), float64(vals)/float64(max(chunks, 1)))
		fmt.Fprintf(&sb, "| full text %s | GIN index | %.2f | %.0f |\n", strings.TrimPrefix(col, "tsv_"), mb(gin), float64(gin)/float64(max(chunks, 1)))
	}
	return sb.String(), nil
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }

// tsqueryMatches is a table of how many questions find anything, and
// find their target file at all, under three ways of making a tsquery of
// a question on each full-text column: all its words (plainto_tsquery),
// web-search syntax (websearch_to_tsquery: a leading - negates), and any
// of its lexemes (the keyword side's OR).
func tsqueryMatches(ctx context.Context, url, schema string, qs []eval.Question) (string, error) {
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return "", err
	}
	defer conn.Close(ctx)
	sc := pgx.Identifier{schema}.Sanitize()
	rows, _ := conn.Query(ctx, `SELECT a.attname FROM pg_attribute a WHERE a.attrelid = to_regclass($1)
		AND a.attname LIKE 'tsv\_%' AND NOT a.attisdropped ORDER BY a.attname`, sc+".chunks")
	cols, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil || len(cols) == 0 {
		return "", err
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nQuestions (of %d) whose tsquery matches any chunk, and a chunk of the target file:\n\n", len(qs))
	sb.WriteString("| configuration | tsquery | any chunk | target file |\n|---|---|---|---|\n")
	for _, col := range cols {
		cfg := strings.TrimPrefix(col, "tsv_")
		kinds := []struct{ name, expr string }{
			{"plainto_tsquery (all words)", fmt.Sprintf("plainto_tsquery('%s', $1)", cfg)},
			{"websearch_to_tsquery", fmt.Sprintf("websearch_to_tsquery('%s', $1)", cfg)},
			{"OR of the lexemes (shipped)", fmt.Sprintf(`coalesce((SELECT string_agg('''' || replace(replace(lexeme, '\', '\\'), '''', '''''') || '''', ' | ')
				FROM unnest(to_tsvector('%s', $1)))::tsquery, ''::tsquery)`, cfg)},
		}
		for _, k := range kinds {
			q := fmt.Sprintf(`SELECT count(*) > 0, coalesce(bool_or(path = $2), false) FROM %s.chunks WHERE %s @@ %s`,
				sc, pgx.Identifier{col}.Sanitize(), k.expr)
			anyHit, target := 0, 0
			for _, question := range qs {
				var a, t bool
				if err := conn.QueryRow(ctx, q, question.Query, question.Target).Scan(&a, &t); err != nil {
					return "", fmt.Errorf("%s %q: %w", k.name, question.Query, err)
				}
				anyHit += b2i(a)
				target += b2i(t)
			}
			fmt.Fprintf(&sb, "| %s | %s | %d | %d |\n", cfg, k.name, anyHit, target)
		}
	}
	return sb.String(), nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
