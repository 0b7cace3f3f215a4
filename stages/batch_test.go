package stages

import (
	"context"
	"fmt"
	"math"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

func changedJob(rel string, texts ...string) *FileJob {
	job := &FileJob{Rel: rel, Kind: Changed}
	for i, s := range texts {
		job.Chunks = append(job.Chunks, chunk.Chunk{Index: i, Text: s})
	}
	return job
}

func TestBatcher(t *testing.T) {
	emb := testEmbedder(t)
	const dim = embed.Dim
	const size = 8
	var many []string
	for i := range size + 3 {
		many = append(many, fmt.Sprintf("paragraph %d of the incident report", i))
	}
	big := changedJob("big.md", many...)
	small := changedJob("small.md", "release notes for version 2.4")
	touched := &FileJob{Rel: "touched.md", Kind: Touched}
	empty := changedJob("empty.md")

	vectorsDone := 0
	b := &Batcher{Embedder: emb, Dim: dim, Size: size, Vectors: func(n int) { vectorsDone += n }}
	var out []string
	emit := func(j *FileJob) error { out = append(out, j.Rel); return nil }
	for _, j := range []*FileJob{big, small, touched, empty} {
		if err := b.Add(j, emit); err != nil {
			t.Fatal(err)
		}
	}
	// Add embeds nothing; files with nothing to embed went straight on.
	if want := []string{"touched.md", "empty.md"}; !slices.Equal(out, want) || vectorsDone != 0 {
		t.Fatalf("after Add emitted %v with %d vectors, want %v and none", out, vectorsDone, want)
	}
	// One full batch: small, which arrived after big, is complete first.
	if did, err := b.Step(context.Background(), emit); err != nil || !did {
		t.Fatalf("Step with %d chunks waiting: %v %v", len(many)+1, did, err)
	}
	if want := []string{"touched.md", "empty.md", "small.md"}; !slices.Equal(out, want) || vectorsDone != size {
		t.Fatalf("after one batch emitted %v with %d vectors, want %v", out, vectorsDone, want)
	}
	// Less than a batch waits for more input or the end.
	if did, err := b.Step(context.Background(), emit); err != nil || did {
		t.Fatalf("Step with %d chunks waiting: %v %v", len(many)+1-size, did, err)
	}
	if err := b.Flush(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	if want := []string{"touched.md", "empty.md", "small.md", "big.md"}; !slices.Equal(out, want) {
		t.Fatalf("emitted %v, want %v", out, want)
	}
	if vectorsDone != len(many)+1 {
		t.Fatalf("%d vectors reported, want %d", vectorsDone, len(many)+1)
	}
	// Batching across files gives each chunk the vector of its own text.
	want, err := emb.Embed(nil, append(slices.Clone(many), "release notes for version 2.4"))
	if err != nil {
		t.Fatal(err)
	}
	got := append(slices.Clone(big.Vectors), small.Vectors...)
	for i := range len(many) + 1 {
		for j := i * dim; j < (i+1)*dim; j++ {
			if d := math.Abs(float64(got[j] - want[j])); d > 1e-4 {
				t.Fatalf("chunk %d: component %d differs by %g from its own embedding", i, j-i*dim, d)
			}
		}
	}
}

func TestBatcherReusesStoredVectors(t *testing.T) {
	emb := testEmbedder(t)
	const dim = embed.Dim
	kept := make([]float32, dim)
	kept[0] = 1 // not a vector the model would give: proves it was reused
	stored := map[uint64][]float32{schema.TextHash("unchanged paragraph"): kept}
	b := &Batcher{Embedder: emb, Dim: dim, Size: 8, Stored: func(rel string) map[uint64][]float32 {
		if rel != "doc.md" {
			t.Errorf("asked for the vectors of %q", rel)
		}
		return stored
	}}
	var out []*FileJob
	emit := func(j *FileJob) error { out = append(out, j); return nil }

	job := changedJob("doc.md", "unchanged paragraph", "a new paragraph")
	job.Old = &schema.FileEntry{Path: "doc.md"}
	if err := b.Add(job, emit); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	if len(out) != 1 || job.Reused != 1 {
		t.Fatalf("emitted %d files, reused %d", len(out), job.Reused)
	}
	if !slices.Equal(job.Vectors[:dim], kept) {
		t.Error("the unchanged chunk was embedded again")
	}
	if job.Vectors[dim] == 0 && job.Vectors[dim+1] == 0 {
		t.Error("the new chunk has no vector")
	}

	// A file the index never held reuses nothing, even with equal text.
	fresh := changedJob("doc.md", "unchanged paragraph")
	if err := b.Add(fresh, emit); err != nil {
		t.Fatal(err)
	}
	if err := b.Flush(context.Background(), emit); err != nil {
		t.Fatal(err)
	}
	if fresh.Reused != 0 || slices.Equal(fresh.Vectors, kept) {
		t.Error("a new file reused stored vectors")
	}
}
