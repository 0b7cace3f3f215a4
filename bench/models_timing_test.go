package bench

import (
	"context"
	"flag"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

var embedReference = flag.String("embed.reference", "",
	"other ONNX files of all-MiniLM-L6-v2, comma-separated (e.g. variants scripts/quantize.sh wrote), to compare beside fp32 and int8; each reported by its file name")

// references splits -embed.reference into paths and the names their
// metrics carry: the file's name without .onnx, or its folder's when the
// file is model.onnx, so several variants compare in one run.
func references(list string) (paths, names []string) {
	for _, p := range strings.Split(list, ",") {
		if p = strings.TrimSpace(p); p == "" {
			continue
		}
		name := strings.TrimSuffix(filepath.Base(p), ".onnx")
		if name == "model" {
			name = filepath.Base(filepath.Dir(p))
		}
		paths, names = append(paths, p), append(names, name)
	}
	return paths, names
}

// BenchmarkEmbedModels runs the fp32 model, the int8 model, the q8 model
// (when built) and optionally reference files over the same 512 real
// chunks in one process: raw chunks/s of each, its speed over fp32
// (x-fp32), and the cosine of its vectors to fp32's (cos-min, cos-mean).
// They take turns, one batch each, so a change in the machine's load hits
// them alike.
func BenchmarkEmbedModels(b *testing.B) {
	seqs := tokenize(tok(b), longChunks(b, 512))
	int8m, _ := model.Lookup(model.Int8Name)
	files, err := int8m.Locate("")
	if err != nil {
		b.Fatalf("int8 model (run make setup): %v", err)
	}
	paths := []string{"", files.ONNX}
	names := []string{"fp32", "int8"}
	q8, _ := model.Lookup(model.Q8Name)
	if q8files, err := q8.Locate(""); err == nil {
		paths, names = append(paths, q8files.ONNX), append(names, "q8")
	} else {
		b.Logf("q8 model left out (make setup builds it): %v", err)
	}
	refPaths, refNames := references(*embedReference)
	paths, names = append(paths, refPaths...), append(names, refNames...)
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
// real Engine.Reindex with every model of the table in turn (each op
// ingests with all of them, one after the other, so a change in the
// machine's load hits them alike), then every query of BenchmarkSearch
// once on each model's index (hybrid, the default mode: the query embedded
// by the model, both rankings, snippets). Per model: chunks/s, its ratio to
// fp32 all-MiniLM-L6-v2's (x-minilm), and the search p50 in ms. Right after
// each ingest, the model's raw embedder runs over the chunks the ingest made
// (pre-tokenised, batches of 64, as BenchmarkIngest's): raw-chunks/s and
// x-raw (ingest ÷ raw), so what the pipeline costs beside the model is
// seen per model in the same minute; cpu-x-raw is the same comparison in
// the process's CPU time per chunk, which other jobs on the machine move
// far less than wall time; cores and raw-cores are the CPU each phase got
// per second of wall time.
// modelNames limits BenchmarkIngestModels to some models; fp32
// all-MiniLM-L6-v2, when among them, is the one the others are compared
// with (it runs first), else the first in the table.
var modelNames = flag.String("models.names", "", "comma-separated models for BenchmarkIngestModels (default: every model)")

func BenchmarkIngestModels(b *testing.B) {
	c := buildCorpus(b, ingestCorpus())
	log := &warnLog{}
	var names []string
	for _, m := range model.Models {
		if *modelNames != "" && !slices.Contains(strings.Split(*modelNames, ","), m.Name) {
			continue
		}
		if _, err := m.Locate(""); err != nil {
			b.Fatalf("%v (run make models)", err)
		}
		names = append(names, m.Name)
	}
	if i := slices.Index(names, model.FP32Name); i > 0 {
		names = slices.Insert(slices.Delete(names, i, i+1), 0, model.FP32Name)
	}
	texts := chunkTexts(b, corpusFiles(b, c.Dir))
	raws := make([]rawEmbedder, len(names))
	for m, name := range names {
		raws[m] = newRawEmbedder(b, name, texts)
	}
	took := make([]time.Duration, len(names))
	rawTook := make([]time.Duration, len(names))
	cpu := make([]time.Duration, len(names))
	rawCPU := make([]time.Duration, len(names))
	chunks := make([]int, len(names))
	lat := make([][]time.Duration, len(names))
	for i := 0; b.Loop(); i++ {
		for m, name := range names {
			b.StopTimer()
			e := openEngine(b, c.Dir, filepath.Join(b.TempDir(), fmt.Sprint(i, m)), log,
				func(cfg *engine.Config) { cfg.Model = name })
			b.StartTimer()
			start, startCPU := time.Now(), cpuTime(b)
			res := reindex(b, e)
			took[m] += time.Since(start)
			cpu[m] += cpuTime(b) - startCPU
			b.StopTimer()
			if res.FilesFailed > 0 || res.FilesAdded == 0 {
				b.Fatalf("ingest with %s: %+v\n%s", name, res, log.problems())
			}
			chunks[m] = res.ChunksTotal
			startCPU = cpuTime(b)
			rawTook[m] += raws[m].time(b)
			rawCPU[m] += cpuTime(b) - startCPU
			for _, q := range queries {
				start := time.Now()
				if _, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 5}); err != nil {
					b.Fatal(err)
				}
				lat[m] = append(lat[m], time.Since(start))
			}
			e.Close()
			b.StartTimer()
		}
	}
	rate := func(m int) float64 { return float64(b.N*chunks[m]) / took[m].Seconds() }
	for m, name := range names {
		// bge-small-zh's vocabulary cuts English into other pieces, so its
		// chunk count may differ from the others' (same vocabulary).
		b.ReportMetric(rate(m), name+"-chunks/s")
		if m > 0 {
			b.ReportMetric(rate(m)/rate(0), name+"-x-minilm")
		}
		b.ReportMetric(percentile(lat[m], 0.50), name+"-search-p50-ms")
		raw := float64(b.N*len(texts)) / rawTook[m].Seconds()
		b.ReportMetric(raw, name+"-raw-chunks/s")
		if chunks[m] == len(texts) {
			b.ReportMetric(rate(m)/raw, name+"-x-raw")
			b.ReportMetric(rawCPU[m].Seconds()/cpu[m].Seconds(), name+"-cpu-x-raw")
			// Cores busy on average: what the 2 cores gave each phase.
			b.ReportMetric(cpu[m].Seconds()/took[m].Seconds(), name+"-cores")
			b.ReportMetric(rawCPU[m].Seconds()/rawTook[m].Seconds(), name+"-raw-cores")
		}
	}
	b.ReportMetric(float64(chunks[0]), "chunks")
}

// rawEmbedder is one model's embedder alone with the ingest's chunks
// tokenised as it tokenises passages.
type rawEmbedder struct {
	e    *embed.Embedder
	seqs [][]int32
	vecs []float32
}

// newRawEmbedder loads the model name for the raw comparison. The chunks
// are all-MiniLM-L6-v2's (every MiniLM file has its tokenizer); a model
// with another vocabulary or length chunks differently, so its x-raw is
// left out.
func newRawEmbedder(b *testing.B, name string, texts []string) rawEmbedder {
	m, err := model.Lookup(name)
	if err != nil {
		b.Fatal(err)
	}
	files, err := m.Locate("")
	if err != nil {
		b.Fatal(err)
	}
	e, err := embed.New(embed.Config{ModelPath: files.ONNX, TokenizerPath: files.Tokenizer, Spec: m.Spec})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	r := rawEmbedder{e: e}
	for _, t := range texts {
		r.seqs = append(r.seqs, e.Tokenizer().Encode(nil, m.Spec.PassagePrefix+t, e.MaxLen()))
	}
	r.vecs = embedRaw(b, e, r.seqs[:min(embed.DefaultMaxBatch, len(r.seqs))], nil) // warm-up
	return r
}

// time embeds every chunk once and says how long it took.
func (r *rawEmbedder) time(b *testing.B) time.Duration {
	start := time.Now()
	r.vecs = embedRaw(b, r.e, r.seqs, r.vecs)
	return time.Since(start)
}
