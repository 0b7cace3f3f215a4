package bench

import (
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
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

// BenchmarkIngestModels is the cold ingest of BenchmarkIngest through the
// real Engine.Reindex with each model in turn (fp32, int8, fp32, int8, …
// per op), so int8-x-fp32 is an end-to-end ratio measured in one run.
func BenchmarkIngestModels(b *testing.B) {
	c := buildCorpus(b, ingestCorpus())
	log := &warnLog{}
	names := []string{model.ModelName, model.Int8Name}
	took := make([]time.Duration, len(names))
	chunks := make([]int, len(names))
	for i := 0; b.Loop(); i++ {
		for m, name := range names {
			b.StopTimer()
			e := openEngine(b, c.Dir, filepath.Join(b.TempDir(), fmt.Sprint(i, m)), log,
				func(cfg *engine.Config) { cfg.Model = name })
			b.StartTimer()
			start := time.Now()
			res := reindex(b, e)
			took[m] += time.Since(start)
			b.StopTimer()
			e.Close()
			b.StartTimer()
			if res.FilesFailed > 0 || res.FilesAdded == 0 {
				b.Fatalf("ingest with %s: %+v\n%s", name, res, log.problems())
			}
			chunks[m] = res.ChunksTotal
		}
	}
	if chunks[0] != chunks[1] {
		b.Errorf("fp32 made %d chunks, int8 %d", chunks[0], chunks[1])
	}
	rate := func(m int) float64 { return float64(b.N*chunks[m]) / took[m].Seconds() }
	b.ReportMetric(rate(0), "fp32-chunks/s")
	b.ReportMetric(rate(1), "int8-chunks/s")
	b.ReportMetric(rate(1)/rate(0), "int8-x-fp32")
	b.ReportMetric(float64(chunks[0]), "chunks")
}
