package soak

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

var (
	binary string
	pg     *pgtest.Server
)

// TestMain builds the server and starts one PostgreSQL for the package.
func TestMain(m *testing.M) {
	os.Exit(testMain(m))
}

func testMain(m *testing.M) int {
	dir, err := os.MkdirTemp("", "soak-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	defer os.RemoveAll(dir)
	binary = filepath.Join(dir, "micro-rag-mcp")
	build := exec.Command("go", "build", "-o", binary, "github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building micro-rag-mcp:", err)
		return 1
	}
	if pg, err = pgtest.Start(); err != nil {
		fmt.Fprintln(os.Stderr, "pgtest:", err)
		return 1
	}
	defer pg.Stop()
	return m.Run()
}

// A short soak: two servers and the CLI reindexer on one database under a
// writer's changes answer without an error, find planted phrases without
// a restart, answer a second reindex busy, and end with the index a clean
// rebuild makes.
func TestShortSoak(t *testing.T) {
	ctx := context.Background()
	db, err := pg.NewDatabase(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pg.DropDatabase(ctx, db) })
	rep, err := Run(ctx, Config{Bin: binary, Store: pg.DSN(db), Dir: t.TempDir(), Duration: 20 * time.Second,
		Stable: 20, WriteEvery: 300 * time.Millisecond, PlantEvery: 4 * time.Second, BusyEvery: 5 * time.Second,
		FinalQueries: 3, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("report:\n%s", rep)
	if n := rep.Errors(); n > 0 {
		t.Errorf("%d failures", n)
	}
	if rep.Search.N.Load() == 0 || rep.Read.N.Load() == 0 {
		t.Error("no searches or reads were answered")
	}
	if n, _, _ := rep.Plants.Found(); n == 0 || int64(n) != rep.Plants.Planted.Load() {
		t.Errorf("%d of %d planted phrases found on both servers", n, rep.Plants.Planted.Load())
	}
	if rep.Busy.Tool.Busy.Load() == 0 {
		t.Error("no second reindex was answered busy while a forced one held the lock")
	}
	if rep.Writes.Delete.Load() == 0 || rep.Writes.Rename.Load() == 0 || rep.Writes.Modify.Load() == 0 {
		t.Error("the writer did not delete, rename and modify")
	}
	if rep.IndexFiles != rep.FolderFiles || rep.CleanFiles != rep.FolderFiles || rep.FilesDiffer+rep.ChunksDiffer > 0 {
		t.Errorf("files: folder %d, index %d, clean rebuild %d; %d checksums and %d chunk lists differ",
			rep.FolderFiles, rep.IndexFiles, rep.CleanFiles, rep.FilesDiffer, rep.ChunksDiffer)
	}
	if rep.ServerQueries == 0 || rep.ServerSame != rep.ServerQueries {
		t.Errorf("running servers ranked %d of %d queries as a new process", rep.ServerSame, rep.ServerQueries)
	}
}
