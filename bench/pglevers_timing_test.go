package bench

import (
	"cmp"
	"context"
	"errors"
	"flag"
	"fmt"
	mbits "math/bits"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// BenchmarkPgLevers tries pgvector's levers by hand on a database that
// BenchmarkPgstore kept (-pgstore.dir): SQL written here, not pgstore's,
// so an index or a statement can be measured before pgstore has it. It
// runs -pglevers.setup (index builds), then each lever over the
// benchmark's queries (a warm-up round, then a timed one) with the kNN
// statement's filters, and logs p50/p95 and recall@10 against the exact
// top 10, for the 40 model-embedded queries and the 160 synthetic ones
// apart, with the one-minute load.
//
// A lever is kind:pP:kK[:noindex], comma-separated: the nearest K by the
// kind's order through an IVFFlat index probed P lists, re-scored by the
// full vectors to 10. Kinds: vector (the full vectors), halfvec
// (embedding::halfvec), halfvecip (the same by inner product: an index of
// halfvec_ip_ops, built by -pglevers.setup), bq
// (binary_quantize(embedding)::bit, Hamming),
// bqc (the same of the embedding minus the table's mean, written $MEAN in
// -pglevers.setup), halfvec2 (halfvec on two shards, ids even and odd,
// searched at once on two connections: partial indexes WHERE id % 2 = 0
// and = 1). noindex turns index scans off (the order's exact ranking).
// A lever do=SQL|SQL runs those statements in its place.
var (
	lvDir     = flag.String("pglevers.dir", "", "a folder BenchmarkPgstore kept with -pgstore.dir")
	lvSize    = flag.String("pglevers.size", "1M", "the size of the kept run to search")
	lvSetup   = flag.String("pglevers.setup", "", "statements run first, separated by semicolons ($MEAN: the table's mean vector)")
	lvLevers  = flag.String("pglevers.run", "", "the levers, comma-separated (see BenchmarkPgLevers)")
	lvQueries = flag.Int("pglevers.queries", 200, "how many of the benchmark's queries (the 40 real ones first)")
	lvHamming = flag.String("pglevers.hamming", "", "pool sizes: recall@10 of the exact Hamming nearest N re-scored, computed here (the ceiling of any index of sign bits)")
)

// leverFilter is pgstore's kNN filter (rows of later commits, deleted
// chunks) as the kept benchmark index's schema has it.
const leverFilter = `v.id < $2 AND NOT EXISTS (SELECT 1 FROM bench.dead d WHERE d.id = v.id AND d.generation <= 1000000)`

func BenchmarkPgLevers(b *testing.B) {
	if *lvDir == "" {
		b.Skip("needs -pglevers.dir")
	}
	ctx := context.Background()
	srv, err := pgtest.StartKept(filepath.Join(*lvDir, "postgres"))
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	conns := make([]*pgx.Conn, 2)
	for i := range conns {
		if conns[i], err = pgx.Connect(ctx, srv.DSN("bench_"+strings.ToLower(*lvSize))); err != nil {
			b.Fatal(err)
		}
		defer conns[i].Close(ctx)
	}
	mean := ""
	for _, s := range strings.Split(*lvSetup, ";") {
		if strings.Contains(s, "$MEAN") && mean == "" {
			if err := conns[0].QueryRow(ctx, "SELECT quote_literal(avg(embedding)::text) FROM bench.vectors").Scan(&mean); err != nil {
				b.Fatal(err)
			}
		}
		leverExec(b, conns[:1], strings.ReplaceAll(s, "$MEAN", mean))
	}
	if *lvLevers == "" {
		return
	}
	n := parseSize(*lvSize)
	qv := pgQueries(b)
	vecs := syntheticVectors(n, baseVectors(b), uint64(n)+7)
	want := make([][]int64, min(*lvQueries, len(qv)/embed.Dim))
	for i := range want {
		for _, id := range exactTop(vecs, qv[i*embed.Dim:(i+1)*embed.Dim], 10) {
			want[i] = append(want[i], int64(id)+1)
		}
	}
	for _, p := range strings.Split(*lvHamming, ",") {
		if pool, err := strconv.Atoi(p); err == nil {
			hammingCeiling(b, vecs, qv, want, pool)
		}
	}
	vecs = nil
	for _, spec := range strings.Split(*lvLevers, ",") {
		if sqls, ok := strings.CutPrefix(spec, "do="); ok {
			for _, s := range strings.Split(sqls, "|") {
				leverExec(b, conns[:1], s)
			}
			continue
		}
		sql, shards, sets := leverSQL(b, spec, mean)
		for _, s := range sets {
			leverExec(b, conns, s)
		}
		measureLever(b, spec, conns[:shards], sql, qv, want, n)
	}
}

// hammingCeiling logs the recall@10 of the nearest pool vectors by the
// Hamming distance of their sign bits (binary_quantize), re-scored
// exactly: what any bit index returns at best with that pool.
func hammingCeiling(b *testing.B, vecs, qv []float32, want [][]int64, pool int) {
	const words = embed.Dim / 64
	bits := func(v []float32) (w [words]uint64) {
		for j, x := range v {
			if x > 0 {
				w[j/64] |= 1 << (j % 64)
			}
		}
		return w
	}
	n := len(vecs) / embed.Dim
	codes := make([][words]uint64, n)
	for i := range codes {
		codes[i] = bits(vecs[i*embed.Dim : (i+1)*embed.Dim])
	}
	var hits [2]int
	var total [2]int
	for qi := range want {
		q := qv[qi*embed.Dim : (qi+1)*embed.Dim]
		qc := bits(q)
		type cand struct{ id, dist int }
		all := make([]cand, n)
		for i, c := range codes {
			d := 0
			for w := range words {
				d += mbits.OnesCount64(c[w] ^ qc[w])
			}
			all[i] = cand{i, d}
		}
		slices.SortFunc(all, func(a, b cand) int { return cmp.Compare(a.dist, b.dist) })
		sub := make([]float32, 0, pool*embed.Dim)
		for _, c := range all[:pool] {
			sub = append(sub, vecs[c.id*embed.Dim:(c.id+1)*embed.Dim]...)
		}
		set := min(qi/len(queries), 1)
		for _, j := range exactTop(sub, q, 10) {
			if slices.Contains(want[qi], int64(all[j].id)+1) {
				hits[set]++
			}
		}
		total[set] += len(want[qi])
	}
	leverLog("exact Hamming nearest %d re-scored: recall@10 %.4f (real %.4f, synthetic %.4f)", pool,
		float64(hits[0]+hits[1])/float64(total[0]+total[1]), float64(hits[0])/float64(max(total[0], 1)), float64(hits[1])/float64(max(total[1], 1)))
}

// leverExec runs one statement on each connection, logging its time.
func leverExec(b *testing.B, conns []*pgx.Conn, sql string) {
	if strings.TrimSpace(sql) == "" {
		return
	}
	start := time.Now()
	for _, c := range conns {
		if _, err := c.Exec(context.Background(), sql); err != nil {
			b.Fatalf("%s: %v", sql, err)
		}
	}
	if d := time.Since(start); d > time.Second {
		leverLog("%.1f s (load %s): %s", d.Seconds(), load1(), sql)
	}
}

// leverSQL is a lever's statement ($1 the query, $2 the next id, $3 the
// shard), the connections it runs on, and its settings.
func leverSQL(b *testing.B, spec, mean string) (sql string, shards int, sets []string) {
	f := strings.Split(spec, ":")
	if len(f) < 3 {
		b.Fatalf("lever %q: want kind:pP:kK", spec)
	}
	probes, err1 := strconv.Atoi(strings.TrimPrefix(f[1], "p"))
	pool, err2 := strconv.Atoi(strings.TrimPrefix(f[2], "k"))
	if err := errors.Join(err1, err2); err != nil {
		b.Fatalf("lever %q: %v", spec, err)
	}
	var order string
	switch f[0] {
	case "vector":
		order = `v.embedding <=> $1::vector`
	case "halfvec", "halfvec2":
		order = `v.embedding::halfvec(384) <=> $1::vector::halfvec(384)`
	case "halfvecip":
		// Unit vectors: the negative inner product ranks as the cosine
		// distance does, without the two norms (an index of halfvec_ip_ops).
		order = `v.embedding::halfvec(384) <#> $1::vector::halfvec(384)`
	case "bq":
		order = `binary_quantize(v.embedding)::bit(384) <~> binary_quantize($1::vector)`
	case "bqc":
		order = fmt.Sprintf(`binary_quantize(v.embedding - %s::vector)::bit(384) <~> binary_quantize($1::vector - %[1]s::vector)`, mean)
	default:
		b.Fatalf("lever %q: no kind %s", spec, f[0])
	}
	shard, shards := "", 1
	if f[0] == "halfvec2" {
		shard, shards = "v.id % 2 = $3 AND ", 2
	}
	sql = fmt.Sprintf(`SELECT id, d FROM (SELECT v.id, v.embedding <=> $1::vector AS d FROM bench.vectors v
		WHERE %s%s ORDER BY %s LIMIT %d) c ORDER BY d LIMIT 10`, shard, leverFilter, order, pool)
	sets = []string{"SET plan_cache_mode = force_custom_plan", "RESET enable_indexscan", "SET ivfflat.probes = " + strconv.Itoa(probes)}
	if slices.Contains(f[3:], "noindex") {
		sets = append(sets, "SET enable_indexscan = off")
	}
	return sql, shards, sets
}

// measureLever runs sql for every query (warm-up round, then the timed
// one), on each shard's connection at once, and logs the figures and the
// scans of the first query's plan.
func measureLever(b *testing.B, spec string, conns []*pgx.Conn, sql string, qv []float32, want [][]int64, n int) {
	var times []time.Duration
	var hits [2]int // real queries, synthetic ones
	var total [2]int
	for round := range 2 {
		for i := range want {
			q := vecText(qv[i*embed.Dim : (i+1)*embed.Dim])
			start := time.Now()
			got, err := searchShards(conns, sql, q, int64(n)*2)
			if err != nil {
				b.Fatalf("%s: %v", spec, err)
			}
			if round == 0 {
				continue
			}
			times = append(times, time.Since(start))
			set := 0
			if i >= len(queries) {
				set = 1
			}
			for _, id := range got {
				if slices.Contains(want[i], originalID(id, n)) {
					hits[set]++
				}
			}
			total[set] += len(want[i])
		}
	}
	rows, _ := conns[0].Query(context.Background(), "EXPLAIN "+sql, explainArgs(sql, vecText(qv[:embed.Dim]), int64(n)*2)...)
	plan, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		b.Fatalf("%s: %v", spec, err)
	}
	var scans []string
	for _, l := range plan {
		if l = strings.TrimLeft(l, " ->"); strings.Contains(l, " Scan ") {
			scans = append(scans, strings.Split(l, "  (")[0])
		}
	}
	ratio := func(h, t int) float64 { return float64(h) / float64(max(t, 1)) }
	leverLog("%-22s p50 %7.2f ms p95 %7.2f ms recall@10 %.4f (real %.4f, synthetic %.4f) load %s [%s]",
		spec, percentile(times, 0.5), percentile(times, 0.95), ratio(hits[0]+hits[1], total[0]+total[1]),
		ratio(hits[0], total[0]), ratio(hits[1], total[1]), load1(), strings.Join(scans, "; "))
}

// explainArgs are sql's parameters for shard 0.
func explainArgs(sql string, q string, next int64) []any {
	if strings.Contains(sql, "$3") {
		return []any{q, next, 0}
	}
	return []any{q, next}
}

type leverHit struct {
	ID       int64
	Distance float64
}

// searchShards runs sql on every connection at once (connection i with
// $3 = i when sql has it) and merges the nearest 10 ids.
func searchShards(conns []*pgx.Conn, sql, q string, next int64) ([]int64, error) {
	res := make([][]leverHit, len(conns))
	errs := make([]error, len(conns))
	var wg sync.WaitGroup
	for i, c := range conns {
		args := explainArgs(sql, q, next)
		if len(args) == 3 {
			args[2] = i
		}
		wg.Go(func() {
			rows, _ := c.Query(context.Background(), sql, args...)
			res[i], errs[i] = pgx.CollectRows(rows, pgx.RowToStructByPos[leverHit])
		})
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	all := slices.Concat(res...)
	slices.SortFunc(all, func(a, b leverHit) int { return cmp.Compare(a.Distance, b.Distance) })
	ids := make([]int64, 0, 10)
	for _, h := range all[:min(10, len(all))] {
		ids = append(ids, h.ID)
	}
	return ids, nil
}

// leverLog prints a figure at once (a benchmark's own log is cut to
// ten lines and held until it ends).
func leverLog(format string, args ...any) {
	fmt.Fprintf(os.Stderr, time.Now().Format("15:04:05 ")+format+"\n", args...)
}

// load1 is the one-minute load average, logged next to each figure.
func load1() string {
	raw, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return "?"
	}
	return strings.Fields(string(raw))[0]
}

// vecText is a vector's pgvector text form.
func vecText(q []float32) string {
	buf := []byte{'['}
	for i, x := range q {
		if i > 0 {
			buf = append(buf, ',')
		}
		buf = strconv.AppendFloat(buf, float64(x), 'g', -1, 32)
	}
	return string(append(buf, ']'))
}
