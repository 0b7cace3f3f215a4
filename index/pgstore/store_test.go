package pgstore

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const testDim = 16

var testVersion = schema.Version{Schema: schema.SchemaVersion, Model: "test-model", Dim: testDim, ChunkSize: 100, ChunkOverlap: 10, MaxTokens: 256}

func open(t *testing.T, dsn, name string, v schema.Version) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, name, v, Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

func unit(rng *rand.Rand, dim int) []float32 {
	v := make([]float32, dim)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i]) * float64(v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// doc is a file of chunks with their vectors.
type doc struct {
	entry  schema.FileEntry
	chunks []schema.Record
	vecs   []float32
}

func makeDoc(rng *rand.Rand, path string, texts ...string) doc {
	d := doc{entry: schema.FileEntry{Path: path, Mtime: 1700000000.5, Size: 1234, Checksum: "sum-" + path, Ext: ".md", PageStarts: []int{0, 40}}}
	off := 0
	for i, text := range texts {
		d.chunks = append(d.chunks, schema.Record{ChunkIndex: i, CharStart: off, CharEnd: off + len(text), LineStart: i + 1, LineEnd: i + 1, Text: text, Headings: "Intro"})
		off += len(text)
		d.vecs = append(d.vecs, unit(rng, testDim)...)
	}
	return d
}

func put(t *testing.T, u *Updater, d doc) {
	t.Helper()
	if err := u.PutFile(d.entry, slices.Clone(d.chunks), d.vecs); err != nil {
		t.Fatal(err)
	}
}

func begin(t *testing.T, s *Store) *Updater {
	t.Helper()
	u, err := s.begin(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return u
}

func commit(t *testing.T, u *Updater, end schema.RunEnd) {
	t.Helper()
	if err := u.Commit(end); err != nil {
		t.Fatal(err)
	}
}

// commitDocs writes docs in one run of their own and ends it.
func commitDocs(t *testing.T, s *Store, docs ...doc) {
	t.Helper()
	u := begin(t, s)
	defer u.Close()
	for _, d := range docs {
		put(t, u, d)
	}
	commit(t, u, schema.EndOfRun)
}

// A commit is read back whole, by this store and by another one on the
// same schema (another server): entries, records, kNN, exact cosines,
// stored vectors by text, keywords.
func TestCommitAndRead(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(1, 2))
	a := open(t, dsn, "idx", testVersion)
	alpha := makeDoc(rng, "docs/alpha.md", "The quarterly report covers revenue.", "Parental leave is sixteen weeks.")
	beta := makeDoc(rng, "beta.txt", "Kubernetes operators reconcile state.")
	u := begin(t, a)
	put(t, u, alpha)
	put(t, u, beta)
	commit(t, u, schema.EndOfRun)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	b := open(t, dsn, "idx", testVersion)
	for name, s := range map[string]*Store{"writer": a, "reader": b} {
		t.Run(name, func(t *testing.T) {
			v := s.acquire()
			defer v.Release()
			checkView(t, v, alpha, beta)
		})
	}
}

func checkView(t *testing.T, v *View, alpha, beta doc) {
	t.Helper()
	if v.Files() != 2 || v.Chunks() != 3 || !slices.Equal(v.Paths(), []string{"beta.txt", "docs/alpha.md"}) {
		t.Fatalf("files %d chunks %d paths %v", v.Files(), v.Chunks(), v.Paths())
	}
	if v.LastReindex() == "" {
		t.Error("no last reindex time after an end-of-run commit")
	}
	f, ok := v.File("docs/alpha.md")
	if !ok || len(f.ChunkIDs) != 2 || f.Checksum != "sum-docs/alpha.md" || !slices.Equal(f.PageStarts, []int{0, 40}) || f.Size != 1234 {
		t.Fatalf("entry %+v %v", f, ok)
	}
	r, ok, err := v.FileChunk("docs/alpha.md", 1)
	if err != nil || !ok || r.Text != alpha.chunks[1].Text || r.Headings != "Intro" || r.Path != "docs/alpha.md" || r.ChunkIndex != 1 || r.LineStart != 2 || r.EmbeddingDim != testDim {
		t.Fatalf("chunk 1: %+v %v %v", r, ok, err)
	}
	if _, _, err := v.FileChunk("docs/alpha.md", 2); err == nil {
		t.Error("chunk 2 of a two-chunk file: no error")
	}
	if _, ok, _ := v.FileChunk("nope.md", 0); ok {
		t.Error("a file not indexed is found")
	}
	heads, err := v.Heads([]int64{f.ChunkIDs[1], f.ChunkIDs[0]})
	if err != nil || heads[0].ChunkIndex != 1 || heads[1].ChunkIndex != 0 || heads[0].Text != "" {
		t.Fatalf("heads %+v %v", heads, err)
	}
	// Each chunk's own vector finds it first, with cosine 1.
	for i, d := range []doc{alpha, beta} {
		ids := v.files[d.entry.Path].ChunkIDs
		for j, id := range ids {
			q := d.vecs[j*testDim : (j+1)*testDim]
			hits, err := v.Search(q, 3)
			if err != nil || len(hits) != 3 || hits[0].Record.ID != id || math.Abs(float64(hits[0].Score)-1) > 1e-5 {
				t.Fatalf("doc %d chunk %d: %+v %v", i, j, hits, err)
			}
			sims, err := v.Similarities(q, []int64{id})
			if err != nil || math.Abs(float64(sims[0])-1) > 1e-5 {
				t.Fatalf("similarity with itself: %v %v", sims, err)
			}
		}
	}
	cv := v.ChunkVectors("docs/alpha.md")
	if got := cv[schema.TextHash(alpha.chunks[1].Text)]; !slices.Equal(got, alpha.vecs[testDim:]) {
		t.Errorf("stored vector of chunk 1: %v", got)
	}
	hits, err := v.SearchLexical("parental leave", 5)
	if err != nil || len(hits) != 1 || hits[0].Record.Text != alpha.chunks[1].Text || hits[0].Share != 1 {
		t.Errorf("keywords: %+v %v", hits, err)
	}
}

// A changed file, a removed one and a touched one: the next commit shows
// them, the view of the previous commit still answers as before (its
// deleted rows are kept), and the stores that refresh see the change.
func TestIncrementalUpdate(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(3, 4))
	a := open(t, dsn, "idx", testVersion)
	b := open(t, dsn, "idx", testVersion)
	one := makeDoc(rng, "one.md", "first text about apples", "second text about pears")
	two := makeDoc(rng, "two.md", "text about plums")
	three := makeDoc(rng, "three.md", "text about cherries")
	u := begin(t, a)
	for _, d := range []doc{one, two, three} {
		put(t, u, d)
	}
	commit(t, u, schema.EndOfRun)
	if ok, err := b.Refresh(); !ok || err != nil {
		t.Fatalf("refresh after a commit: %v %v", ok, err)
	}
	if ok, err := b.Refresh(); ok || err != nil {
		t.Fatalf("refresh with nothing new: %v %v", ok, err)
	}
	old := b.acquire()
	defer old.Release()
	oldTwo := old.files["two.md"].ChunkIDs[0]

	one2 := makeDoc(rng, "one.md", "first text about apples, revised")
	put(t, u, one2)
	u.RemoveFile("two.md")
	u.TouchFile("three.md", 1800000000, 99)
	commit(t, u, schema.MidRun)
	if err := u.Close(); err != nil {
		t.Fatal(err)
	}
	if ok, err := b.Refresh(); !ok || err != nil {
		t.Fatalf("refresh after the second commit: %v %v", ok, err)
	}
	for name, s := range map[string]*Store{"writer": a, "reader": b} {
		v := s.acquire()
		if v.Files() != 2 || v.Chunks() != 2 || v.Tombstones() != 3 {
			t.Errorf("%s: files %d chunks %d tombstones %d", name, v.Files(), v.Chunks(), v.Tombstones())
		}
		if f, _ := v.File("three.md"); f.Mtime != 1800000000 || f.Size != 99 {
			t.Errorf("%s: touched entry %+v", name, f)
		}
		if _, err := v.Record(oldTwo); err == nil {
			t.Errorf("%s: a removed chunk is readable in the new view", name)
		}
		hits, err := v.Search(two.vecs, 5)
		if err != nil || len(hits) != 2 {
			t.Errorf("%s: search: %d hits %v", name, len(hits), err)
		}
		for _, h := range hits {
			if h.Record.Path == "two.md" || h.Record.Text == "second text about pears" {
				t.Errorf("%s: a deleted chunk is found: %+v", name, h.Record)
			}
		}
		if hs, _ := v.SearchLexical("plums", 5); len(hs) != 0 {
			t.Errorf("%s: the removed file's keywords match: %+v", name, hs)
		}
		if hs, _ := v.SearchLexical("revised", 5); len(hs) != 1 {
			t.Errorf("%s: the new text's keywords: %+v", name, hs)
		}
		v.Release()
	}
	// The old view still answers as it did.
	if r, err := old.Record(oldTwo); err != nil || r.Text != "text about plums" {
		t.Errorf("old view's record of a since-deleted chunk: %+v %v", r, err)
	}
	hits, err := old.Search(two.vecs, 10)
	if err != nil || len(hits) != 4 || hits[0].Record.ID != oldTwo {
		t.Errorf("old view's kNN: %d hits %v", len(hits), err)
	}
	for _, h := range hits {
		if h.Record.Text == "first text about apples, revised" {
			t.Error("old view finds a chunk committed after it")
		}
	}
	if hs, _ := old.SearchLexical("plums", 5); len(hs) != 1 {
		t.Errorf("old view's keywords: %+v", hs)
	}
}

// A commit that fails in its transaction leaves the previous commit in
// the database and in the current view; the changes stay pending and a
// later commit without the bad one succeeds.
func TestFailedCommitKeepsPrevious(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(5, 6))
	a := open(t, dsn, "idx", testVersion)
	u := begin(t, a)
	defer u.Close()
	put(t, u, makeDoc(rng, "good.md", "good text"))
	commit(t, u, schema.EndOfRun)
	put(t, u, makeDoc(rng, "more.md", "more text"))
	put(t, u, makeDoc(rng, "bad.md", "a NUL byte \x00 PostgreSQL text refuses"))
	if err := u.Commit(schema.EndOfRun); err == nil {
		t.Fatal("a commit of text with a NUL byte succeeded")
	}
	b := open(t, dsn, "idx", testVersion)
	for name, s := range map[string]*Store{"writer": a, "reader": b} {
		v := s.acquire()
		if v.Files() != 1 || v.Chunks() != 1 || v.gen != 1 {
			t.Errorf("%s after a failed commit: files %d chunks %d generation %d", name, v.Files(), v.Chunks(), v.gen)
		}
		v.Release()
	}
	u.RemoveFile("bad.md")
	commit(t, u, schema.EndOfRun)
	if _, err := b.Refresh(); err != nil {
		t.Fatal(err)
	}
	v := b.acquire()
	defer v.Release()
	if !slices.Equal(v.Paths(), []string{"good.md", "more.md"}) {
		t.Errorf("after the retried commit: %v", v.Paths())
	}
}

// Exactly one writer: a second Begin, in this process or another store,
// fails at once with ErrLocked until the first writer closes.
func TestSecondWriterBusy(t *testing.T) {
	dsn := pgtest.Database(t)
	a := open(t, dsn, "idx", testVersion)
	b := open(t, dsn, "idx", testVersion)
	other := open(t, dsn, "other", testVersion)
	u := begin(t, a)
	if _, err := a.Begin(); !errors.Is(err, index.ErrLocked) {
		t.Errorf("second Begin in the same store: %v, want ErrLocked", err)
	}
	if _, err := b.Begin(); !errors.Is(err, index.ErrLocked) {
		t.Errorf("Begin in another store: %v, want ErrLocked", err)
	}
	uo := begin(t, other) // another schema has a lock of its own
	uo.Close()
	u.Close()
	ub := begin(t, b)
	ub.Close()
}

// A writer's connection killed while its commit waits on its last
// statement: the commit fails, the previous commit stays whole and
// searchable for every store, the lock is free again, and the next writer
// commits normally.
func TestConnectionKilledMidCommit(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(7, 8))
	a := open(t, dsn, "idx", testVersion)
	u := begin(t, a)
	first := makeDoc(rng, "first.md", "committed text")
	put(t, u, first)
	commit(t, u, schema.EndOfRun)
	var pid int32
	if err := u.conn.QueryRow(ctx, "SELECT pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	for i := range 50 {
		put(t, u, makeDoc(rng, fmt.Sprintf("new%02d.md", i), "uncommitted text", "more of it"))
	}
	u.RemoveFile("first.md")

	// Hold the meta row's table so the commit blocks at its commit point,
	// after writing everything else.
	blocker, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer blocker.Close(ctx)
	btx, err := blocker.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := btx.Exec(ctx, "LOCK TABLE "+a.q.schema+".meta IN ACCESS EXCLUSIVE MODE"); err != nil {
		t.Fatal(err)
	}
	// Activity is read by a connection of its own: a transaction sees
	// pg_stat_activity as of its first read.
	watcher, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer watcher.Close(ctx)
	done := make(chan error)
	go func() { done <- u.Commit(schema.EndOfRun) }()
	for {
		var waiting bool
		if err := watcher.QueryRow(ctx, "SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pid = $1 AND wait_event_type = 'Lock' AND query LIKE 'UPDATE%')", pid).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	if _, err := watcher.Exec(ctx, "SELECT pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("a commit whose connection was killed succeeded")
	}
	btx.Rollback(ctx)
	u.Close()

	b := open(t, dsn, "idx", testVersion)
	for name, s := range map[string]*Store{"writer": a, "reader": b} {
		v := s.acquire()
		hits, err := v.Search(first.vecs, 5)
		if v.Files() != 1 || v.gen != 1 || err != nil || len(hits) != 1 || hits[0].Record.Text != "committed text" {
			t.Errorf("%s: files %d generation %d hits %+v %v", name, v.Files(), v.gen, hits, err)
		}
		v.Release()
	}
	var chunks int
	if err := blocker.QueryRow(ctx, "SELECT count(*) FROM "+a.q.schema+".chunks").Scan(&chunks); err != nil || chunks != 1 {
		t.Errorf("chunk rows after the killed commit: %d %v", chunks, err)
	}
	ub := begin(t, b) // the lock went with the connection
	put(t, ub, makeDoc(rng, "after.md", "after the crash"))
	commit(t, ub, schema.EndOfRun)
	ub.Close()
	if ok, err := a.Refresh(); !ok || err != nil {
		t.Fatalf("refresh: %v %v", ok, err)
	}
}

// Schema names that are SQL, quotes, spaces or non-ASCII are quoted and
// never reach SQL raw: each is a schema of its own.
func TestHostileSchemaNames(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(9, 10))
	names := []string{
		`x"; DROP SCHEMA public CASCADE; --`,
		`Robert'); DROP TABLE files;--`,
		"with space and \"quotes\" and 'apostrophes'",
		"naïve café 東京",
		strings.Repeat("n", 63),
		"public",
	}
	for i, name := range names {
		s := open(t, dsn, name, testVersion)
		u := begin(t, s)
		put(t, u, makeDoc(rng, fmt.Sprintf("f%d.md", i), fmt.Sprintf("text %d", i)))
		commit(t, u, schema.EndOfRun)
		u.Close()
	}
	conn, err := pgx.Connect(context.Background(), dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(context.Background())
	var n int
	if err := conn.QueryRow(context.Background(), "SELECT count(*) FROM pg_extension WHERE extname = 'vector'").Scan(&n); err != nil || n != 1 {
		t.Fatalf("the vector extension is gone: %v", err)
	}
	for i, name := range names {
		s := open(t, dsn, name, testVersion)
		v := s.acquire()
		if !slices.Equal(v.Paths(), []string{fmt.Sprintf("f%d.md", i)}) {
			t.Errorf("schema %q holds %v", name, v.Paths())
		}
		v.Release()
	}
	if _, err := Open(context.Background(), dsn, strings.Repeat("n", 64), testVersion, Options{}); err == nil {
		t.Error("a 64-byte schema name (PostgreSQL would cut it) is accepted")
	}
}

// The password never appears in an error: a wrong password, a bad
// connection string, an unreachable server.
func TestPasswordNotInErrors(t *testing.T) {
	srv := pgtest.Shared(t)
	ctx := context.Background()
	secret := "S3cr3t-pa55word-xyz"
	dsns := []string{
		strings.Replace(srv.DSN("postgres"), srv.Password, secret, 1),
		fmt.Sprintf("postgres://postgres:%s@127.0.0.1:1/db?sslmode=disable&connect_timeout=2", secret),
		fmt.Sprintf("postgres://postgres:%s@127.0.0.1:%d/db?sslmode=bogus", secret, srv.Port),
		fmt.Sprintf("host=127.0.0.1 port=%d user=postgres password=%s dbname=postgres sslmode=disable connect_timeout=x", srv.Port, secret),
	}
	for _, dsn := range dsns {
		s, err := Open(ctx, dsn, "idx", testVersion, Options{})
		if err == nil {
			s.Close()
			t.Errorf("%q opened", strings.ReplaceAll(dsn, secret, "..."))
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("the error shows the password: %v", err)
		}
	}
	if s, err := Open(ctx, srv.DSN("postgres")+"&connect_timeout=5", "", testVersion, Options{}); err == nil {
		s.Close()
		t.Error("an empty schema name is accepted")
	}
}

// An index built for another model is served empty (OpenErr says why)
// and the next writer replaces it, vectors of another dimension included.
func TestOtherVersionRebuilt(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(11, 12))
	a := open(t, dsn, "idx", testVersion)
	commitDocs(t, a, makeDoc(rng, "a.md", "old model text"))

	v2 := testVersion
	v2.Model, v2.Dim = "other-model", 8
	b := open(t, dsn, "idx", v2)
	if !errors.Is(b.OpenErr(), index.ErrOtherVersion) || b.acquire().Chunks() != 0 {
		t.Fatalf("open by another model: %v", b.OpenErr())
	}
	ub := begin(t, b)
	if !ub.rebuilt || ub.Base() != nil || len(ub.Before()) != 0 {
		t.Fatalf("rebuilt %v base %v before %v", ub.rebuilt, ub.Base(), ub.Before())
	}
	vec := []float32{1, 0, 0, 0, 0, 0, 0, 0}
	if err := ub.PutFile(schema.FileEntry{Path: "b.md", Ext: ".md"}, []schema.Record{{Text: "new model text"}}, vec); err != nil {
		t.Fatal(err)
	}
	commit(t, ub, schema.EndOfRun)
	ub.Close()
	v := b.acquire()
	defer v.Release()
	hits, err := v.Search(vec, 5)
	if err != nil || len(hits) != 1 || hits[0].Record.Text != "new model text" || b.OpenErr() != nil {
		t.Fatalf("after the rebuild: %+v %v (open error %v)", hits, err, b.OpenErr())
	}
	if _, err := a.Refresh(); !errors.Is(err, index.ErrOtherVersion) {
		t.Errorf("the old model's store refreshes: %v, want ErrOtherVersion", err)
	}
}

// The least privileges the docs name are enough: a role that is no
// superuser and owns nothing, with CONNECT and CREATE on the database
// (where a superuser created the vector extension), makes its schema,
// writes and reads; another such role cannot read that schema.
func TestLeastPrivilegeRole(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	admin, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close(ctx)
	db := admin.Config().Database
	srv := pgtest.Shared(t)
	roles := []string{"mrag_" + db, "other_" + db}
	for _, role := range roles {
		for _, sql := range []string{
			fmt.Sprintf("CREATE ROLE %s LOGIN PASSWORD 'pw-%s' NOSUPERUSER NOCREATEDB NOCREATEROLE", role, role),
			fmt.Sprintf("GRANT CONNECT, CREATE ON DATABASE %s TO %s", db, role),
		} {
			if _, err := admin.Exec(ctx, sql); err != nil {
				t.Fatal(sql, err)
			}
		}
	}
	// The roles live as long as the test server (roles are cluster-wide).
	roleDSN := func(role string) string {
		return fmt.Sprintf("postgres://%s:pw-%s@%s:%d/%s?sslmode=disable", role, role, srv.Host, srv.Port, db)
	}
	s := open(t, roleDSN(roles[0]), "mrag_docs", testVersion)
	u := begin(t, s)
	put(t, u, makeDoc(rand.New(rand.NewPCG(1, 3)), "a.md", "least privilege text"))
	commit(t, u, schema.EndOfRun)
	u.Close()
	if v := s.acquire(); v.Chunks() != 1 {
		t.Errorf("%d chunks", v.Chunks())
	}
	if o, err := Open(ctx, roleDSN(roles[1]), "mrag_docs", testVersion, Options{}); err == nil {
		o.Close()
		t.Error("another role opened the schema")
	}
}

// The ef_search a kNN query sets holds for that query only: a batch is
// one implicit transaction, and set_config(…, true) is local to it.
func TestEfSearchIsPerQuery(t *testing.T) {
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.Database(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "LOAD 'vector'"); err != nil {
		t.Fatal(err)
	}
	b := &pgx.Batch{}
	b.Queue("SELECT set_config('hnsw.ef_search', '321', true)")
	b.Queue("SELECT current_setting('hnsw.ef_search')")
	br := conn.SendBatch(ctx, b)
	var in, after string
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	if err := br.QueryRow().Scan(&in); err != nil {
		t.Fatal(err)
	}
	br.Close()
	if err := conn.QueryRow(ctx, "SELECT current_setting('hnsw.ef_search')").Scan(&after); err != nil {
		t.Fatal(err)
	}
	if in != "321" || after == "321" {
		t.Errorf("ef_search in the batch %s, after it %s", in, after)
	}
}

// Every pooled session plans each query with its own values: a generic
// plan of the kNN statement cannot see the query vector and sorts every
// row (BenchmarkPgstore at 100k: p50 62 ms against 6.5 ms on the graph).
func TestQueriesPlannedWithTheirValues(t *testing.T) {
	s := open(t, pgtest.Database(t), "mrag_docs", testVersion)
	var mode string
	if err := s.pool.QueryRow(context.Background(), "SHOW plan_cache_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	if mode != "force_custom_plan" {
		t.Errorf("plan_cache_mode %q, want force_custom_plan", mode)
	}
}

// A run whose checkpoint committed all its work still records when it
// ended (status once said "never" after such a run).
func TestLastReindexAfterCheckpoint(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(5, 6))
	at := time.Date(2030, 1, 2, 3, 0, 0, 0, time.UTC)
	s, err := Open(context.Background(), dsn, "idx", testVersion, Options{Clock: func() time.Time { return at }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	u := begin(t, s)
	defer u.Close()
	put(t, u, makeDoc(rng, "a.md", "The only passage."))
	commit(t, u, schema.MidRun)
	commit(t, u, schema.EndOfRun)
	v := s.acquire()
	defer v.Release()
	if got, want := v.LastReindex(), at.Format(time.RFC3339); got != want {
		t.Fatalf("last reindex %q, want %q", got, want)
	}
}

// A schema another program keeps tables of the index's names in is
// refused at open, naming them, and their rows stay; a schema holding
// only other tables takes the index beside them.
func TestForeignTablesRefused(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	for _, sql := range []string{
		"CREATE SCHEMA theirs_chunks",
		"CREATE TABLE theirs_chunks.chunks (id bigint PRIMARY KEY, body text)",
		"INSERT INTO theirs_chunks.chunks SELECT g, 'their row' FROM generate_series(1, 10) g",
		"CREATE SCHEMA theirs_meta",
		"CREATE TABLE theirs_meta.meta (k text, v text)",
		"CREATE SCHEMA theirs_other",
		"CREATE TABLE theirs_other.customers (id int)",
	} {
		if _, err := conn.Exec(ctx, sql); err != nil {
			t.Fatal(sql, err)
		}
	}
	for name, says := range map[string]string{
		"theirs_chunks": "tables named chunks",
		"theirs_meta":   "a table meta that is not an index's",
	} {
		s, err := Open(ctx, dsn, name, testVersion, Options{})
		if err == nil {
			s.Close()
			t.Errorf("schema %s opened", name)
			continue
		}
		if !strings.Contains(err.Error(), says) {
			t.Errorf("schema %s: error %q does not say %q", name, err, says)
		}
	}
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM theirs_chunks.chunks").Scan(&n); err != nil || n != 10 {
		t.Errorf("their chunks table holds %d rows (%v), want 10", n, err)
	}
	rng := rand.New(rand.NewPCG(11, 12))
	commitDocs(t, open(t, dsn, "theirs_other", testVersion), makeDoc(rng, "a.md", "text"))
	// Opened again, the index's own tables are not taken for another's.
	open(t, dsn, "theirs_other", testVersion)
}

// SearchLexical returns up to k chunks by BM25F, best first, with their
// records: what the tests read of the keyword side.
func (v *View) SearchLexical(query string, k int) ([]index.Hit, error) {
	found, _ := v.LexicalQuery(query).Search(k, nil)
	ids := make([]int64, len(found))
	for i, r := range found {
		ids[i] = r.ID
	}
	recs, err := v.records(v.s.q.full, ids, true)
	if err != nil {
		return nil, err
	}
	hits := make([]index.Hit, 0, len(found))
	for _, r := range found {
		hits = append(hits, index.Hit{Record: recs[r.ID], Score: float32(r.Score), Share: r.Coverage})
	}
	return hits, nil
}

// Connections dropped under an open store (a restarted server, terminated
// backends) cost a reader nothing: the read that meets a dead connection
// runs again on a live one, and so does taking the writer's lock, however
// recently the dead connections were used.
func TestReadsSurviveDroppedConnections(t *testing.T) {
	dsn := pgtest.Database(t)
	ctx := context.Background()
	rng := rand.New(rand.NewPCG(9, 10))
	a := open(t, dsn, "idx", testVersion)
	alpha := makeDoc(rng, "alpha.md", "The quarterly report covers revenue.", "Parental leave is sixteen weeks.")
	commitDocs(t, a, alpha)
	killer, err := pgx.Connect(ctx, dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer killer.Close(ctx)
	cut := func() {
		t.Helper()
		// Several pooled connections, all used just now.
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				v := a.acquire()
				defer v.Release()
				v.Search(alpha.vecs[:testDim], 2)
			})
		}
		wg.Wait()
		var n int
		if err := killer.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
			WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&n); err != nil || n == 0 {
			t.Fatalf("terminating the store's connections: %d %v", n, err)
		}
	}
	v := a.acquire()
	defer v.Release()
	f, _ := v.File("alpha.md")
	ids := f.ChunkIDs
	reads := map[string]func() error{
		"search": func() error {
			hits, err := v.Search(alpha.vecs[testDim:], 1)
			if err == nil && (len(hits) != 1 || hits[0].Record.Text != "Parental leave is sixteen weeks.") {
				err = fmt.Errorf("hits %+v", hits)
			}
			return err
		},
		"record": func() error { _, err := v.Record(ids[0]); return err },
		"heads":  func() error { _, err := v.Heads(ids); return err },
		"vectors": func() error {
			_, err := v.Vectors(ids)
			return err
		},
		"stored vectors": func() error {
			if got := v.ChunkVectors("alpha.md"); len(got) != 2 {
				return fmt.Errorf("%d vectors, want 2", len(got))
			}
			return nil
		},
		"refresh": func() error {
			_, err := a.Refresh()
			return err
		},
		"writer": func() error {
			u, err := a.begin(ctx)
			if err == nil {
				err = u.Close()
			}
			return err
		},
	}
	for name, read := range reads {
		cut()
		if err := read(); err != nil {
			t.Errorf("%s right after the connections were dropped: %v", name, err)
		}
	}
}
