package pgstore

import (
	"log/slog"
	"math"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// Options tune a Store; zero values take the defaults.
type Options struct {
	Logger *slog.Logger
	// EfSearch is hnsw.ef_search for kNN queries (raised to k when k is
	// larger): the candidate list whose size trades recall for speed.
	// ExactSearch scans every vector instead (BENCHMARKS.md compares them).
	EfSearch int
	// Grace is how long the rows of deleted chunks stay readable after the
	// commit that deleted them, for views of older commits (a server that
	// has not refreshed yet). Default 10 minutes.
	Grace time.Duration
	// Clock gives the time of a run's last commit (tests set it).
	Clock func() time.Time
	// MaxConns caps the connection pool (default: pgxpool's).
	MaxConns int32
	// ReadOnly creates nothing (no extension, schema or table) and never
	// writes; a schema not there yet is served as an empty index.
	ReadOnly bool
	// Compaction says when a commit rewrites the keyword segments without
	// their deleted chunks, as it does for the local index.
	Compaction index.Compaction
	// ANN is the vector index a writer keeps: ANNHalfvec, ANNIVFFlat or
	// ANNHNSW; a writer given another than the index has converts it at
	// its next commit. Unset, it keeps the index's (a new index: DefaultANN).
	// The store URL's ann parameter sets it.
	ANN string
	// Probes is ivfflat.probes for kNN queries on an IVFFlat index; 0
	// takes probesFor(lists).
	Probes int
	// HNSW are the graph's build parameters, used when the index is made.
	HNSW HNSW
	// BulkMin is the number of chunks from which a commit that at least
	// doubles the index builds the HNSW graph afresh after copying the
	// rows (much faster than inserting into it row by row; searches of
	// the table wait for that commit). Default 10,000.
	BulkMin int
	// BuildMemory caps the maintenance_work_mem a commit that builds the
	// HNSW graph asks for: it asks what the graph of its rows needs
	// (about 3.6 KB a chunk at 384 dimensions, m 32; never less than the
	// server's setting). A graph larger than this is built on disk, many
	// times slower. Default DefaultBuildMemory; the store URL's
	// build_memory parameter sets it when this is 0.
	BuildMemory int64
	// ShardRows is the live chunks from which IVFFlat is built in shards
	// (0: the ShardRows constant; tests and benchmarks set it).
	ShardRows int64
}

// ShardRows is the live chunks from which an IVFFlat index is built in
// ivfShards partial indexes searched at once, one connection each: at
// 1M chunks a search took 0.59 times as long on an idle 2-core machine
// (two shards of 500 lists probed 20 each, against 1000 lists probed 40,
// recall@10 0.9935 against 0.9950; BENCHMARKS.md). From 500k rows each
// shard's probes are 4 % of its lists, so a query scans no more rows
// than one index's would; below it, the 10-probe floor would make shards
// scan more.
const ShardRows = 500_000

// ivfShards is the number of shards of a sharded IVFFlat index: the cores
// of the machines measured (2).
const ivfShards = 2

// HNSW are pgvector's HNSW build parameters.
type HNSW struct {
	M              int // links per node (pgvector's default 16)
	EfConstruction int // candidate list while building (default 64)
}

// DefaultEfSearch is the ef_search that measured recall@10 0.990 against
// exact search with DefaultHNSW on BenchmarkPgstore's 100k clustered
// 384-dimension vectors (200: 0.93, 400: 0.96; BENCHMARKS.md). The
// query's k raises it when larger.
const DefaultEfSearch = 800

// MaxEfSearch is the largest hnsw.ef_search pgvector accepts (0.8: 1000);
// larger values are lowered to it.
const MaxEfSearch = 1000

// DefaultHNSW are the build parameters of new indexes: with pgvector's own
// (16, 64) recall@10 was 0.97 at ef_search 200 on 10k benchmark vectors,
// with these 0.99.
var DefaultHNSW = HNSW{M: 32, EfConstruction: 128}

func (o Options) withDefaults() Options {
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.EfSearch <= 0 && o.EfSearch != ExactSearch {
		o.EfSearch = DefaultEfSearch
	}
	if o.Grace <= 0 {
		o.Grace = 10 * time.Minute
	}
	if o.Clock == nil {
		o.Clock = time.Now
	}
	if o.HNSW.M <= 0 {
		o.HNSW.M = DefaultHNSW.M
	}
	if o.HNSW.EfConstruction <= 0 {
		o.HNSW.EfConstruction = DefaultHNSW.EfConstruction
	}
	if o.BulkMin <= 0 {
		o.BulkMin = 10000
	}
	if o.BuildMemory <= 0 {
		o.BuildMemory = DefaultBuildMemory
	}
	if o.Compaction == (index.Compaction{}) {
		o.Compaction = index.DefaultOptions().Compaction
	}
	return o
}

// ExactSearch as EfSearch makes kNN queries scan every vector (no HNSW).
const ExactSearch = -1

// DefaultBuildMemory is the most maintenance_work_mem a graph build asks
// for unless told otherwise: enough for about 1.2M chunks of 384
// dimensions at m 32, and only taken by an index that large.
const DefaultBuildMemory = 4 << 30

// The vector index kinds (Options.ANN, the store URL's ann parameter).
const (
	// ANNIVFFlat is pgvector's IVFFlat: the vectors split into lists
	// around k-means centres, a query scanning the nearest probes lists.
	// Built in about a minute at 1M chunks, cheap to insert into, rebuilt
	// by the commit after which as many chunks were added as it held.
	ANNIVFFlat = "ivfflat"
	// ANNHalfvec is IVFFlat over the vectors cast to halfvec (an
	// expression index; the table keeps full precision): half the bytes
	// a query scans, the rows found scored by their full vectors. At
	// the same lists and probes 0.7 times IVFFlat's search time at 1M
	// chunks, recall within 0.001 (BENCHMARKS.md).
	ANNHalfvec = "halfvec"
	// ANNHNSW is pgvector's HNSW graph: slow to build and to insert
	// into, and on BenchmarkPgstore's clustered vectors below 0.99
	// recall@10 at 100k and 1M chunks (BENCHMARKS.md).
	ANNHNSW = "hnsw"
	// DefaultANN is the kind a new index gets when Options.ANN is unset.
	DefaultANN = ANNHalfvec
)

// listsFor is the number of IVFFlat lists for rows vectors, as pgvector
// advises: rows/1000 up to 1M rows, the square root above.
func listsFor(rows int64) int {
	if rows <= 1_000_000 {
		return int(max(1, rows/1000))
	}
	return int(math.Sqrt(float64(rows)))
}

// probesFor is the number of lists a query scans: 4 % of them, and at
// least 10 (all of them below 10). Measured on BenchmarkPgstore's
// clustered vectors: 100k chunks, 100 lists, 10 probes recall@10 0.998;
// 1M, 1000 lists, 40 probes 0.994 (BENCHMARKS.md).
func probesFor(lists int) int {
	return max((lists*4+99)/100, min(lists, 10))
}

// The store URL's parameters that are this package's, not PostgreSQL's:
// taken out of the URL before it connects (PostgreSQL refuses settings
// it does not know).
const (
	BuildMemoryParam = "build_memory" // Options.BuildMemory ("4GB", "512MB")
	ANNParam         = "ann"          // Options.ANN ("ivfflat", "hnsw")
	// KeywordParam may only name the one keyword side, KeywordSegments
	// (the project's own BM25F, as the local backend scores): PostgreSQL
	// full text ranked worse on two of three sets, many times slower, and
	// was removed (bench/eval/results-postgres-fulltext.md).
	KeywordParam = "keyword"
	// KeywordSegments is the keyword side KeywordParam accepts.
	KeywordSegments = "segments"
)
