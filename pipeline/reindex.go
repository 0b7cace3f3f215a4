package pipeline

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/embed"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

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
}

// Result is what a run did.
type Result struct {
	stages.Tally
	Failures []stages.Failure
	Skipped  []stages.SkipGroup // Config.Skips' groups; nil without it
	Stats    Stats
}

type counters struct {
	filesTotal, filesDone, chunksTotal, chunksDone atomic.Int64
	bytesTotal, bytesDone                          atomic.Int64
	forecast                                       *forecast
}

func (c *counters) progress() Progress {
	p := Progress{
		FilesDone: int(c.filesDone.Load()), FilesTotal: int(c.filesTotal.Load()),
		ChunksDone: int(c.chunksDone.Load()), ChunksTotal: int(c.chunksTotal.Load()),
		BytesDone: c.bytesDone.Load(), BytesTotal: c.bytesTotal.Load(),
	}
	p.ChunksExpected, p.ChunksLikely = c.forecast.totals()
	return p
}

// reportProgress calls report every interval while the counters move, until
// stop closes. It runs beside the stages so a slow batch still shows progress.
func reportProgress(c *counters, report func(Progress), interval time.Duration, stop <-chan struct{}) {
	t := time.NewTicker(interval)
	defer t.Stop()
	var last Progress
	for {
		select {
		case <-stop:
			return
		case <-t.C:
			if p := c.progress(); p != last {
				last = p
				report(p)
			}
		}
	}
}

// Reindex runs walker → filter → extractor pool → chunker → embedder →
// writer over w's index. On cancel by ctx the files finished so far are
// committed; on any other error nothing after the last checkpoint is, and
// the index stays as the last commit left it.
func Reindex(ctx context.Context, cfg Config, w *index.Writer) (Result, error) {
	if cfg.Extractors <= 0 {
		cfg.Extractors = runtime.NumCPU()
	}
	if cfg.Checkpoint <= 0 {
		cfg.Checkpoint = 30 * time.Second
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	cnt := counters{forecast: newForecast()}
	filter := stages.Filter{Before: w.Before(), Force: cfg.Force}
	extractor := stages.Extractor{Folder: cfg.Walker.Folder, Limits: cfg.Limits, PDF: cfg.PDF, Force: cfg.Force}
	chunker := stages.Chunker{Config: cfg.Chunking, Tokens: cfg.Tokens, MaxChunks: cfg.MaxFileChunks}
	batcher := &stages.Batcher{Embedder: cfg.Embedder, Dim: cfg.Dim, Size: embed.DefaultMaxBatch,
		Vectors: func(n int) { cnt.chunksDone.Add(int64(n)) }}
	if base := w.Base(); base != nil && !cfg.Force { // force re-embeds everything
		batcher.Stored = base.ChunkVectors
	}
	writer := &stages.Writer{Index: w, Glob: cfg.Walker.Glob, InScope: cfg.Walker.InScope, Checkpoint: cfg.Checkpoint, Logger: cfg.Logger}

	// Buffers no larger than the pool that reads them: backpressure, not queues.
	walked := make(chan *stages.FileJob, cfg.Extractors)
	filtered := make(chan *stages.FileJob, cfg.Extractors)
	extracted := make(chan *stages.FileJob, cfg.Extractors)
	chunked := make(chan *stages.FileJob, 2)
	embedded := make(chan *stages.FileJob, 2)

	toRead := map[string]int64{} // files the walk found needing a read, by size
	run, runCtx := New(ctx)
	batcher.Ctx = runCtx
	Source(run, "walk", walked, func(ctx context.Context, emit func(*stages.FileJob) error) error {
		// List everything first, so the file total that progress shows is
		// final from the start instead of growing as the walk goes.
		var jobs []*stages.FileJob
		if err := cfg.Walker.Walk(ctx, func(job *stages.FileJob) error {
			jobs = append(jobs, job)
			return nil
		}); err != nil {
			return err
		}
		cnt.filesTotal.Store(int64(len(jobs)))
		var bytes int64
		for _, job := range jobs {
			probe := *job // the filter stage decides for real; this only counts
			filter.Apply(&probe)
			if probe.Kind == stages.Changed {
				toRead[job.Rel] = job.Size
				bytes += job.Size
				cnt.forecast.plan(job.Ext, job.Size)
			}
		}
		cnt.bytesTotal.Store(bytes)
		for i, job := range jobs {
			jobs[i] = nil // the pipeline owns it now
			if err := emit(job); err != nil {
				return err
			}
		}
		return nil
	})
	Map(run, "filter", 1, walked, filtered, func(_ context.Context, job *stages.FileJob) (*stages.FileJob, error) {
		filter.Apply(job)
		return job, nil
	})
	Map(run, "extract", cfg.Extractors, filtered, extracted, func(ctx context.Context, job *stages.FileJob) (*stages.FileJob, error) {
		return job, extractor.Apply(ctx, job)
	})
	Map(run, "chunk", 1, extracted, chunked, func(ctx context.Context, job *stages.FileJob) (*stages.FileJob, error) {
		n, err := chunker.Apply(ctx, job)
		if err != nil {
			return nil, err
		}
		size, planned := toRead[job.Rel] // written before the first send, read-only after
		cnt.forecast.chunked(job.Ext, size, n, planned)
		cnt.chunksTotal.Add(int64(n))
		cnt.bytesDone.Add(size)
		return job, nil
	})
	ExpandIdle(run, "embed", chunked, embedded, batcher.Add, batcher.Step, batcher.Flush)
	SinkEvery(run, "write", embedded, func(job *stages.FileJob) error {
		if cfg.Skips != nil && noText(job) {
			cfg.Skips.Add(job.Rel, job.Ext, stages.SkipNoText)
		}
		err := writer.Apply(job)
		cnt.filesDone.Add(1)
		return err
	}, min(time.Second, cfg.Checkpoint), writer.Tick, writer.Finish)

	stopProgress := make(chan struct{})
	progressDone := make(chan struct{})
	go func() {
		defer close(progressDone)
		if cfg.Progress != nil {
			reportProgress(&cnt, cfg.Progress, 250*time.Millisecond, stopProgress)
		}
	}()
	stats, err := run.Wait()
	close(stopProgress)
	<-progressDone
	if err != nil && ctx.Err() != nil {
		// Stopped by the caller (a signal, stdin EOF): the writer has
		// returned, so commit the files it finished. A run that failed on
		// its own (a full disk) commits nothing more.
		if serr := writer.Save(); serr != nil {
			cfg.Logger.Warn("keeping the files finished before the stop", "err", serr)
		}
	}
	if err == nil && cfg.Progress != nil {
		cfg.Progress(cnt.progress())
	}
	stats.Log(cfg.Logger, "reindex stages")
	res := Result{Tally: writer.Tally, Failures: writer.Failures, Stats: stats}
	if cfg.Skips != nil {
		res.Skipped = cfg.Skips.Groups()
	}
	return res, err
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
