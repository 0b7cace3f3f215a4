package pgtest

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

func TestMain(m *testing.M) { Main(m) }

// A test's database is reachable with the password only, has pgvector, and
// runs a kNN query through the HNSW index.
func TestDatabaseHasVector(t *testing.T) {
	ctx := context.Background()
	dsn := Database(t)
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var v string
	if err := conn.QueryRow(ctx, "SELECT extversion FROM pg_extension WHERE extname = 'vector'").Scan(&v); err != nil {
		t.Fatal(err)
	}
	if v != "0.8.6" {
		t.Errorf("pgvector %s, want 0.8.6", v)
	}
	for _, q := range []string{
		"CREATE TABLE v (id int PRIMARY KEY, e vector(3))",
		"INSERT INTO v VALUES (1, '[1,0,0]'), (2, '[0,1,0]'), (3, '[0.9,0.1,0]')",
		"CREATE INDEX ON v USING hnsw (e vector_cosine_ops)",
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			t.Fatal(q, err)
		}
	}
	rows, _ := conn.Query(ctx, "SELECT id FROM v ORDER BY e <=> '[1,0,0]' LIMIT 2")
	ids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(ids) != 2 || ids[0] != 1 || ids[1] != 3 {
		t.Errorf("nearest to [1,0,0]: %v %v, want [1 3]", ids, err)
	}

	bad := strings.Replace(dsn, Shared(t).Password, "wrong", 1)
	if c, err := pgx.Connect(ctx, bad); err == nil {
		c.Close(ctx)
		t.Error("a wrong password connected: the server does not check passwords")
	}
}

// Binaries that are not there fail with the advice to run make setup-test.
func TestMissingBinaries(t *testing.T) {
	t.Setenv(BinEnv, "")
	t.Chdir(t.TempDir())
	_, err := Bin()
	if err == nil || !strings.Contains(err.Error(), "make setup-test") {
		t.Errorf("Bin outside the repository: %v, want an error naming make setup-test", err)
	}
}

// A server whose test process is gone (killed by a timeout, say) is
// stopped and removed by the next Start; a live process's is not.
func TestStartReapsOrphans(t *testing.T) {
	orphan, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	// A pid that no process has: the largest pid_max allows is 2^22.
	if err := os.WriteFile(filepath.Join(orphan.dir, ownerFile), []byte("4194304000"), 0o644); err != nil {
		t.Fatal(err)
	}
	next, err := Start()
	if err != nil {
		t.Fatal(err)
	}
	defer next.Stop()
	if _, err := os.Stat(orphan.dir); !os.IsNotExist(err) {
		orphan.Stop()
		t.Fatalf("the orphan's folder is still there: %v", err)
	}
	if _, err := os.Stat(Shared(t).dir); err != nil {
		t.Errorf("the live shared server's folder is gone: %v", err)
	}
}

// make test in a clone under a private folder (mode 0700, which the
// unprivileged server user cannot enter): the binaries and the libraries
// their run path names must both be reachable, so a PostgreSQL test run
// from there passes.
func TestPrivateCheckout(t *testing.T) {
	bin, err := Bin()
	if err != nil {
		t.Fatal(err)
	}
	checkout := testutil.PrivateCheckout(t)
	// .tools/postgres as make setup-test installs it: real files, not a
	// link to this checkout's readable copy.
	tools := filepath.Dir(filepath.Dir(filepath.Dir(bin))) // .tools/postgres
	dst := filepath.Join(checkout, ".tools", "postgres")
	if err := os.MkdirAll(dst, 0o755); err != nil {
		t.Fatal(err)
	}
	if out, err := exec.Command("cp", "-a", tools+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp: %v\n%s", err, out)
	}
	cmd := exec.Command("go", "test", "-count=1", "-run", "^TestDatabaseHasVector$", "./internal/pgtest/")
	cmd.Dir = checkout
	cmd.Env = append(os.Environ(), BinEnv+"=")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("go test in %s: %v\n%s", checkout, err, out)
	}
	if !strings.Contains(string(out), "ok") {
		t.Errorf("go test in %s printed no ok:\n%s", checkout, out)
	}
}
