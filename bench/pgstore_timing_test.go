package bench

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/index/pgstore"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

var (
	pgSizes  = flag.String("pgstore.sizes", "100k", "index sizes for the Postgres backend benchmark")
	pgANN    = flag.String("pgstore.ann", pgstore.DefaultANN, "the Postgres vector indexes, comma-separated: halfvec, ivfflat or hnsw; the first is built by the ingest, each later one by converting the index (a commit with no change, timed as convert-s), then searched")
	pgEfs    = flag.String("pgstore.ef", "100,200,400,800,exact", "hnsw.ef_search values the Postgres searches run with on HNSW (exact: no index)")
	pgShard  = flag.Int64("pgstore.shardrows", 0, "live chunks from which IVFFlat is built in shards (0: pgstore's ShardRows; above the size: one index)")
	pgProbes = flag.String("pgstore.probes", "auto,exact", "ivfflat.probes values the Postgres searches run with on IVFFlat (auto: pgstore's for the index's lists; exact: no index)")
	pgM      = flag.Int("pgstore.m", 0, "HNSW m of the Postgres index (0: pgstore.DefaultHNSW)")
	pgEfc    = flag.Int("pgstore.efc", 0, "HNSW ef_construction of the Postgres index (0: pgstore.DefaultHNSW)")
	pgConf   = flag.String("pgstore.conf", "", "PostgreSQL settings for the run's server, name=value separated by commas (shared_buffers=2GB); needs -pgstore.dir")
	pgDir    = flag.String("pgstore.dir", "", "keep the PostgreSQL server's folder and the local indexes here; a size this folder already holds a finished run of is only searched (re-measure searches on an idle machine); one folder per first -pgstore.ann kind")
)

// pgChunksPerFile: the ingest puts files of 100 chunks; pgIncrFiles is
// the increment committed at once into the full index (1 % of 100k).
const (
	pgChunksPerFile = 100
	pgIncrFiles     = 10
)

// BenchmarkPgstore compares the Postgres backend (index/pgstore on a real
// PostgreSQL 18 + pgvector 0.8 server started for the run) with the local
// folder on the same synthetic vectors (BenchmarkSearch's: scattered
// around 128 real chunk embeddings): ingest through the seam's Updater
// (PutFile of every file, one commit: a folder's first run; on Postgres
// it builds the HNSW graph after the copy), the increment of another 1 %
// committed at once into the full index (incr-chunks/s: rows inserted
// into the graph one by one), kNN p50/p95 and recall@10 against an exact
// brute-force top 10 over 200 queries (the 40 real ones, embedded by the
// model, and 160 synthetic), and the commit of a one-file change (100
// chunks) into the full index. Postgres runs each ef_search of
// -pgstore.ef (HNSW) or probes of -pgstore.probes (IVFFlat), for each
// kind of -pgstore.ann in turn (the later ones converted from the first);
// the searches call View.Nearest (the backend alone, no engine, no
// embedding).
func BenchmarkPgstore(b *testing.B) {
	srv, err := startBenchServer()
	if err != nil {
		b.Fatal(err)
	}
	defer srv.Stop()
	qv := pgQueries(b)
	anns := strings.Split(*pgANN, ",")
	settings := map[string][]searchSetting{}
	for _, ann := range anns {
		if settings[ann], err = searchSettings(ann); err != nil {
			b.Fatal(err)
		}
	}
	ctx := context.Background()
	for _, size := range strings.Split(*pgSizes, ",") {
		n := parseSize(size)
		vecs := syntheticVectors(n, baseVectors(b), uint64(n)+7)
		want := make([][]int64, len(qv)/embed.Dim)
		for i := range want {
			for _, id := range exactTop(vecs, qv[i*embed.Dim:(i+1)*embed.Dim], 10) {
				want[i] = append(want[i], int64(id)+1) // chunk ids start at 1
			}
		}
		kept := *pgDir != "" && built(size)
		b.Run("chunks="+size+"/backend=local", func(b *testing.B) {
			dir, done, err := localDir(size)
			if err != nil {
				b.Fatal(err)
			}
			defer done()
			s, err := localstore.Open(dir, benchVersion, index.Options{})
			if err != nil {
				b.Fatal(err)
			}
			defer s.Close()
			be := localstore.Local(s)
			if kept {
				measureSearch(b, be, qv, want, n)
				return
			}
			w := ingest(b, be, vecs)
			defer w.Close()
			measureSearch(b, be, qv, want, n)
			oneFileCommits(b, w, vecs)
		})
		db, err := benchDatabase(ctx, srv, size, kept)
		if err != nil {
			b.Fatal(err)
		}
		opts := pgstore.Options{ANN: anns[0], HNSW: pgstore.HNSW{M: *pgM, EfConstruction: *pgEfc}, ShardRows: *pgShard}
		s, err := pgstore.Open(ctx, srv.DSN(db), "bench", benchVersion, opts)
		if err != nil {
			b.Fatal(err)
		}
		for i, ann := range anns {
			name := "chunks=" + size + "/backend=postgres/" + ann
			if i > 0 || kept {
				// Another kind, or a kept index that may hold another:
				// converted as a reindex with ann= on an unchanged folder.
				b.Run(name+"/convert", func(b *testing.B) { convertANN(b, srv.DSN(db), opts, ann, s) })
			}
			var w index.Updater
			if i == 0 && !kept {
				b.Run(name+"/ingest", func(b *testing.B) {
					w = ingest(b, s, vecs)
					reportSize(b, srv, db)
				})
				if w == nil {
					b.Fatal("the Postgres ingest failed")
				}
			}
			for _, set := range settings[ann] {
				b.Run(name+"/"+set.name, func(b *testing.B) {
					set.apply(s)
					measureSearch(b, s, qv, want, n)
				})
			}
			if w != nil {
				b.Run(name+"/commit", func(b *testing.B) { oneFileCommits(b, w, vecs) })
				w.Close()
				if *pgDir != "" {
					if err := os.WriteFile(filepath.Join(*pgDir, "built-"+size), nil, 0o644); err != nil {
						b.Fatal(err)
					}
				}
			}
		}
		s.Close()
	}
}

// convertANN converts the index to kind ann by a commit with no change
// from a writer opened with it, timed, and refreshes s to search it.
func convertANN(b *testing.B, dsn string, opts pgstore.Options, ann string, s *pgstore.Store) {
	opts.ANN = ann
	conv, err := pgstore.Open(context.Background(), dsn, "bench", benchVersion, opts)
	if err != nil {
		b.Fatal(err)
	}
	defer conv.Close()
	start := time.Now()
	w, err := conv.Begin()
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	if err := w.Commit(schema.EndOfRun); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(time.Since(start).Seconds(), "convert-s")
	if _, err := s.Refresh(); err != nil {
		b.Fatal(err)
	}
	reportLoad(b)
}

// searchSetting is one way the Postgres searches run: an ef_search on
// HNSW, a probes on IVFFlat, or exact.
type searchSetting struct {
	name  string
	apply func(*pgstore.Store)
}

// searchSettings reads -pgstore.ef (HNSW) or -pgstore.probes (IVFFlat,
// of full or half vectors) for kind ann.
func searchSettings(ann string) ([]searchSetting, error) {
	list, param := *pgProbes, "probes"
	switch ann {
	case pgstore.ANNHNSW:
		list, param = *pgEfs, "ef"
	case pgstore.ANNIVFFlat, pgstore.ANNHalfvec:
	default:
		return nil, fmt.Errorf("-pgstore.ann %q: %s, %s or %s", ann, pgstore.ANNHalfvec, pgstore.ANNIVFFlat, pgstore.ANNHNSW)
	}
	var out []searchSetting
	for _, v := range strings.Split(list, ",") {
		switch {
		case v == "exact":
			out = append(out, searchSetting{param + "=exact", func(s *pgstore.Store) { s.SetEfSearch(pgstore.ExactSearch) }})
		case v == "auto" && param == "probes":
			out = append(out, searchSetting{param + "=auto", func(s *pgstore.Store) { s.SetEfSearch(pgstore.DefaultEfSearch); s.SetProbes(0) }})
		default:
			n, err := strconv.Atoi(v)
			if err != nil {
				return nil, fmt.Errorf("-pgstore.%s: %q", param, v)
			}
			if param == "ef" {
				out = append(out, searchSetting{param + "=" + v, func(s *pgstore.Store) { s.SetEfSearch(n) }})
			} else {
				out = append(out, searchSetting{param + "=" + v, func(s *pgstore.Store) { s.SetEfSearch(pgstore.DefaultEfSearch); s.SetProbes(n) }})
			}
		}
	}
	return out, nil
}

// startBenchServer starts the run's PostgreSQL: in -pgstore.dir when set
// (kept, and started on the data an earlier run left there), else in a
// temporary folder.
func startBenchServer() (*pgtest.Server, error) {
	if *pgDir == "" {
		if *pgConf != "" {
			return nil, errors.New("-pgstore.conf needs -pgstore.dir")
		}
		return pgtest.Start()
	}
	if err := os.MkdirAll(*pgDir, 0o755); err != nil {
		return nil, err
	}
	// A kept folder's databases were ingested with one kind of vector
	// index (its ingest figures are that kind's); the searches convert.
	first, _, _ := strings.Cut(*pgANN, ",")
	annFile := filepath.Join(*pgDir, "ann")
	if raw, err := os.ReadFile(annFile); err == nil {
		if got := strings.TrimSpace(string(raw)); got != first {
			return nil, fmt.Errorf("-pgstore.dir %s was ingested with %s indexes, not -pgstore.ann %s first: use another folder", *pgDir, got, first)
		}
	} else if err := os.WriteFile(annFile, []byte(first+"\n"), 0o644); err != nil {
		return nil, err
	}
	var conf []string
	if *pgConf != "" {
		conf = strings.Split(*pgConf, ",")
	}
	return pgtest.StartKept(filepath.Join(*pgDir, "postgres"), conf...)
}

// built reports whether -pgstore.dir holds a finished run of size.
func built(size string) bool {
	_, err := os.Stat(filepath.Join(*pgDir, "built-"+size))
	return err == nil
}

// localDir is the local index folder of size: kept in -pgstore.dir, else
// a temporary folder, removed by done.
func localDir(size string) (dir string, done func(), err error) {
	if *pgDir != "" {
		return filepath.Join(*pgDir, "local-"+size), func() {}, nil
	}
	dir, err = os.MkdirTemp("", "pgstore-bench-local-")
	return dir, func() { os.RemoveAll(dir) }, err
}

// benchDatabase is the database of size: a new one, or in -pgstore.dir
// bench_<size>, made unless kept says the earlier run's is there.
func benchDatabase(ctx context.Context, srv *pgtest.Server, size string, kept bool) (string, error) {
	if *pgDir == "" {
		return srv.NewDatabase(ctx)
	}
	name := "bench_" + strings.ToLower(size)
	if kept {
		return name, nil
	}
	if err := srv.DropDatabase(ctx, name); err != nil {
		return "", err
	}
	return name, srv.CreateDatabase(ctx, name)
}

var benchVersion = schema.Version{Schema: schema.SchemaVersion, Model: "bench", Dim: embed.Dim, ChunkSize: 1, ChunkOverlap: 0, MaxTokens: 1}

// pgQueries are the 40 queries embedded by the model and 160 synthetic
// vectors of the same shape as the index's.
func pgQueries(b *testing.B) []float32 {
	qv, err := embedder(b).Embed(nil, queries)
	if err != nil {
		b.Fatal(err)
	}
	return append(qv, syntheticVectors(160, baseVectors(b), 99)...)
}

// ingest puts every file but the last pgIncrFiles and commits once, then
// those and commits again, reporting both rates; the writer stays open.
func ingest(b *testing.B, be index.Backend, vecs []float32) index.Updater {
	n := len(vecs) / embed.Dim
	files := (n + pgChunksPerFile - 1) / pgChunksPerFile
	incr := min(pgIncrFiles, files/2)
	start := time.Now()
	w, err := be.Begin()
	if err != nil {
		b.Fatal(err)
	}
	for f := range files - incr {
		putBenchFile(b, w, f, vecs, 0)
	}
	if err := w.Commit(schema.MidRun); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64((files-incr)*pgChunksPerFile)/time.Since(start).Seconds(), "ingest-chunks/s")
	start = time.Now()
	for f := files - incr; f < files; f++ {
		putBenchFile(b, w, f, vecs, 0)
	}
	if err := w.Commit(schema.MidRun); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(n-(files-incr)*pgChunksPerFile)/time.Since(start).Seconds(), "incr-chunks/s")
	reportLoad(b)
	return w
}

// oneFileCommits times five commits of a one-file change (new text and
// vectors for file 0's chunks) and five of a new mtime only.
func oneFileCommits(b *testing.B, w index.Updater, vecs []float32) {
	var commits []time.Duration
	for round := range 5 {
		start := time.Now()
		putBenchFile(b, w, 0, vecs, round+1)
		if err := w.Commit(schema.EndOfRun); err != nil {
			b.Fatal(err)
		}
		commits = append(commits, time.Since(start))
	}
	b.ReportMetric(percentile(commits, 0.5), "commit1-ms")
	// A commit that writes no chunk (a new mtime for file 1): what a
	// commit costs besides the chunks, round trips and publishing.
	commits = commits[:0]
	for round := range 5 {
		start := time.Now()
		w.TouchFile(fmt.Sprintf("syn/%05d.txt", 1), float64(100+round), 1)
		if err := w.Commit(schema.EndOfRun); err != nil {
			b.Fatal(err)
		}
		commits = append(commits, time.Since(start))
	}
	b.ReportMetric(percentile(commits, 0.5), "touch-ms")
	reportLoad(b)
}

// putBenchFile puts file f: its chunks' vectors, texts that name round.
func putBenchFile(b *testing.B, w index.Updater, f int, vecs []float32, round int) {
	n := len(vecs) / embed.Dim
	lo, hi := f*pgChunksPerFile, min((f+1)*pgChunksPerFile, n)
	recs := make([]schema.Record, 0, hi-lo)
	for i := lo; i < hi; i++ {
		text := fmt.Sprintf("Synthetic chunk %d of the backend benchmark, round %d.", i, round)
		recs = append(recs, schema.Record{ChunkIndex: i - lo, CharStart: (i - lo) * 100, CharEnd: (i-lo)*100 + len(text), Text: text})
	}
	entry := schema.FileEntry{Path: fmt.Sprintf("syn/%05d.txt", f), Mtime: float64(round), Size: 1, Checksum: "sha256:" + strconv.Itoa(f*10+round), Ext: ".txt"}
	if err := w.PutFile(entry, recs, vecs[lo*embed.Dim:hi*embed.Dim]); err != nil {
		b.Fatal(err)
	}
}

// measureSearch times View.Nearest for every query (two rounds; the first
// warms caches and is not counted) and its recall@10 against want.
func measureSearch(b *testing.B, be index.Backend, qv []float32, want [][]int64, n int) {
	v := be.Acquire()
	defer v.Release()
	var times []time.Duration
	hits, total := 0, 0
	for round := range 2 {
		for i := range want {
			q := qv[i*embed.Dim : (i+1)*embed.Dim]
			start := time.Now()
			got, err := v.Nearest(q, 10)
			if err != nil {
				b.Fatal(err)
			}
			if round == 0 {
				continue
			}
			times = append(times, time.Since(start))
			for _, m := range got {
				if slices.Contains(want[i], originalID(m.ID, n)) {
					hits++
				}
			}
			total += len(want[i])
		}
	}
	b.ReportMetric(percentile(times, 0.5), "p50-ms")
	b.ReportMetric(percentile(times, 0.95), "p95-ms")
	b.ReportMetric(float64(hits)/float64(total), "recall@10")
	reportLoad(b)
}

// originalID maps the ids oneFileCommits gave file 0's chunks (from n+1
// on, 100 a round, the same vectors) back to the ingest's, so a kept
// index searched again scores as before its commits.
func originalID(id int64, n int) int64 {
	if id <= int64(n) {
		return id
	}
	return (id-int64(n)-1)%pgChunksPerFile + 1
}

// reportLoad reports the one-minute load average: the machine's cores are
// shared, and timings taken under load are slower.
func reportLoad(b *testing.B) {
	if l, err := strconv.ParseFloat(load1(), 64); err == nil {
		b.ReportMetric(l, "load1")
	}
}

// reportSize reports the database's size on disk after the ingest.
func reportSize(b *testing.B, srv *pgtest.Server, db string) {
	var size int64
	if err := srv.QueryRow(context.Background(), db, "SELECT pg_database_size(current_database())", &size); err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(size)/(1<<20), "db-MB")
}
