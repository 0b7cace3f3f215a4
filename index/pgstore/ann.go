package pgstore

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// annIndex is a vector index on the vectors table as the catalog has it.
type annIndex struct {
	name  string // relation name, in the index's schema
	kind  string // ANNHNSW, ANNIVFFlat or ANNHalfvec
	lists int    // IVFFlat's lists
	bytes int64  // its size on disk
	m     int    // HNSW's links per node (0: pgvector's default)
	efc   int    // HNSW's ef_construction (0: pgvector's default)
	// The live rows and the next chunk id when an IVFFlat index was
	// built (its comment): chunks added since then are counted as
	// nextID - built.NextID.
	built ivfBuilt
}

// ivfBuilt is the comment an IVFFlat build leaves on its index.
type ivfBuilt struct {
	Rows   int64 `json:"rows"`
	NextID int64 `json:"next_id"`
	// A sharded build is Shards partial indexes, one a shard (chunk ids
	// with id % Shards = Shard), searched at once; unsharded: 0 and 0.
	Shard  int `json:"shard,omitempty"`
	Shards int `json:"shards,omitempty"`
}

// shards is the number of partial indexes a's build made (1: unsharded).
func (a annIndex) shards() int { return max(1, a.built.Shards) }

// setName names the build a belongs to: its name without the shard's
// suffix.
func (a annIndex) setName() string {
	if a.shards() == 1 {
		return a.name
	}
	return strings.TrimSuffix(a.name, shardSuffix(a.built.Shard))
}

func shardSuffix(shard int) string { return "_s" + strconv.Itoa(shard) }

// members are the indexes of have in a's build.
func members(have []annIndex, a annIndex) []annIndex {
	var out []annIndex
	for _, b := range have {
		if b.kind == a.kind && b.setName() == a.setName() {
			out = append(out, b)
		}
	}
	return out
}

// complete says whether every shard of a's build is in have.
func complete(have []annIndex, a annIndex) bool {
	return len(members(have, a)) == a.shards()
}

// shardsFor is the number of shards an IVFFlat index of rows live chunks
// is built in: ivfShards from shardRows rows (where each shard's probes
// are still 4 % of its lists, so a query scans as many rows as one index
// would, spread over the cores), and a sharded index keeps its shards
// down to half that (no rebuild back and forth around shardRows).
func shardsFor(rows, shardRows int64, have *annIndex) int {
	if rows >= shardRows || (have != nil && have.shards() > 1 && rows >= shardRows/2) {
		return ivfShards
	}
	return 1
}

// queryer is what readANN needs of a pool, connection or transaction.
type queryer interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
}

// readANN lists the vector indexes on the vectors table.
func (s *Store) readANN(ctx context.Context, q queryer) ([]annIndex, error) {
	return readANN(ctx, q, s.q.vectorsTable)
}

// readANN lists the vector indexes on table.
func readANN(ctx context.Context, q queryer, table pgx.Identifier) ([]annIndex, error) {
	// An IVFFlat index on the halfvec expression is ANNHalfvec.
	rows, _ := q.Query(ctx, `SELECT c.relname,
			CASE WHEN a.amname = 'ivfflat' AND pg_get_indexdef(c.oid) LIKE '%halfvec%' THEN 'halfvec' ELSE a.amname END,
			coalesce(array_to_string(c.reloptions, ','), ''),
			coalesce(obj_description(c.oid, 'pg_class'), ''),
			pg_relation_size(c.oid)
		FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am a ON a.oid = c.relam
		WHERE i.indrelid = to_regclass($1) AND a.amname IN ('hnsw', 'ivfflat')
		ORDER BY c.relname`, table.Sanitize())
	var out []annIndex
	var a annIndex
	var opts, comment string
	_, err := pgx.ForEachRow(rows, []any{&a.name, &a.kind, &opts, &comment, &a.bytes}, func() error {
		a.lists, a.m, a.efc, a.built = 0, 0, 0, ivfBuilt{}
		for _, o := range strings.Split(opts, ",") {
			k, v, _ := strings.Cut(o, "=")
			n, _ := strconv.Atoi(v)
			switch k {
			case "lists":
				a.lists = n
			case "m":
				a.m = n
			case "ef_construction":
				a.efc = n
			}
		}
		if comment != "" {
			_ = json.Unmarshal([]byte(comment), &a.built) // an unreadable one counts as built at 0
		}
		out = append(out, a)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("postgres: read the vector index: %w", err)
	}
	return out, nil
}

// wantANN is the kind the writer keeps: Options.ANN, else the kind the
// index has, else DefaultANN.
func (s *Store) wantANN(have []annIndex) string {
	switch {
	case s.opts.ANN != "":
		return s.opts.ANN
	case len(have) > 0:
		return have[len(have)-1].kind
	}
	return DefaultANN
}

// isIVF says whether kind is an IVFFlat index (of full or half vectors).
func isIVF(kind string) bool { return kind == ANNIVFFlat || kind == ANNHalfvec }

// searchIndex is what a kNN query needs to know of the index: IVFFlat's
// lists a shard (0 for HNSW or none), whether it is ANNHalfvec, and its
// shards.
func searchIndex(have []annIndex) (lists int, half bool, shards int) {
	for _, a := range have {
		if isIVF(a.kind) && complete(have, a) {
			return a.lists, a.kind == ANNHalfvec, a.shards()
		}
	}
	return 0, false, 1
}

// annPlan is what a commit does to the vector index.
type annPlan struct {
	dropBefore []string // before the rows are copied (no slow inserts)
	buildHNSW  bool     // after the copy
	buildIVF   int      // lists of an IVFFlat index built after the copy (0: none)
	dropAfter  []string // after the new index is built
	lists      int      // the IVFFlat lists a shard searched after the commit (0: HNSW)
	half       bool     // the IVFFlat index (built or kept) is ANNHalfvec
	shards     int      // the IVFFlat index's shards (built or kept; 0: HNSW)
}

// changes says whether the plan builds or drops an index.
func (p annPlan) changes() bool {
	return len(p.dropBefore) > 0 || p.buildHNSW || p.buildIVF > 0 || len(p.dropAfter) > 0
}

// planANN decides a commit's work on the vector index: have is the index
// as it stands, rows the live chunks after the commit, nextID the next
// chunk id after it, bulk whether the commit at least doubles the index,
// shardRows the rows from which IVFFlat is built in shards.
func planANN(want string, have []annIndex, rows, nextID int64, bulk bool, shardRows int64) annPlan {
	var p annPlan
	var same *annIndex // the first complete build of the wanted kind
	for i := range have {
		if have[i].kind == want && complete(have, have[i]) {
			same = &have[i]
			break
		}
	}
	for i := range have {
		if same != nil && have[i].kind == want && have[i].setName() == same.setName() {
			continue
		}
		// Another kind (or a second of the same): HNSW goes before the
		// copy, an IVFFlat index of either precision (cheap to insert
		// into, and searchable) once the new one is there.
		if have[i].kind == ANNHNSW {
			p.dropBefore = append(p.dropBefore, have[i].name)
		} else {
			p.dropAfter = append(p.dropAfter, have[i].name)
		}
	}
	switch want {
	case ANNHNSW:
		if same != nil && bulk {
			p.dropBefore = append(p.dropBefore, same.name)
			same = nil
		}
		if same == nil {
			p.buildHNSW = true
			// The graph is built after the copy; an IVFFlat index
			// dropped after it would cost the copy its inserts.
			p.dropBefore, p.dropAfter = append(p.dropBefore, p.dropAfter...), nil
		}
	case ANNIVFFlat, ANNHalfvec:
		p.half = want == ANNHalfvec
		p.shards = shardsFor(rows, shardRows, same)
		added := nextID - 1
		if same != nil {
			added = nextID - same.built.NextID
		}
		if same == nil || added > same.built.Rows || p.shards != same.shards() {
			p.buildIVF = listsFor(rows / int64(p.shards))
			if same != nil {
				for _, m := range members(have, *same) {
					p.dropAfter = append(p.dropAfter, m.name)
				}
			}
		}
		p.lists = p.buildIVF
		if p.lists == 0 {
			p.lists = same.lists
		}
	}
	slices.Sort(p.dropBefore)
	slices.Sort(p.dropAfter)
	return p
}

// ivfMemory is the maintenance_work_mem an IVFFlat build of lists lists
// asks for. pgvector samples 50 rows a list and runs Elkan's k-means on
// them, refusing to build when its arrays do not fit: the samples, a
// lower bound per sample and centre (4 bytes), the centre-to-centre
// distances and the centres. At 999 lists and 384 dimensions the server
// asked 273 MB; this adds a quarter and 64 MB.
func ivfMemory(lists, dim int) int64 {
	l, samples, item := int64(lists), int64(lists)*50, int64(4*dim+8)
	need := samples*item + samples*l*4 + l*l*4 + 2*l*item
	return need*5/4 + 64<<20
}

// buildIVFFlat builds an IVFFlat index of lists lists over the vectors
// table in tx, of their halfvec casts when half, under a name of
// generation gen (the old one stays until it is dropped, so readers keep
// an index), noting the live rows and the next chunk id in its comment.
// In shards > 1 it is one partial index a shard, each of lists lists
// (the predicate is the one the shard's kNN statement has).
func (u *Updater) buildIVFFlat(ctx context.Context, tx pgx.Tx, lists int, half bool, shards int, gen int64) error {
	s := u.s
	s.log.Info("postgres: building the IVFFlat index", "lists", lists, "shards", shards, "rows", u.live, "halfvec", half)
	if err := raiseBuildMemory(ctx, tx, min(ivfMemory(lists, s.version.Dim), s.opts.BuildMemory)); err != nil {
		return err
	}
	prefix, column := "vectors_ivfflat_", "embedding vector_cosine_ops"
	if half {
		// The same expression as nearestHalf's ORDER BY.
		prefix, column = "vectors_halfvec_", fmt.Sprintf("(embedding::halfvec(%d)) halfvec_cosine_ops", s.version.Dim)
	}
	for shard := range shards {
		name, where, built := prefix+strconv.FormatInt(gen, 10), "", ivfBuilt{Rows: int64(u.live), NextID: u.nextID}
		if shards > 1 {
			name += shardSuffix(shard)
			where = " WHERE " + shardPredicate("id", shard, shards)
			built.Shard, built.Shards = shard, shards
		}
		if err := createIndex(ctx, tx, fmt.Sprintf("CREATE INDEX %s ON %s USING ivfflat (%s) WITH (lists = %d)%s",
			pgx.Identifier{name}.Sanitize(), s.q.vectorsTable.Sanitize(), column, lists, where), "IVFFlat"); err != nil {
			return err
		}
		note, _ := json.Marshal(built)
		q := pgx.Identifier{s.name, name}.Sanitize()
		if _, err := tx.Exec(ctx, fmt.Sprintf("COMMENT ON INDEX %s IS %s", q, quoteLiteral(string(note)))); err != nil {
			return err
		}
	}
	return nil
}

// quoteLiteral quotes s as an SQL string literal (COMMENT takes no
// parameters).
func quoteLiteral(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }

// dropIndexes drops the named indexes of the index's schema.
func (u *Updater) dropIndexes(ctx context.Context, tx pgx.Tx, names []string) error {
	for _, n := range names {
		if _, err := tx.Exec(ctx, "DROP INDEX IF EXISTS "+pgx.Identifier{u.s.name, n}.Sanitize()); err != nil {
			return err
		}
	}
	return nil
}

// bufferNote warns, for status, when the vector index searches walk
// (have's last build, every shard) is larger than the server's shared_buffers: every search
// then copies the pages it scans from the OS cache into the buffers
// again. At 1M chunks (an 800 MB halfvec index) a 2 GB shared_buffers
// made searches 0.89 times as long as the default 128 MB (BENCHMARKS.md).
func bufferNote(have []annIndex, sharedBuffers int64) string {
	size, over := overBuffers(have, sharedBuffers)
	if !over {
		return ""
	}
	return fmt.Sprintf("; larger (%s) than the server's shared_buffers (%s), so each search copies what it scans from the OS cache: set shared_buffers above %s for faster searches",
		bytesize.Format(size), bytesize.Format(sharedBuffers), bytesize.Format(size))
}

// overBuffers is the size of the vector index searches walk (have's
// last build, every shard), and whether it is larger than sharedBuffers.
func overBuffers(have []annIndex, sharedBuffers int64) (int64, bool) {
	if len(have) == 0 || sharedBuffers <= 0 {
		return 0, false
	}
	var size int64
	for _, m := range members(have, have[len(have)-1]) {
		size += m.bytes
	}
	return size, size > sharedBuffers
}

// sharedBuffersSQL reads the server's shared_buffers in bytes.
const sharedBuffersSQL = "SELECT pg_size_bytes(current_setting('shared_buffers'))"

// describeANN says for people how kNN searches of an index with have
// find neighbours, searched with ef_search ef on HNSW.
func describeANN(have []annIndex, ef int) string {
	if len(have) == 0 {
		return "none yet: every vector compared (exact)"
	}
	a := have[len(have)-1]
	if isIVF(a.kind) {
		what := "IVFFlat"
		if a.kind == ANNHalfvec {
			what = "IVFFlat over halfvec"
		}
		if n := a.shards(); n > 1 {
			return fmt.Sprintf("%s in %d shards searched at once (lists %d, probes %d a query, each)", what, n, a.lists, probesFor(max(a.lists, 1)))
		}
		return fmt.Sprintf("%s (lists %d, probes %d a query)", what, a.lists, probesFor(max(a.lists, 1)))
	}
	return fmt.Sprintf("HNSW, m %d, ef_construction %d, ef_search %d", cmp.Or(a.m, 16), cmp.Or(a.efc, 64), min(ef, MaxEfSearch))
}
