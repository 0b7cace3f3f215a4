package bench

import (
	"flag"
	"math"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/stages/embed"
	"github.com/micro-rag/micro-rag-mcp/stages/model"
)

var embedReference = flag.String("embed.reference", "",
	"another ONNX file of all-MiniLM-L6-v2 (e.g. quantised with ONNX Runtime's own tool) to compare beside fp32 and int8")

// BenchmarkEmbedModels runs the fp32 model, the int8 model and optionally
// a reference file over the same 512 real chunks in one process: raw
// chunks/s of each, its speed over fp32 (x-fp32), and the cosine of its
// vectors to fp32's (cos-min, cos-mean). The three take turns, one batch
// each, so a change in the machine's load hits them alike.
func BenchmarkEmbedModels(b *testing.B) {
	seqs := tokenize(tok(b), longChunks(b, 512))
	int8m, _ := model.Lookup(model.Int8Name)
	files, err := int8m.Locate("")
	if err != nil {
		b.Fatalf("int8 model (run make setup): %v", err)
	}
	paths := []string{"", files.ONNX}
	names := []string{"fp32", "int8"}
	if *embedReference != "" {
		paths, names = append(paths, *embedReference), append(names, "reference")
	}
	embs := []*embed.Embedder{embedder(b)}
	for _, p := range paths[1:] {
		e, err := embed.New(embed.Config{ModelPath: p, TokenizerPath: files.Tokenizer})
		if err != nil {
			b.Fatal(err)
		}
		b.Cleanup(func() { e.Close() })
		embs = append(embs, e)
	}
	vecs := make([][]float32, len(embs))
	took := make([]time.Duration, len(embs))
	for _, e := range embs {
		embedRaw(b, e, seqs[:64], nil) // warm-up
	}
	b.ResetTimer()
	for b.Loop() {
		for i := range vecs {
			vecs[i] = vecs[i][:0]
		}
		for at := 0; at < len(seqs); at += embed.DefaultMaxBatch {
			batch := seqs[at:min(at+embed.DefaultMaxBatch, len(seqs))]
			for i, e := range embs {
				start := time.Now()
				vecs[i] = embedRaw(b, e, batch, vecs[i])
				took[i] += time.Since(start)
			}
		}
	}
	b.StopTimer()
	fp32Rate := float64(b.N*len(seqs)) / took[0].Seconds()
	for i, name := range names {
		rate := float64(b.N*len(seqs)) / took[i].Seconds()
		b.ReportMetric(rate, name+"-chunks/s")
		if i == 0 {
			continue
		}
		b.ReportMetric(rate/fp32Rate, name+"-x-fp32")
		lo, mean := cosines(vecs[0], vecs[i], embed.Dim)
		b.ReportMetric(lo, name+"-cos-min")
		b.ReportMetric(mean, name+"-cos-mean")
	}
	b.ReportMetric(float64(len(seqs)), "chunks")
}

// cosines compares two sets of normalised vectors row by row.
func cosines(a, b []float32, dim int) (lo, mean float64) {
	lo = math.Inf(1)
	n := len(a) / dim
	for r := range n {
		var dot float64
		for j := r * dim; j < (r+1)*dim; j++ {
			dot += float64(a[j]) * float64(b[j])
		}
		lo = min(lo, dot)
		mean += dot
	}
	return lo, mean / float64(n)
}
