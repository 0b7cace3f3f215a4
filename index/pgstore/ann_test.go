package pgstore

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func TestListsAndProbes(t *testing.T) {
	for _, c := range []struct {
		rows          int64
		lists, probes int
	}{
		{0, 1, 1}, {999, 1, 1}, {9_000, 9, 9}, {100_000, 100, 10}, {1_000_000, 1000, 40}, {4_000_000, 2000, 80},
	} {
		if l := listsFor(c.rows); l != c.lists {
			t.Errorf("listsFor(%d) = %d, want %d", c.rows, l, c.lists)
		}
		if p := probesFor(c.lists); p != c.probes {
			t.Errorf("probesFor(%d) = %d, want %d", c.lists, p, c.probes)
		}
	}
}

// The build memory covers what pgvector asked for (at 999 lists, 384
// dimensions: "memory required is 273 MB").
func TestIVFMemory(t *testing.T) {
	if got := ivfMemory(999, 384); got < 273<<20 || got > 512<<20 {
		t.Errorf("ivfMemory(999, 384) = %d MB, want 273 MB and a margin", got>>20)
	}
}

func TestPlanANN(t *testing.T) {
	hnsw := annIndex{name: "vectors_hnsw", kind: ANNHNSW}
	ivf := annIndex{name: "vectors_ivfflat_3", kind: ANNIVFFlat, lists: 5, built: ivfBuilt{Rows: 5000, NextID: 5001}}
	half := annIndex{name: "vectors_halfvec_3", kind: ANNHalfvec, lists: 5, built: ivfBuilt{Rows: 5000, NextID: 5001}}
	big := annIndex{name: "vectors_halfvec_7", kind: ANNHalfvec, lists: 400, built: ivfBuilt{Rows: 400_000, NextID: 400_001}}
	shard0 := annIndex{name: "vectors_halfvec_8_s0", kind: ANNHalfvec, lists: 300, built: ivfBuilt{Rows: 600_000, NextID: 600_001, Shard: 0, Shards: 2}}
	shard1 := annIndex{name: "vectors_halfvec_8_s1", kind: ANNHalfvec, lists: 300, built: ivfBuilt{Rows: 600_000, NextID: 600_001, Shard: 1, Shards: 2}}
	for _, c := range []struct {
		name       string
		want       string
		have       []annIndex
		rows, next int64
		bulk       bool
		plan       annPlan
	}{
		{"new ivfflat index", ANNIVFFlat, nil, 3000, 3001, false, annPlan{buildIVF: 3, lists: 3, shards: 1}},
		{"ivfflat, fewer added than it held", ANNIVFFlat, []annIndex{ivf}, 9000, 10001, false, annPlan{lists: 5, shards: 1}},
		{"ivfflat, more added than it held", ANNIVFFlat, []annIndex{ivf}, 9000, 10002, false,
			annPlan{buildIVF: 9, dropAfter: []string{"vectors_ivfflat_3"}, lists: 9, shards: 1}},
		{"ivfflat, a bulk commit that adds little", ANNIVFFlat, []annIndex{ivf}, 9000, 6000, true, annPlan{lists: 5, shards: 1}},
		{"new halfvec index", ANNHalfvec, nil, 3000, 3001, false, annPlan{buildIVF: 3, lists: 3, half: true, shards: 1}},
		{"halfvec, fewer added than it held", ANNHalfvec, []annIndex{half}, 9000, 10001, false, annPlan{lists: 5, half: true, shards: 1}},
		{"ivfflat to halfvec", ANNHalfvec, []annIndex{ivf}, 9000, 9001, false,
			annPlan{buildIVF: 9, dropAfter: []string{"vectors_ivfflat_3"}, lists: 9, half: true, shards: 1}},
		{"halfvec to ivfflat", ANNIVFFlat, []annIndex{half}, 9000, 9001, false,
			annPlan{buildIVF: 9, dropAfter: []string{"vectors_halfvec_3"}, lists: 9, shards: 1}},
		{"halfvec to hnsw", ANNHNSW, []annIndex{half}, 10, 11, false, annPlan{dropBefore: []string{"vectors_halfvec_3"}, buildHNSW: true}},
		{"hnsw to ivfflat", ANNIVFFlat, []annIndex{hnsw}, 2000, 2001, false,
			annPlan{dropBefore: []string{"vectors_hnsw"}, buildIVF: 2, lists: 2, shards: 1}},
		{"new hnsw index", ANNHNSW, nil, 10, 11, false, annPlan{buildHNSW: true}},
		{"hnsw, row by row", ANNHNSW, []annIndex{hnsw}, 10, 11, false, annPlan{}},
		{"hnsw, bulk", ANNHNSW, []annIndex{hnsw}, 10, 11, true, annPlan{dropBefore: []string{"vectors_hnsw"}, buildHNSW: true}},
		{"ivfflat to hnsw", ANNHNSW, []annIndex{ivf}, 10, 11, false, annPlan{dropBefore: []string{"vectors_ivfflat_3"}, buildHNSW: true}},
		{"two ivfflat indexes", ANNIVFFlat, []annIndex{ivf, {name: "vectors_ivfflat_9", kind: ANNIVFFlat, built: ivfBuilt{Rows: 1, NextID: 10001}}}, 9000, 10001, false,
			annPlan{dropAfter: []string{"vectors_ivfflat_9"}, lists: 5, shards: 1}},
		// From ShardRows an IVFFlat index is two partial ones of half
		// the lists each; a sharded one stays so down to half that.
		{"new halfvec index of 1M rows", ANNHalfvec, nil, 1_000_000, 1_000_001, true, annPlan{buildIVF: 500, lists: 500, half: true, shards: 2}},
		{"halfvec of 600k rows, one index", ANNHalfvec, []annIndex{big}, 600_000, 600_001, false,
			annPlan{buildIVF: 300, dropAfter: []string{"vectors_halfvec_7"}, lists: 300, half: true, shards: 2}},
		{"halfvec of 400k rows, one index", ANNHalfvec, []annIndex{big}, 400_000, 600_001, false, annPlan{lists: 400, half: true, shards: 1}},
		{"halfvec of 300k rows, two shards", ANNHalfvec, []annIndex{shard0, shard1}, 300_000, 600_001, false, annPlan{lists: 300, half: true, shards: 2}},
		{"halfvec of 200k rows, two shards", ANNHalfvec, []annIndex{shard0, shard1}, 200_000, 600_001, false,
			annPlan{buildIVF: 200, dropAfter: []string{"vectors_halfvec_8_s0", "vectors_halfvec_8_s1"}, lists: 200, half: true, shards: 1}},
		{"halfvec, one shard of two left", ANNHalfvec, []annIndex{shard1}, 600_000, 600_001, false,
			annPlan{buildIVF: 300, dropAfter: []string{"vectors_halfvec_8_s1"}, lists: 300, half: true, shards: 2}},
		{"two shards to ivfflat", ANNIVFFlat, []annIndex{shard0, shard1}, 600_000, 600_001, false,
			annPlan{buildIVF: 300, dropAfter: []string{"vectors_halfvec_8_s0", "vectors_halfvec_8_s1"}, lists: 300, shards: 2}},
		{"two shards to hnsw", ANNHNSW, []annIndex{shard0, shard1}, 600_000, 600_001, false,
			annPlan{dropBefore: []string{"vectors_halfvec_8_s0", "vectors_halfvec_8_s1"}, buildHNSW: true}},
	} {
		got := planANN(c.want, c.have, c.rows, c.next, c.bulk, ShardRows)
		if fmt.Sprint(got) != fmt.Sprint(c.plan) {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.plan)
		}
	}
}

// putMany puts files of 100 chunks until the index holds n chunks more,
// and commits.
func putMany(t *testing.T, u *Updater, rng *rand.Rand, from, n int) []doc {
	t.Helper()
	var docs []doc
	texts := make([]string, 100)
	for i := range texts {
		texts[i] = fmt.Sprintf("chunk %d", i)
	}
	for f := from; f < from+n/100; f++ {
		d := makeDoc(rng, fmt.Sprintf("f%05d.md", f), texts...)
		put(t, u, d)
		docs = append(docs, d)
	}
	commit(t, u, schema.EndOfRun)
	return docs
}

// annOf reads the vector indexes as the catalog has them.
func annOf(t *testing.T, s *Store) []annIndex {
	t.Helper()
	have, err := s.readANN(context.Background(), s.pool)
	if err != nil {
		t.Fatal(err)
	}
	return have
}

// A new index gets an IVFFlat index of halfvec sized to its rows, rebuilt
// (under a new name, its build noted) once more chunks were added than
// it held; kNN answers with the exact ranking and the full-precision
// cosines while every list is probed.
func TestIVFFlatRebuiltAsItGrows(t *testing.T) {
	s, u, rng := writer(t, 11, 12)
	docs := putMany(t, u, rng, 0, 2000)
	have := annOf(t, s)
	if len(have) != 1 || have[0].kind != ANNHalfvec || have[0].lists != 2 || have[0].built != (ivfBuilt{Rows: 2000, NextID: 2001}) {
		t.Fatalf("after 2,000 chunks: %+v", have)
	}
	if s.lists.Load() != 2 || !s.half.Load() {
		t.Errorf("the store searches %d lists (halfvec %v), want 2 of halfvec", s.lists.Load(), s.half.Load())
	}
	docs = append(docs, putMany(t, u, rng, 20, 1000)...)
	if got := annOf(t, s); len(got) != 1 || got[0].name != have[0].name {
		t.Errorf("rebuilt after adding half as many chunks as it held: %+v", got)
	}
	docs = append(docs, putMany(t, u, rng, 30, 1100)...)
	got := annOf(t, s)
	if len(got) != 1 || got[0].name == have[0].name || got[0].kind != ANNHalfvec || got[0].lists != 4 || got[0].built.Rows != 4100 {
		t.Fatalf("after 2,100 chunks added to an index built at 2,000: %+v", got)
	}
	v := s.acquire()
	defer v.Release()
	for _, d := range docs[:5] {
		q := d.vecs[:testDim]
		want, scores := exactNearest(t, v, docs, q, 10)
		res, err := v.Nearest(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		var ids []int64
		for i, m := range res {
			ids = append(ids, m.ID)
			if i > 0 && m.Score > res[i-1].Score {
				t.Errorf("results out of order: %v", res)
			}
			// A halfvec cosine would be off by about 3e-5 at 16
			// dimensions (7e-6 at 384).
			if i < len(scores) && math.Abs(float64(m.Score-scores[i])) > 1e-6 {
				t.Errorf("chunk %d scored %.6f, its full-precision cosine is %.6f", m.ID, m.Score, scores[i])
			}
		}
		if !slices.Equal(ids, want) {
			t.Errorf("kNN %v, exact %v", ids, want)
		}
	}
}

func matchIDs(res []index.Match) []int64 {
	ids := make([]int64, len(res))
	for i, m := range res {
		ids[i] = m.ID
	}
	return ids
}

// exactNearest ranks every chunk of docs by cosine with q in Go: the
// nearest k and their cosines.
func exactNearest(t *testing.T, v *View, docs []doc, q []float32, k int) ([]int64, []float32) {
	t.Helper()
	type scored struct {
		id    int64
		score float32
	}
	var all []scored
	for _, d := range docs {
		f, ok := v.File(d.entry.Path)
		if !ok {
			t.Fatalf("%s not indexed", d.entry.Path)
		}
		for i, id := range f.ChunkIDs {
			var dot float32
			for j, x := range d.vecs[i*testDim : (i+1)*testDim] {
				dot += x * q[j]
			}
			all = append(all, scored{id, dot})
		}
	}
	slices.SortFunc(all, func(a, b scored) int { return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.id, b.id)) })
	var out []int64
	var scores []float32
	for _, s := range all[:k] {
		out = append(out, s.id)
		scores = append(scores, s.score)
	}
	return out, scores
}

// The ann parameter converts the index at the writer's next commit, both
// ways; a writer without it keeps the kind the index has, and a server
// that only reads searches the new kind after a refresh.
func TestANNConverted(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	reader := open(t, dsn, "idx", testVersion)
	rng := rand.New(rand.NewPCG(13, 14))
	step := func(ann string, from int) []annIndex {
		t.Helper()
		s, err := Open(ctx, dsn+"&"+ANNParam+"="+ann, "idx", testVersion, Options{})
		if ann == "" {
			s, err = Open(ctx, dsn, "idx", testVersion, Options{})
		}
		if err != nil {
			t.Fatal(err)
		}
		defer s.Close()
		u := begin(t, s)
		defer u.Close()
		putMany(t, u, rng, from, 100)
		return annOf(t, s)
	}
	kinds := func(have []annIndex) (out []string) {
		for _, a := range have {
			out = append(out, a.kind)
		}
		return out
	}
	for i, c := range []struct{ ann, want string }{
		{"", ANNHalfvec}, {ANNHNSW, ANNHNSW}, {"", ANNHNSW}, {ANNIVFFlat, ANNIVFFlat}, {"", ANNIVFFlat},
		{ANNHalfvec, ANNHalfvec}, {ANNIVFFlat, ANNIVFFlat}, {ANNHNSW, ANNHNSW},
	} {
		if got := kinds(step(c.ann, i*10)); !slices.Equal(got, []string{c.want}) {
			t.Fatalf("step %d (ann=%q): indexes %v, want [%s]", i, c.ann, got, c.want)
		}
		if _, err := reader.Refresh(); err != nil {
			t.Fatal(err)
		}
		wantLists := int64(0)
		if isIVF(c.want) {
			wantLists = 1
		}
		if reader.lists.Load() != wantLists || reader.half.Load() != (c.want == ANNHalfvec) {
			t.Errorf("step %d: the reader searches %d lists (halfvec %v), want %d of %s", i, reader.lists.Load(), reader.half.Load(), wantLists, c.want)
		}
		v := reader.acquire()
		if v.Chunks() != (i+1)*100 {
			t.Errorf("step %d: %d chunks", i, v.Chunks())
		}
		// The reader's kNN walks the index it sees: its own top match for
		// a stored vector is that vector's chunk.
		f, _ := v.File(fmt.Sprintf("f%05d.md", i*10))
		stored, err := v.Vectors(f.ChunkIDs[:1])
		if err != nil {
			t.Fatal(err)
		}
		if res, err := v.Nearest(stored[0], 3); err != nil || len(res) != 3 || res[0].ID != f.ChunkIDs[0] {
			t.Errorf("step %d: kNN of chunk %d's own vector: %v, %v", i, f.ChunkIDs[0], res, err)
		}
		v.Release()
	}
	// A run that changes no file converts too (reindex with ann=… on an
	// unchanged folder).
	s, err := Open(ctx, dsn+"&"+ANNParam+"="+ANNHalfvec, "idx", testVersion, Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := begin(t, s)
	commit(t, u, schema.EndOfRun)
	u.Close()
	if got := kinds(annOf(t, s)); !slices.Equal(got, []string{ANNHalfvec}) {
		t.Errorf("after a run with no change and ann=halfvec: %v", got)
	}
	// A stray index of another kind beside the wanted one goes at the
	// next such run.
	if _, err := s.pool.Exec(ctx, `CREATE INDEX stray ON "idx".vectors USING ivfflat (embedding vector_cosine_ops) WITH (lists = 1)`); err != nil {
		t.Fatal(err)
	}
	u = begin(t, s)
	commit(t, u, schema.EndOfRun)
	u.Close()
	if got := annOf(t, s); len(got) != 1 || got[0].kind != ANNHalfvec || got[0].name == "stray" {
		t.Errorf("after a run with no change, ann=halfvec and a stray IVFFlat index: %+v", got)
	}
	s.Close()
	if _, err := Open(ctx, dsn+"&"+ANNParam+"=flat", "idx", testVersion, Options{}); err == nil {
		t.Error("ann=flat was accepted")
	}
	var _ index.Backend = reader
}

// The halfvec kNN statement orders by the index's own expression, so the
// planner walks the index (a mismatch would scan every row, silently).
func TestHalfvecSearchWalksItsIndex(t *testing.T) {
	s, u, rng := writer(t, 15, 16)
	putMany(t, u, rng, 0, 2000)
	have := annOf(t, s)
	if len(have) != 1 || have[0].kind != ANNHalfvec {
		t.Fatalf("indexes %+v, want one %s", have, ANNHalfvec)
	}
	if plan := knnPlan(t, s, s.q.nearestHalf, unit(rng, testDim)); !strings.Contains(plan, "Index Scan using "+have[0].name) {
		t.Errorf("the halfvec kNN statement does not walk %s:\n%s", have[0].name, plan)
	}
}

// knnPlan is the plan of the kNN statement sql for query q, sequential
// scans off (so an index that matches is taken even on a small table).
func knnPlan(t *testing.T, s *Store, sql string, q []float32) string {
	t.Helper()
	ctx := context.Background()
	tx, err := s.pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback(ctx)
	if _, err := tx.Exec(ctx, "SET LOCAL enable_seqscan = off"); err != nil {
		t.Fatal(err)
	}
	rows, _ := tx.Query(ctx, "EXPLAIN "+sql, q, int64(1<<40), int64(1<<40), 20)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return strings.Join(lines, "\n")
}

// From shardRows live chunks the IVFFlat index is one partial index a
// shard, each kNN statement walks its own, and kNN still answers with the
// exact ranking while every list is probed; a writer with the default
// shardRows and a run that changes nothing turns it back into one index,
// and a reader searches whichever it finds.
func TestIVFFlatInShards(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	s, err := Open(ctx, dsn, "idx", testVersion, Options{ShardRows: 3000})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	reader := open(t, dsn, "idx", testVersion)
	rng := rand.New(rand.NewPCG(17, 18))
	u := begin(t, s)
	docs := putMany(t, u, rng, 0, 4000)
	u.Close()
	have := annOf(t, s)
	names := func(have []annIndex) (out []string) {
		for _, a := range have {
			out = append(out, a.name)
		}
		return out
	}
	if len(have) != 2 || have[0].kind != ANNHalfvec || have[0].lists != 2 || have[1].lists != 2 ||
		have[0].built != (ivfBuilt{Rows: 4000, NextID: 4001, Shard: 0, Shards: 2}) || have[1].built.Shard != 1 {
		t.Fatalf("after 4,000 chunks with shardRows 3,000: %+v", have)
	}
	if s.shards.Load() != 2 || s.lists.Load() != 2 {
		t.Errorf("the writer searches %d shards of %d lists, want 2 of 2", s.shards.Load(), s.lists.Load())
	}
	if !strings.Contains(describeANN(have, 0), "2 shards") {
		t.Errorf("status says %q", describeANN(have, 0))
	}
	// Each shard's statement walks that shard's partial index.
	for i, sql := range s.q.nearestShard[1] {
		if plan := knnPlan(t, s, sql, unit(rng, testDim)); !strings.Contains(plan, "Index Scan using "+have[i].name) {
			t.Errorf("shard %d's kNN statement does not walk %s:\n%s", i, have[i].name, plan)
		}
	}
	check := func(st *Store, when string) {
		t.Helper()
		v := st.acquire()
		defer v.Release()
		for _, d := range docs[:5] {
			want, _ := exactNearest(t, v, docs, d.vecs[:testDim], 10)
			res, err := v.Nearest(d.vecs[:testDim], 10)
			if ids := matchIDs(res); err != nil || !slices.Equal(ids, want) {
				t.Errorf("%s: kNN %v (%v), exact %v", when, ids, err, want)
			}
		}
	}
	check(s, "the writer, two shards")
	if _, err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	if reader.shards.Load() != 2 {
		t.Errorf("the reader searches %d shards, want 2", reader.shards.Load())
	}
	check(reader, "a reader, two shards")
	// 4,000 rows are fewer than half the default's: one index again.
	s2 := open(t, dsn, "idx", testVersion)
	u = begin(t, s2)
	commit(t, u, schema.EndOfRun)
	u.Close()
	if got := annOf(t, s2); len(got) != 1 || got[0].shards() != 1 || got[0].lists != 4 || slices.Contains(names(have), got[0].name) {
		t.Fatalf("after a run with no change and the default shardRows: %+v", got)
	}
	if _, err := reader.Refresh(); err != nil {
		t.Fatal(err)
	}
	if reader.shards.Load() != 1 {
		t.Errorf("the reader searches %d shards, want 1", reader.shards.Load())
	}
	check(reader, "a reader, one index")
	// And a run that changes nothing with shardRows 3,000 shards it.
	u = begin(t, s)
	if !u.dirty {
		t.Error("a run on an index to shard is not dirty")
	}
	commit(t, u, schema.EndOfRun)
	u.Close()
	if got := annOf(t, s); len(got) != 2 || got[0].shards() != 2 {
		t.Fatalf("after a run with no change and shardRows 3,000: %+v", got)
	}
	// A run after it has nothing to do.
	u = begin(t, s)
	if u.dirty {
		t.Error("a run on a sharded index that needs nothing is dirty")
	}
	u.Close()
}
