package engine

import (
	"context"
	"log/slog"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// TestPostgresLeastPrivilege: the least a role needs (docs/storage-layout.md, Storage
// backends) is enough. An administrator creates the vector extension and
// a schema the role owns; the role, with no other privilege, reindexes
// into that schema (named by ?schema=) and searches it; a role with USAGE
// on the schema and SELECT on its tables serves a read-only engine (the
// CLI's search). Without the
// schema parameter it would need to create a schema of its own, and is
// refused with an error that does not show its password.
func TestPostgresLeastPrivilege(t *testing.T) {
	ctx := context.Background()
	adminDSN := pgtest.Database(t)
	admin, err := pgx.Connect(ctx, adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	const role, reader, password = "rag_least", "rag_reader", "Least-Priv-pw"
	for _, sql := range []string{
		"CREATE EXTENSION IF NOT EXISTS vector",
		"CREATE ROLE " + role + " LOGIN PASSWORD '" + password + "'",
		"CREATE ROLE " + reader + " LOGIN PASSWORD '" + password + "'",
		"CREATE SCHEMA team_docs AUTHORIZATION " + role,
	} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	t.Cleanup(func() {
		// Before the database is dropped: the role owns objects in it.
		for _, sql := range []string{"DROP OWNED BY " + role + ", " + reader, "DROP ROLE " + role + ", " + reader} {
			if _, err := admin.Exec(ctx, sql); err != nil {
				t.Error(err)
			}
		}
		admin.Close(ctx)
	})
	u, err := url.Parse(adminDSN)
	if err != nil {
		t.Fatal(err)
	}
	u.User = url.UserPassword(role, password)

	data := t.TempDir()
	writeCorpus(t, data, corpus)
	q := u.Query()
	q.Set("schema", "team_docs")
	withSchema := *u
	withSchema.RawQuery = q.Encode()
	e := newEngine(t, Config{DataFolder: data, Store: storeURL(t, withSchema.String())})
	checkCounts(t, "least privilege", reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
	if r := top(t, e, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
		t.Fatalf("top = %+v", r)
	}
	e.Close()

	// A role that only reads serves read-only engines (the CLI's search
	// and status): USAGE on the schema, SELECT on its tables.
	for _, sql := range []string{"GRANT USAGE ON SCHEMA team_docs TO " + reader, "GRANT SELECT ON ALL TABLES IN SCHEMA team_docs TO " + reader} {
		if _, err := admin.Exec(ctx, sql); err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	asReader := withSchema
	asReader.User = url.UserPassword(reader, password)
	ro := newEngine(t, Config{DataFolder: data, Store: storeURL(t, asReader.String()), ReadOnly: true})
	if r := top(t, ro, "wild yeast culture for bread"); r.Path != "notes/sourdough.md" {
		t.Fatalf("read-only role: top = %+v", r)
	}
	ro.Close()

	other, err := New(Config{DataFolder: data, IndexFolder: t.TempDir(), Store: storeURL(t, u.String()), NoInitialReindex: true,
		Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		t.Fatal(err)
	}
	other.Start(ctx)
	defer other.Close()
	err = other.WaitModel(ctx)
	if err == nil || !strings.Contains(err.Error(), "permission denied") || strings.Contains(err.Error(), password) {
		t.Fatalf("a role without CREATE on the database, in a schema of its own: %v", err)
	}
}
