package stages

import (
	"context"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Embedder turns texts into normalised vectors, appending to dst.
type Embedder interface {
	Embed(dst []float32, texts []string) ([]float32, error)
}

// Batcher embeds the chunks of changed files in batches of up to Size
// texts across files, and hands a file on once all its chunks have vectors
// (files that wait go on in arrival order; files with nothing to embed go on
// at once). Chunks whose text is unchanged from the file's previous version
// reuse their stored vector. A Batcher is used by one goroutine.
type Batcher struct {
	Embedder Embedder
	Dim      int
	Size     int // texts per Embed call: the embedder's own batch size
	// Stored returns the vectors of a file's indexed chunks by
	// schema.TextHash of their text; nil means nothing can be reused.
	Stored func(rel string) map[uint64][]float32
	// Vectors, when set, is told how many chunks just got their vectors
	// (embedded or reused), for progress.
	Vectors func(n int)
	// Ctx, when set, is checked before every call to the model: one file of
	// many thousand chunks is embedded within a single Add, and a cancelled
	// run must not wait for all of it.
	Ctx context.Context

	waiting []*FileJob // files in arrival order, waiting for vectors
	missing map[*FileJob]int
	texts   []string
	slots   []slot
	vecs    []float32
}

type slot struct {
	job *FileJob
	i   int
}

// Add takes one file. emit receives every file that is complete, this one
// or earlier ones; its error stops Add.
func (b *Batcher) Add(job *FileJob, emit func(*FileJob) error) error {
	if job.Kind != Changed || len(job.Chunks) == 0 {
		// Nothing to embed: on at once.
		return emit(job)
	}
	if b.missing == nil {
		b.missing = map[*FileJob]int{}
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
	// Count every missing vector before any flush, so a file is never
	// passed on half embedded.
	b.missing[job] = len(need)
	b.waiting = append(b.waiting, job)
	for _, i := range need {
		b.texts = append(b.texts, job.Chunks[i].Text)
		b.slots = append(b.slots, slot{job, i})
		if len(b.texts) >= b.Size {
			if err := b.Flush(emit); err != nil {
				return err
			}
		}
	}
	return nil
}

// Flush embeds the partial batch and hands on every complete file. The
// runtime calls it once the input is drained.
func (b *Batcher) Flush(emit func(*FileJob) error) error {
	if len(b.texts) > 0 {
		if b.Ctx != nil && b.Ctx.Err() != nil {
			return context.Cause(b.Ctx)
		}
		var err error
		b.vecs, err = b.Embedder.Embed(b.vecs[:0], b.texts)
		if err != nil {
			return err
		}
		d := b.Dim
		for k, s := range b.slots {
			copy(s.job.Vectors[s.i*d:(s.i+1)*d], b.vecs[k*d:(k+1)*d])
			b.missing[s.job]--
		}
		b.progress(len(b.texts))
		b.texts, b.slots = b.texts[:0], b.slots[:0]
	}
	kept := b.waiting[:0]
	for _, job := range b.waiting {
		if b.missing[job] > 0 {
			kept = append(kept, job)
			continue
		}
		delete(b.missing, job)
		if err := emit(job); err != nil {
			return err
		}
	}
	b.waiting = kept
	return nil
}

func (b *Batcher) progress(n int) {
	if n > 0 && b.Vectors != nil {
		b.Vectors(n)
	}
}
