package main

import (
	"context"
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5"
)

// keywordSizes is a table of what the keyword side of the index in
// schema takes in the database: the own segments' table.
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
	return sb.String(), nil
}

func mb(b int64) float64 { return float64(b) / (1 << 20) }
