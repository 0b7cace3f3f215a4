package stages

import (
	"context"
	"log/slog"
	"runtime"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Embedder turns texts into normalised vectors, appending to dst.
type Embedder interface {
	Embed(dst []float32, texts []string) ([]float32, error)
}

// BatchSize is how many chunks the embedder sends to the model at once.
const BatchSize = 64

// Config is one reindex run.
type Config struct {
	Walker     Walker
	Force      bool
	Chunking   chunk.Config
	Tokens     chunk.TokenCounter
	Embedder   Embedder
	Dim        int
	Limits     extract.Limits
	Extractors int           // extractor pool size; default NumCPU
	Checkpoint time.Duration // commit and publish this often during a long run; 0 = 30 s
	Logger     *slog.Logger
	// Progress, when set, is called from one goroutine at most every 250 ms
	// while counts change, and once at the end of a successful run.
	Progress func(Progress)
}

// Progress counts work done so far.
type Progress struct {
	FilesDone, FilesTotal   int
	ChunksDone, ChunksTotal int
}

// Result is what a run did.
type Result struct {
	FilesAdded, FilesUpdated, FilesRemoved, FilesFailed, FilesTouched int
	ChunksTotal, ChunksEmbedded, ChunksReused                         int
	Failures                                                          []error
	Stats                                                             pipeline.Stats
}

type counters struct {
	filesTotal, filesDone, chunksTotal, chunksDone atomic.Int64
}

func (c *counters) progress() Progress {
	return Progress{
		FilesDone: int(c.filesDone.Load()), FilesTotal: int(c.filesTotal.Load()),
		ChunksDone: int(c.chunksDone.Load()), ChunksTotal: int(c.chunksTotal.Load()),
	}
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

// Reindex runs walker → checksum filter → extractor pool → chunker →
// embedder → writer over w's index. On error or cancel nothing after the
// last checkpoint is committed; the index stays as the last commit left it.
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
	var cnt counters
	// Buffers no larger than the pool that reads them: backpressure, not queues.
	walked := make(chan *FileJob, cfg.Extractors)
	filtered := make(chan *FileJob, cfg.Extractors)
	extracted := make(chan *FileJob, cfg.Extractors)
	chunked := make(chan *FileJob, 2)
	embedded := make(chan *FileJob, 2)

	run, _ := pipeline.New(ctx)
	run.Go("walk", 1, func(ctx context.Context, m *pipeline.Meter) error {
		return cfg.Walker.Walk(ctx, m, walked, func() { cnt.filesTotal.Add(1) })
	}, nil)
	run.Go("filter", 1, func(ctx context.Context, m *pipeline.Meter) error {
		return filter(ctx, m, walked, filtered, w.Before(), cfg.Force)
	}, nil)
	run.Go("extract", cfg.Extractors, func(ctx context.Context, m *pipeline.Meter) error {
		return extractFiles(ctx, m, filtered, extracted, cfg)
	}, func() { close(extracted) })
	run.Go("chunk", 1, func(ctx context.Context, m *pipeline.Meter) error {
		return chunkFiles(ctx, m, extracted, chunked, cfg, &cnt)
	}, nil)
	run.Go("embed", 1, func(ctx context.Context, m *pipeline.Meter) error {
		return embedFiles(ctx, m, chunked, embedded, cfg, w.Base(), &cnt)
	}, nil)
	var res Result
	run.Go("write", 1, func(ctx context.Context, m *pipeline.Meter) error {
		return writeFiles(ctx, m, embedded, w, cfg, &cnt, &res)
	}, nil)
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
	if err == nil && cfg.Progress != nil {
		cfg.Progress(cnt.progress())
	}
	res.Stats = stats
	stats.Log(cfg.Logger, "reindex stages")
	return res, err
}

// filter passes files whose mtime and size match files.json as Unchanged
// without reading them.
func filter(ctx context.Context, m *pipeline.Meter, in <-chan *FileJob, out chan<- *FileJob, before map[string]*index.FileEntry, force bool) error {
	defer close(out)
	for {
		job, ok, err := pipeline.Recv(ctx, m, in)
		if !ok {
			return err
		}
		job.Old = before[job.Rel]
		job.Kind = Changed
		if !force && job.Old != nil && job.Old.Mtime == job.Mtime && job.Old.Size == job.Size {
			job.Kind = Unchanged
		}
		if err := pipeline.Send(ctx, m, out, job); err != nil {
			return err
		}
	}
}

// extractFiles is one extractor worker. The pool's owner closes out.
func extractFiles(ctx context.Context, m *pipeline.Meter, in <-chan *FileJob, out chan<- *FileJob, cfg Config) error {
	for {
		job, ok, err := pipeline.Recv(ctx, m, in)
		if !ok {
			return err
		}
		if job.Kind == Changed {
			start := time.Now()
			doc, err := extract.Extract(job.Abs, cfg.Limits)
			if err != nil {
				job.Kind, job.Err = Failed, err
			} else {
				job.Doc, job.Checksum = doc, extract.Checksum(doc.Text)
				if !cfg.Force && job.Old != nil && job.Old.Checksum == job.Checksum {
					job.Kind, job.Doc = Touched, nil
				}
			}
			m.Busy(start)
		}
		if err := pipeline.Send(ctx, m, out, job); err != nil {
			return err
		}
	}
}

func chunkFiles(ctx context.Context, m *pipeline.Meter, in <-chan *FileJob, out chan<- *FileJob, cfg Config, cnt *counters) error {
	defer close(out)
	for {
		job, ok, err := pipeline.Recv(ctx, m, in)
		if !ok {
			return err
		}
		if job.Kind == Changed {
			start := time.Now()
			job.Chunks = chunk.Split(job.Doc.Text, job.Doc.PageStarts, cfg.Chunking, cfg.Tokens)
			cnt.chunksTotal.Add(int64(len(job.Chunks)))
			m.Busy(start)
		}
		if err := pipeline.Send(ctx, m, out, job); err != nil {
			return err
		}
	}
}

// embedFiles fills batches of up to BatchSize chunk texts across files and
// passes a file on once all its chunks have vectors. Chunks whose text is
// unchanged from the file's previous version reuse their stored vector.
func embedFiles(ctx context.Context, m *pipeline.Meter, in <-chan *FileJob, out chan<- *FileJob, cfg Config, base *index.Snapshot, cnt *counters) error {
	defer close(out)
	type slot struct {
		job *FileJob
		i   int
	}
	var (
		waiting []*FileJob // files in arrival order, waiting for vectors
		missing = map[*FileJob]int{}
		texts   = make([]string, 0, BatchSize)
		slots   = make([]slot, 0, BatchSize)
		vecs    []float32
	)
	flush := func() error {
		if len(texts) > 0 {
			start := time.Now()
			var err error
			vecs, err = cfg.Embedder.Embed(vecs[:0], texts)
			if err != nil {
				return err
			}
			for k, s := range slots {
				copy(s.job.Vectors[s.i*cfg.Dim:(s.i+1)*cfg.Dim], vecs[k*cfg.Dim:(k+1)*cfg.Dim])
				missing[s.job]--
			}
			cnt.chunksDone.Add(int64(len(texts)))
			texts, slots = texts[:0], slots[:0]
			m.Busy(start)
		}
		// Pass on files whose vectors are all in.
		kept := waiting[:0]
		for _, job := range waiting {
			if missing[job] > 0 {
				kept = append(kept, job)
				continue
			}
			delete(missing, job)
			if err := pipeline.Send(ctx, m, out, job); err != nil {
				return err
			}
		}
		waiting = kept
		return nil
	}
	for {
		job, ok, err := pipeline.Recv(ctx, m, in)
		if err != nil {
			return err
		}
		if !ok {
			return flush()
		}
		queued := false
		if job.Kind == Changed && len(job.Chunks) > 0 {
			job.Vectors = make([]float32, len(job.Chunks)*cfg.Dim)
			var old map[uint64][]float32
			if base != nil && job.Old != nil && !cfg.Force { // force re-embeds everything
				old = base.ChunkVectors(job.Rel)
			}
			var need []int
			for i, c := range job.Chunks {
				if v, ok := old[index.TextHash(c.Text)]; ok {
					copy(job.Vectors[i*cfg.Dim:], v)
					job.Reused++
					cnt.chunksDone.Add(1)
					continue
				}
				need = append(need, i)
			}
			// Count every missing vector before any flush, so a file is
			// never passed on half embedded.
			if len(need) > 0 {
				queued = true
				missing[job] = len(need)
				waiting = append(waiting, job)
			}
			for _, i := range need {
				texts = append(texts, job.Chunks[i].Text)
				slots = append(slots, slot{job, i})
				if len(texts) == BatchSize {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		// Files with nothing left to embed go on at once.
		if !queued {
			if err := pipeline.Send(ctx, m, out, job); err != nil {
				return err
			}
		}
	}
}

// writeFiles is the single goroutine that changes the index.
func writeFiles(ctx context.Context, m *pipeline.Meter, in <-chan *FileJob, w *index.Writer, cfg Config, cnt *counters, res *Result) error {
	seen := map[string]bool{}
	lastCommit := time.Now()
	for {
		job, ok, err := pipeline.Recv(ctx, m, in)
		if err != nil {
			return err
		}
		if !ok {
			break
		}
		start := time.Now()
		seen[job.Rel] = true
		switch job.Kind {
		case Touched:
			w.TouchFile(job.Rel, job.Mtime, job.Size)
			res.FilesTouched++
		case Failed:
			res.FilesFailed++
			res.Failures = append(res.Failures, job.Err)
			cfg.Logger.Warn("file skipped", "path", job.Rel, "err", job.Err)
		case Changed:
			if err := w.PutFile(fileEntry(job), records(job.Chunks), job.Vectors); err != nil {
				return err
			}
			if job.Old == nil {
				res.FilesAdded++
			} else {
				res.FilesUpdated++
			}
			res.ChunksEmbedded += len(job.Chunks) - job.Reused
			res.ChunksReused += job.Reused
			for _, s := range job.Doc.Skipped {
				cfg.Logger.Warn("part of file skipped", "path", job.Rel, "reason", s)
			}
		}
		cnt.filesDone.Add(1)
		if time.Since(lastCommit) >= cfg.Checkpoint {
			// A checkpoint: early results become searchable during a long run.
			if err := w.Commit(false); err != nil {
				return err
			}
			lastCommit = time.Now()
		}
		m.Busy(start)
	}
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	for rel := range w.Before() {
		if !seen[rel] && cfg.Walker.Glob.Match(rel) {
			if err := w.RemoveFile(rel); err != nil {
				return err
			}
			res.FilesRemoved++
		}
	}
	if err := w.Commit(true); err != nil {
		return err
	}
	res.ChunksTotal = w.Chunks()
	return nil
}

func fileEntry(job *FileJob) index.FileEntry {
	return index.FileEntry{Path: job.Rel, Mtime: job.Mtime, Size: job.Size, Checksum: job.Checksum, Ext: job.Ext}
}

func records(chunks []chunk.Chunk) []index.Record {
	out := make([]index.Record, len(chunks))
	for i, c := range chunks {
		out[i] = index.Record{
			ChunkIndex: c.Index, CharStart: c.CharStart, CharEnd: c.CharEnd,
			Page: c.Page, LineStart: c.LineStart, LineEnd: c.LineEnd, Text: c.Text,
		}
	}
	return out
}
