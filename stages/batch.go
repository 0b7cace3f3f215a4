package stages

import (
	"cmp"
	"context"
	"slices"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Embedder turns texts into normalised vectors, appending to dst, and
// says how many texts one call should carry. EmbedContext returns soon
// after ctx ends, with an error that wraps context.Cause(ctx).
type Embedder interface {
	EmbedContext(ctx context.Context, dst []float32, texts []string) ([]float32, error)
	BatchSize() int
}

// Batcher embeds the chunks of changed files in batches of up to Size
// texts across files, and hands a file on once all its chunks have vectors.
// Each batch takes the chunks of the files closest to complete first, so a
// file of many thousand chunks only fills the batches the others leave
// room in: the files that arrive beside it are finished (and can be
// committed) in minutes, not after it. Files with nothing to embed go on at
// once. Chunks whose text is unchanged from the file's previous version
// reuse their stored vector. A Batcher is used by one goroutine: Add for
// each file, Step whenever no file is waiting to be added, Flush at the end.
type Batcher struct {
	Embedder Embedder
	Dim      int
	Size     int // texts per Embed call: Embedder.BatchSize()
	// Stored returns the vectors of a file's indexed chunks by
	// schema.TextHash of their text; nil means nothing can be reused.
	Stored func(rel string) map[uint64][]float32
	// Vectors, when set, is told how many chunks just got their vectors
	// (embedded or reused), for progress.
	Vectors func(n int)

	waiting []*pendingFile // in arrival order
	queued  int            // chunks waiting for a batch, over all files
	texts   []string
	slots   []slot
	vecs    []float32
}

// pendingFile is a file with chunks still to embed.
type pendingFile struct {
	job     *FileJob
	need    []int // chunk indexes not yet sent to the model
	missing int   // vectors not yet received
}

type slot struct {
	f *pendingFile
	i int
}

// Add takes one file; it embeds nothing itself (Step and Flush do). emit
// receives the file at once when it needs no embedding; its error stops Add.
func (b *Batcher) Add(job *FileJob, emit func(*FileJob) error) error {
	if job.Kind != Changed || len(job.Chunks) == 0 {
		return emit(job)
	}
	job.Vectors = make([]float32, len(job.Chunks)*b.Dim)
	var old map[uint64][]float32
	if b.Stored != nil && job.Old != nil {
		old = b.Stored(job.Rel)
	}
	var need []int
	for i, c := range job.Chunks {
		if v, ok := old[schema.TextHash(c.Text)]; ok {
			copy(job.Vectors[i*b.Dim:], v)
			job.Reused++
			continue
		}
		need = append(need, i)
	}
	b.progress(job.Reused)
	if len(need) == 0 {
		return emit(job)
	}
	b.waiting = append(b.waiting, &pendingFile{job: job, need: need, missing: len(need)})
	b.queued += len(need)
	return nil
}

// Step embeds one full batch if there are enough chunks waiting for one,
// hands on the files it completed and reports whether it did. A cancelled
// run stops inside the batch: the model's call under way ends early, and
// the batch's files are neither handed on nor failed (they are read again
// next run).
func (b *Batcher) Step(ctx context.Context, emit func(*FileJob) error) (bool, error) {
	if b.queued < b.Size {
		return false, nil
	}
	return true, b.batch(ctx, emit)
}

// Flush embeds everything still waiting, full batches then the partial
// last one, stopping as Step does. The runtime calls it once the input
// is drained.
func (b *Batcher) Flush(ctx context.Context, emit func(*FileJob) error) error {
	for b.queued > 0 {
		if err := b.batch(ctx, emit); err != nil {
			return err
		}
	}
	return nil
}

// batch embeds up to Size waiting chunks, those of the files with the
// fewest left first (arrival order among equals), and hands on every file
// that is then complete, in arrival order.
func (b *Batcher) batch(ctx context.Context, emit func(*FileJob) error) error {
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	order := slices.Clone(b.waiting)
	slices.SortStableFunc(order, func(x, y *pendingFile) int { return cmp.Compare(len(x.need), len(y.need)) })
	for _, f := range order {
		n := min(len(f.need), b.Size-len(b.texts))
		for _, i := range f.need[:n] {
			b.texts = append(b.texts, f.job.Chunks[i].Text)
			b.slots = append(b.slots, slot{f, i})
		}
		f.need = f.need[n:]
		if len(b.texts) == b.Size {
			break
		}
	}
	var err error
	b.vecs, err = b.Embedder.EmbedContext(ctx, b.vecs[:0], b.texts)
	if err != nil {
		return err
	}
	d := b.Dim
	for k, s := range b.slots {
		copy(s.f.job.Vectors[s.i*d:(s.i+1)*d], b.vecs[k*d:(k+1)*d])
		s.f.missing--
	}
	b.queued -= len(b.texts)
	b.progress(len(b.texts))
	clear(b.slots) // drop the references to finished files
	clear(b.texts)
	b.texts, b.slots = b.texts[:0], b.slots[:0]
	kept := b.waiting[:0]
	var done []*FileJob
	for _, f := range b.waiting {
		if f.missing > 0 {
			kept = append(kept, f)
		} else {
			done = append(done, f.job)
		}
	}
	clear(b.waiting[len(kept):])
	b.waiting = kept
	for _, job := range done {
		if err := emit(job); err != nil {
			return err
		}
	}
	return nil
}

func (b *Batcher) progress(n int) {
	if n > 0 && b.Vectors != nil {
		b.Vectors(n)
	}
}
