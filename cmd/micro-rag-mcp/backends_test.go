package main

// The end-to-end tests run once per index backend (index/storetest):
// the local index folder, and a database of its own on the PostgreSQL
// server TestMain starts (internal/pgtest), which every process of the
// test shares. Tests about the local folder itself (its files, modes,
// index.lock, a full disk under it) say so and run on it alone.

import (
	"context"
	"net/url"
	"os"
	"os/exec"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/mark3labs/mcp-go/client"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/storetest"
)

// backend is the store a test hands to every binary it runs.
type backend struct {
	dsn    string // "" is the local index folder
	viaEnv bool   // give dsn as $MICRO_RAG_STORE, not --store
}

// eachBackend runs test as a subtest per backend, the same body on each.
func eachBackend(t *testing.T, test func(t *testing.T, b backend)) {
	storetest.EachDSN(t, func(t *testing.T, dsn string) { test(t, backend{dsn: dsn}) })
}

func (b backend) postgres() bool { return b.dsn != "" }

// env is the same store given by $MICRO_RAG_STORE instead of --store.
func (b backend) env() backend { b.viaEnv = true; return b }

// args appends --store to a command line, unless the store goes by the
// environment. Flags may follow positional arguments (parseFlags).
func (b backend) args(args ...string) []string {
	if b.dsn == "" || b.viaEnv {
		return args
	}
	return append(append([]string{}, args...), "--store", b.dsn)
}

// environ is the environment entries that name the store, if any.
func (b backend) environ() []string {
	if b.dsn == "" || !b.viaEnv {
		return nil
	}
	return []string{index.EnvStore + "=" + b.dsn}
}

// run runs the binary with args on this backend; what it prints must not
// show the store's password.
func (b backend) run(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	code, stdout, stderr = runBinaryEnv(t, b.environ(), b.args(args...)...)
	b.noSecret(t, args[0], stdout+stderr)
	return code, stdout, stderr
}

// command is exec.Command of the binary with args on this backend.
func (b backend) command(args ...string) *exec.Cmd {
	cmd := exec.Command(binary, b.args(args...)...)
	if env := b.environ(); env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	return cmd
}

// startServer is startServer on this backend.
func (b backend) startServer(t *testing.T, data string, extra ...string) *client.Client {
	t.Helper()
	check := func(logs string) { b.noSecret(t, "the server's log", logs) }
	return startServerEnv(t, b.environ(), check, data, b.args(extra...)...)
}

// startRaw is startRaw on this backend; when the test ends, nothing the
// server wrote (stdout, logs) may show the store's password.
func (b backend) startRaw(t *testing.T, args ...string) *rawSession {
	t.Helper()
	s := startRawCmd(t, b.command(args...))
	t.Cleanup(func() {
		s.mu.Lock()
		defer s.mu.Unlock()
		b.noSecret(t, "the server", strings.Join(s.lines, "\n")+s.logs.String())
	})
	return s
}

// noSecret fails the test if out shows the store's password.
func (b backend) noSecret(t *testing.T, what, out string) {
	t.Helper()
	if pw := b.password(); pw != "" && strings.Contains(out, pw) {
		t.Errorf("%s shows the store's password:\n%s", what, out)
	}
}

func (b backend) password() string {
	u, err := url.Parse(b.dsn)
	if err != nil || u.User == nil {
		return ""
	}
	pw, _ := u.User.Password()
	return pw
}

// schema is the store with its index in the named schema (index.SchemaParam)
// rather than one derived from the data folder: processes on different
// folders share it, as they share an index folder given by --index-folder.
func (b backend) schema(name string) backend {
	if b.dsn != "" {
		b.dsn += "&" + index.SchemaParam + "=" + name
	}
	return b
}

// exec runs one statement in the test's database.
func (b backend) exec(t *testing.T, sql string, args ...any) {
	t.Helper()
	ctx, conn := b.connect(t)
	if tag, err := conn.Exec(ctx, sql, args...); err != nil || tag.RowsAffected() == 0 {
		t.Fatalf("%s: %v (%d rows)", sql, err, tag.RowsAffected())
	}
}

// advisoryLocks counts the advisory locks held in the test's database:
// the writer's lock that replaces index.lock on PostgreSQL.
func (b backend) advisoryLocks(t *testing.T) int {
	t.Helper()
	ctx, conn := b.connect(t)
	var n int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM pg_locks l JOIN pg_database d ON d.oid = l.database
		WHERE l.locktype = 'advisory' AND d.datname = current_database()`).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

// holding lists the tables of the test's database (none for the local
// backend) with a row whose text holds s, or whose bytes hold s's first
// word lower-cased, as the keyword index keeps it.
func (b backend) holding(t *testing.T, s string) []string {
	t.Helper()
	if !b.postgres() {
		return nil
	}
	ctx, conn := b.connect(t)
	rows, err := conn.Query(ctx, `SELECT quote_ident(table_schema) || '.' || quote_ident(table_name) FROM information_schema.tables
		WHERE table_schema NOT IN ('pg_catalog', 'information_schema') AND table_type = 'BASE TABLE'`)
	if err != nil {
		t.Fatal(err)
	}
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	word := strings.ToLower(strings.FieldsFunc(s, func(r rune) bool { return r == '-' || r == ' ' })[0])
	var found []string
	for _, table := range tables {
		var n int
		// bytea shows as hex in a row's text.
		q := `SELECT count(*) FROM ` + table + ` r WHERE r::text ILIKE '%' || $1 || '%' OR r::text LIKE '%' || encode(convert_to($2, 'UTF8'), 'hex') || '%'`
		if err := conn.QueryRow(ctx, q, s, word).Scan(&n); err != nil {
			t.Fatal(err)
		}
		if n > 0 {
			found = append(found, table)
		}
	}
	if len(tables) == 0 {
		t.Error("no tables in the test's database")
	}
	return found
}

// connect opens a connection to the test's database, closed when the
// test ends.
func (b backend) connect(t *testing.T) (context.Context, *pgx.Conn) {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, b.dsn)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close(ctx) })
	return ctx, conn
}
