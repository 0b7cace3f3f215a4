package pipeline

import (
	"cmp"
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// FirstCheckpoint is when a run that starts on an empty index commits its
// first files, so that a new folder is searchable within seconds (a search
// waits that long for them) and not only at the first Checkpoint.
const FirstCheckpoint = 2 * time.Second

// Config is one reindex run.
type Config struct {
	Walker        stages.Walker
	Force         bool
	Chunking      chunk.Config
	Tokens        chunk.TokenCounter
	Embedder      stages.Embedder
	Dim           int
	Limits        extract.Limits
	PDF           *extract.PDFEngine // reads the PDFs; the caller owns and closes it
	Extractors    int                // extractor pool size; default NumCPU
	Checkpoint    time.Duration      // commit and publish this often during a long run; 0 = 30 s
	MaxFileChunks int                // chunks indexed of one file at most; 0 = no cap
	Logger        *slog.Logger
	// Progress, when set, is called from one goroutine at most every 250 ms
	// while counts change, and once at the end of a successful run.
	Progress func(Progress)
	// Skips, when set, collects the files the run saw but holds no text
	// of: Walker.Skipped should add to it too; Reindex adds the files read
	// without text (stages.SkipNoText).
	Skips *stages.Skips
}

// Progress counts work done so far.
type Progress struct {
	FilesDone, FilesTotal   int
	ChunksDone, ChunksTotal int
	// Bytes of the files that need reading this run (known once the walk
	// is done) and of those chunked so far: ChunksTotal grows with them,
	// so their ratio lets a display estimate the final chunk count.
	BytesDone, BytesTotal int64
	// The run's chunk total while files remain to be chunked: Expected
	// starts low and only grows toward the count, for display; Likely is
	// the plain projection, for an ETA. Both equal ChunksTotal at the end.
	ChunksExpected, ChunksLikely int
	// ChunksCounted: every file of the run is chunked, so ChunksTotal is
	// final. Finished: the run is over and committed (the last report).
	ChunksCounted, Finished bool
	// BatchSize is the most chunks one embedding call takes: the work in
	// flight beyond ChunksDone.
	BatchSize int
	// WaitingFor names the run this one waits for before it can start
	// (the start-up indexing, say); the counts are then that run's.
	WaitingFor string
}

// Result is what a run did.
type Result struct {
	stages.Tally
	Failures  []stages.Failure
	Truncated []stages.Failure   // files indexed only in part, and why
	Skipped   []stages.SkipGroup // Config.Skips' groups; nil without it
	Stats     Stats
}

type counters struct {
	filesTotal, filesDone, chunksTotal, chunksDone atomic.Int64
	filesChunked                                   atomic.Int64
	bytesTotal, bytesDone                          atomic.Int64
	listed                                         atomic.Bool // the walk is done: the totals are final
	forecast                                       *forecast
	batchSize                                      int
}

// progress reads the counters in an order that keeps a report consistent
// while the stages run: each count is read before the total it belongs to
// (done ≤ total), and the chunked files before the chunk total, so a
// report that says every file is chunked holds their every chunk.
func (c *counters) progress() Progress {
	listed := c.listed.Load()
	filesTotal := c.filesTotal.Load()
	chunked := c.filesChunked.Load()
	bytesDone := c.bytesDone.Load()
	p := Progress{FilesDone: int(c.filesDone.Load()), FilesTotal: int(filesTotal), ChunksDone: int(c.chunksDone.Load()),
		BytesDone: bytesDone, BytesTotal: c.bytesTotal.Load(), BatchSize: c.batchSize}
	p.ChunksTotal = int(c.chunksTotal.Load())
	p.ChunksCounted = listed && chunked == filesTotal
	p.ChunksExpected, p.ChunksLikely = c.forecast.totals()
	if p.ChunksCounted {
		// The forecast's figures were taken after ChunksTotal: the same count.
		p.ChunksExpected, p.ChunksLikely = p.ChunksTotal, p.ChunksTotal
	}
	return p
}

// startProgress runs reportProgress beside the stages when report is set;
// stop ends it and returns once it has.
func startProgress(c *counters, report func(Progress)) (stop func()) {
	stopped := make(chan struct{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		if report != nil {
			reportProgress(c, report, 250*time.Millisecond, stopped)
		}
	}()
	return func() { close(stopped); <-done }
}

// reportProgress calls report every interval while the counters move, once
// the walk is done, until stop closes. It runs beside the stages so a slow
// batch still shows progress.
func reportProgress(c *counters, report func(Progress), interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last Progress
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if !c.listed.Load() {
				continue
			}
			if p := c.progress(); p != last {
				last = p
				report(p)
			}
		}
	}
}

// setDefaults fills in what cfg leaves zero.
func (cfg *Config) setDefaults() {
	cfg.Extractors = cmp.Or(max(cfg.Extractors, 0), runtime.NumCPU())
	cfg.Checkpoint = cmp.Or(max(cfg.Checkpoint, 0), 30*time.Second)
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
}

// Reindex runs walker → filter → extractor pool → chunker → embedder →
// writer over w's index. On cancel by ctx the files finished so far are
// committed; on any other error nothing after the last checkpoint is, and
// the index stays as the last commit left it.
func Reindex(ctx context.Context, cfg Config, w index.Updater) (Result, error) {
	cfg.setDefaults()
	if w.Base() == nil {
		// The index was rebuilt from scratch as the run began (deleted,
		// damaged, another model's): it holds nothing but what this run
		// indexes, so a run over some changed paths covers the whole folder.
		cfg.Walker.Paths = nil
	}
	cnt := counters{forecast: newForecast(), batchSize: cfg.Embedder.BatchSize()}
	writer := &stages.Writer{Index: w, Glob: cfg.Walker.Glob, InScope: cfg.Walker.InScope, Checkpoint: cfg.Checkpoint,
		FirstCheckpoint: FirstCheckpoint, Logger: cfg.Logger}
	run := wire(ctx, cfg, w, &cnt, writer)
	stopProgress := startProgress(&cnt, cfg.Progress)
	stats, err := run.Wait()
	stopProgress()
	if err != nil && ctx.Err() != nil {
		// Stopped by the caller (a signal, stdin EOF): the writer has
		// returned, so commit the files it finished. A run that failed on
		// its own (a full disk) commits nothing more.
		if serr := writer.Save(); serr != nil {
			cfg.Logger.Warn("keeping the files finished before the stop", "err", serr)
		}
	}
	if err == nil && cfg.Progress != nil {
		p := cnt.progress()
		p.Finished = true
		cfg.Progress(p)
	}
	stats.Log(cfg.Logger, "reindex stages")
	res := Result{Tally: writer.Tally, Failures: writer.Failures, Truncated: writer.Truncated, Stats: stats}
	if cfg.Skips != nil {
		res.Skipped = cfg.Skips.Groups()
	}
	return res, err
}

// wire starts the stages of one run over w, ending in writer, counting
// into cnt.
func wire(ctx context.Context, cfg Config, w index.Updater, cnt *counters, writer *stages.Writer) *Run {
	filter := stages.Filter{Before: w.Before(), Force: cfg.Force}
	extractor := stages.Extractor{Folder: cfg.Walker.Folder, Limits: cfg.Limits, PDF: cfg.PDF, Force: cfg.Force}
	chunker := stages.Chunker{Config: cfg.Chunking, Tokens: cfg.Tokens, MaxChunks: cfg.MaxFileChunks}
	batcher := &stages.Batcher{Embedder: cfg.Embedder, Dim: cfg.Dim, Size: cfg.Embedder.BatchSize(),
		Vectors: func(n int) { cnt.chunksDone.Add(int64(n)) }}
	if base := w.Base(); base != nil && !cfg.Force { // force re-embeds everything
		batcher.Stored = base.ChunkVectors
	}

	// Past the filter, buffers no larger than the pool that reads them:
	// backpressure, not queues.
	walked := make(chan *stages.FileJob, cfg.Extractors)
	filtered := make(chan *stages.FileJob, cfg.Extractors)
	extracted := make(chan *stages.FileJob, cfg.Extractors)
	chunked := make(chan *stages.FileJob, 2)
	embedded := make(chan *stages.FileJob, 2)

	run, _ := New(ctx)
	// Files go on as the walk finds them. The filter queues them for the
	// extractors without bound (a path and a stat each), so the walk runs
	// at the disk's pace and the totals are final early; progress is
	// reported only from then on, so the file total never grows.
	Source(run, WalkStage, walked, cfg.Walker.Walk)
	Queue(run, "filter", walked, filtered, func(job *stages.FileJob) *stages.FileJob {
		filter.Apply(job)
		cnt.filesTotal.Add(1)
		cnt.bytesTotal.Add(job.ToRead)
		if job.ToRead > 0 {
			cnt.forecast.plan(job.Ext, job.ToRead)
		}
		return job
	}, func() { cnt.listed.Store(true) })
	Map(run, "extract", cfg.Extractors, filtered, extracted, func(ctx context.Context, job *stages.FileJob) (*stages.FileJob, error) {
		return job, extractor.Apply(ctx, job)
	})
	Map(run, "chunk", 1, extracted, chunked, func(ctx context.Context, job *stages.FileJob) (*stages.FileJob, error) {
		n, err := chunker.Apply(ctx, job)
		if err != nil {
			return nil, err
		}
		cnt.forecast.chunked(job.Ext, job.ToRead, n, job.ToRead > 0)
		cnt.chunksTotal.Add(int64(n))
		cnt.bytesDone.Add(job.ToRead)
		cnt.filesChunked.Add(1) // after its chunks: see counters.progress
		return job, nil
	})
	ExpandIdle(run, "embed", chunked, embedded, func(_ context.Context, job *stages.FileJob, emit func(*stages.FileJob) error) error {
		return batcher.Add(job, emit)
	}, batcher.Step, batcher.Flush)
	SinkEvery(run, "write", embedded, func(job *stages.FileJob) error {
		if cfg.Skips != nil && noText(job) {
			cfg.Skips.Add(job.Rel, job.Ext, stages.SkipNoText)
		}
		err := writer.Apply(job)
		cnt.filesDone.Add(1)
		return err
	}, min(time.Second, cfg.Checkpoint), writer.Tick, writer.Finish)
	return run
}

// noText reports whether a file read now or before holds no chunk.
func noText(job *stages.FileJob) bool {
	switch job.Kind {
	case stages.Changed:
		return len(job.Chunks) == 0
	case stages.Unchanged, stages.Touched:
		return job.Old != nil && len(job.Old.ChunkIDs) == 0
	}
	return false
}
