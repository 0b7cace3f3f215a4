package bench

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"runtime/debug"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// openEngine starts a real engine on data with its index in indexDir and
// waits for the model. The engine is closed when the benchmark ends.
func openEngine(b *testing.B, data, indexDir string, log *warnLog, tweaks ...func(*engine.Config)) *engine.Engine {
	b.Helper()
	cfg := engine.Config{DataFolder: data, IndexFolder: indexDir, NoInitialReindex: true}
	if log != nil {
		cfg.Logger = slog.New(log)
	}
	for _, tweak := range tweaks {
		tweak(&cfg)
	}
	e, err := engine.New(cfg)
	if err != nil {
		b.Fatal(err)
	}
	e.Start(context.Background())
	b.Cleanup(func() { e.Close() })
	if err := e.WaitModel(context.Background()); err != nil {
		b.Fatalf("model (run make setup): %v", err)
	}
	return e
}

func reindex(b *testing.B, e *engine.Engine) engine.ReindexResult {
	b.Helper()
	res, err := e.Reindex(context.Background(), engine.ReindexRequest{}, nil)
	if err != nil {
		b.Fatal(err)
	}
	return res
}

// BenchmarkIngest is a cold ingest of the mixed corpus through the real
// Engine.Reindex into a fresh index, then, in the same run, the raw
// embedder over exactly the chunks the ingest produced (pre-tokenised,
// batches of 64): x-raw = ingest chunks/s ÷ raw chunks/s.
func BenchmarkIngest(b *testing.B) {
	c := buildCorpus(b, ingestCorpus())
	texts := chunkTexts(b, corpusFiles(b, c.Dir))
	seqs := tokenize(tok(b), texts)
	log := &warnLog{}
	b.ReportAllocs()
	b.SetBytes(c.Bytes)
	var ingest time.Duration
	chunks := 0
	var stats pipeline.Stats
	for i := 0; b.Loop(); i++ {
		b.StopTimer()
		e := openEngine(b, c.Dir, filepath.Join(b.TempDir(), fmt.Sprint(i)), log)
		b.StartTimer()
		start := time.Now()
		res := reindex(b, e)
		ingest += time.Since(start)
		b.StopTimer()
		e.Close()
		b.StartTimer()
		chunks, stats = res.ChunksTotal, res.Stats
		if res.FilesFailed > 0 || res.FilesAdded == 0 {
			b.Fatalf("ingest: %+v\n%s", res, log.problems())
		}
	}
	if chunks != len(texts) {
		b.Errorf("ingest made %d chunks, extract+chunk alone %d", chunks, len(texts))
	}
	b.Logf("stages: elapsed=%v %s", stats.Elapsed.Round(time.Millisecond), stats)
	ingestRate := float64(b.N*chunks) / ingest.Seconds()

	// The ceiling on the same chunks, in the same process and minute.
	e := embedder(b)
	vecs := embedRaw(b, e, seqs[:min(embed.DefaultMaxBatch, len(seqs))], nil)
	start := time.Now()
	embedRaw(b, e, seqs, vecs)
	rawRate := float64(len(seqs)) / time.Since(start).Seconds()

	b.ReportMetric(ingestRate, "chunks/s")
	b.ReportMetric(rawRate, "raw-chunks/s")
	b.ReportMetric(ingestRate/rawRate, "x-raw")
	b.ReportMetric(float64(chunks), "chunks")
	b.ReportMetric(float64(b.N)*float64(c.Bytes)/ingest.Seconds()/1e6, "corpus-MB/s")
}

// BenchmarkReindex works on many small unchanged files: a no-op reindex and
// one after editing 1 % of them. The cold ingest that builds the index is
// timed once outside the benchmark loop and reported as cold-ms, so the
// edit's ratio to a cold run is on the same corpus.
func BenchmarkReindex(b *testing.B) {
	c := buildCorpus(b, reindexCorpus())
	data := filepath.Join(b.TempDir(), "data")
	copyTree(b, c.Dir, data)
	files := corpusFiles(b, data, ".txt", ".md")
	e := openEngine(b, data, filepath.Join(b.TempDir(), "index"), nil)
	start := time.Now()
	res := reindex(b, e)
	cold := time.Since(start)
	b.Logf("cold: %d files, %d chunks in %v; %s", res.FilesAdded, res.ChunksTotal, cold, res.Stats)
	coldMS := float64(cold.Microseconds()) / 1e3

	b.Run(fmt.Sprintf("noop-%d", len(files)), func(b *testing.B) { benchNoop(b, e, coldMS) })

	b.Run(fmt.Sprintf("edit1pct-%d", len(files)), func(b *testing.B) {
		rng := rand.New(rand.NewPCG(6, 1))
		n := max(1, len(files)/100)
		b.ReportAllocs()
		var total time.Duration
		var stats pipeline.Stats
		for round := 0; b.Loop(); round++ {
			b.StopTimer()
			// Each round appends one line of another file's real text to 1 %
			// of the files: their text changes, their size barely does.
			for _, i := range rng.Perm(len(files))[:n] {
				other, err := os.ReadFile(files[rng.IntN(len(files))])
				if err != nil {
					b.Fatal(err)
				}
				extra, _, _ := strings.Cut(strings.TrimSpace(string(other)), "\n")
				f, err := os.OpenFile(files[i], os.O_APPEND|os.O_WRONLY, 0)
				if err != nil {
					b.Fatal(err)
				}
				fmt.Fprintf(f, "\n\nRevision %d.\n\n%s", round, extra)
				f.Close()
			}
			b.StartTimer()
			start := time.Now()
			res := reindex(b, e)
			total += time.Since(start)
			if res.FilesUpdated != n {
				b.Fatalf("edited %d files, reindex updated %d", n, res.FilesUpdated)
			}
			stats = res.Stats
		}
		ms := float64(total.Microseconds()) / 1e3 / float64(b.N)
		b.ReportMetric(ms, "ms")
		b.ReportMetric(coldMS, "cold-ms")
		b.ReportMetric(ms/coldMS, "x-cold")
		b.Logf("last run: %s", stats)
	})
}

// memEnv tells a re-executed test binary to measure one workload's memory
// in a fresh process, so earlier benchmarks do not count: "ingest" (a cold
// Engine.Reindex) or "raw" (the embedder alone over the same chunks).
const memEnv = "MICRO_RAG_BENCH_MEM"

type memReport struct {
	StartRSSKB, BaseRSSKB, PeakKB int64
	Chunks                        int
}

// TestMemoryChild is the child side of BenchmarkIngestMemory; without the
// environment variable it returns at once.
func TestMemoryChild(t *testing.T) {
	mode, data, indexDir := os.Getenv(memEnv), os.Getenv(memEnv+"_DATA"), os.Getenv(memEnv+"_INDEX")
	if mode == "" {
		return
	}
	var rep memReport
	rep.StartRSSKB = procStatus(t, "VmRSS")
	var work func() int
	switch mode {
	case "ingest":
		e, err := engine.New(engine.Config{DataFolder: data, IndexFolder: indexDir, NoInitialReindex: true})
		if err != nil {
			t.Fatal(err)
		}
		e.Start(context.Background())
		defer e.Close()
		if err := e.WaitModel(context.Background()); err != nil {
			t.Fatal(err)
		}
		work = func() int {
			res, err := e.Reindex(context.Background(), engine.ReindexRequest{}, nil)
			if err != nil {
				t.Fatal(err)
			}
			return res.ChunksTotal
		}
	case "raw":
		seqs := tokenize(tok(t), chunkTexts(t, corpusFiles(t, data)))
		work = func() int {
			embedRaw(t, embedder(t), seqs, nil)
			return len(seqs)
		}
	default:
		t.Fatalf("unknown mode %q", mode)
	}
	runtime.GC()
	debug.FreeOSMemory()
	rep.BaseRSSKB = procStatus(t, "VmRSS")
	// Writing 5 to clear_refs resets VmHWM to the current RSS.
	if err := os.WriteFile("/proc/self/clear_refs", []byte("5"), 0); err != nil {
		t.Fatal(err)
	}
	rep.Chunks = work()
	rep.PeakKB = procStatus(t, "VmHWM")
	out, _ := json.Marshal(rep)
	fmt.Printf("MEMREPORT %s\n", out)
}

func procStatus(t testing.TB, key string) int64 { return procField(t, "/proc/self/status", key) }

// procField reads one "key: value [kB]" line of a /proc file.
func procField(t testing.TB, path, key string) int64 {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), key+":"); ok {
			n, err := strconv.ParseInt(strings.TrimSuffix(strings.TrimSpace(v), " kB"), 10, 64)
			if err != nil {
				t.Fatal(err)
			}
			return n
		}
	}
	t.Fatalf("%s not in %s", key, path)
	return 0
}

func memChild(b *testing.B, mode, data, indexDir string) memReport {
	cmd := exec.Command(os.Args[0], "-test.run=^TestMemoryChild$", "-test.count=1")
	cmd.Env = append(os.Environ(), memEnv+"="+mode, memEnv+"_DATA="+data, memEnv+"_INDEX="+indexDir)
	out, err := cmd.CombinedOutput()
	if err != nil {
		b.Fatalf("%s child: %v\n%s", mode, err, out)
	}
	_, js, ok := strings.Cut(string(out), "MEMREPORT ")
	if !ok {
		b.Fatalf("%s child reported nothing:\n%s", mode, out)
	}
	js, _, _ = strings.Cut(js, "\n")
	var rep memReport
	if err := json.Unmarshal([]byte(js), &rep); err != nil {
		b.Fatal(err)
	}
	return rep
}

// BenchmarkIngestMemory runs a cold ingest of the ingest corpus in a fresh
// process and reports its peak RSS (VmHWM, reset after the model loaded)
// above the loaded model; then the same for the raw embedder alone over the
// same chunks, which is ONNX Runtime's own working memory (activations,
// arena). over-MB = ingest peak − raw-embedder peak − one copy of the vectors:
// what the pipeline and index add.
func BenchmarkIngestMemory(b *testing.B) {
	c := buildCorpus(b, ingestCorpus())
	var ing, raw memReport
	for i := 0; b.Loop(); i++ {
		ing = memChild(b, "ingest", c.Dir, filepath.Join(b.TempDir(), fmt.Sprint(i)))
		raw = memChild(b, "raw", c.Dir, "")
	}
	vectorsMB := float64(ing.Chunks*embed.Dim*4) / (1 << 20)
	aboveMB := float64(ing.PeakKB-ing.BaseRSSKB) / 1024
	rawMB := float64(raw.PeakKB-raw.BaseRSSKB) / 1024
	b.ReportMetric(float64(ing.BaseRSSKB-ing.StartRSSKB)/1024, "model-MB")
	b.ReportMetric(aboveMB, "peak-above-model-MB")
	b.ReportMetric(rawMB, "raw-embed-peak-MB")
	b.ReportMetric(vectorsMB, "vectors-MB")
	b.ReportMetric(aboveMB-rawMB-vectorsMB, "over-MB")
	b.ReportMetric(float64(ing.Chunks), "chunks")
}

var noopFiles = flag.Int("noop.files", 100000, "small files in the no-op reindex benchmark's folder")

// BenchmarkNoopReindex is a reindex of a large folder where nothing
// changed (-noop.files files of one sentence each, in folders of 1,000):
// the walk, the stat of every file and its comparison with the index, and
// no commit. The index is built once by a real cold ingest with the int8
// model (the no-op path does not depend on the model), reported as cold-ms.
func BenchmarkNoopReindex(b *testing.B) {
	data := filepath.Join(b.TempDir(), "data")
	words := strings.Fields("budget roadmap incident review hiring onboarding latency quota invoice audit backup release")
	for i := range *noopFiles {
		dir := filepath.Join(data, fmt.Sprintf("d%03d", i/1000))
		if i%1000 == 0 {
			if err := os.MkdirAll(dir, 0o755); err != nil {
				b.Fatal(err)
			}
		}
		text := fmt.Sprintf("Note %d about the %s of team %d.\n", i, words[i%len(words)], i%97)
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("n%05d.txt", i)), []byte(text), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	e := openEngine(b, data, filepath.Join(b.TempDir(), "index"), nil, func(cfg *engine.Config) { cfg.Model = model.Int8Name })
	start := time.Now()
	res := reindex(b, e)
	cold := time.Since(start)
	if res.FilesAdded != *noopFiles {
		b.Fatalf("cold ingest added %d of %d files: %+v", res.FilesAdded, *noopFiles, res)
	}
	b.Logf("cold: %d files, %d chunks in %v", res.FilesAdded, res.ChunksTotal, cold)
	benchNoop(b, e, float64(cold.Microseconds())/1e3)
	b.ReportMetric(float64(*noopFiles), "files")
}

// benchNoop times reindexes of e's folder where nothing changed (ms), next
// to the cold ingest that built the index (cold-ms).
func benchNoop(b *testing.B, e *engine.Engine, coldMS float64) {
	b.ReportAllocs()
	var total time.Duration
	var stats pipeline.Stats
	for b.Loop() {
		start := time.Now()
		res := reindex(b, e)
		total += time.Since(start)
		if res.FilesAdded+res.FilesUpdated+res.FilesRemoved+res.FilesFailed != 0 {
			b.Fatalf("no-op reindex changed files: %+v", res)
		}
		stats = res.Stats
	}
	b.ReportMetric(float64(total.Microseconds())/1e3/float64(b.N), "ms")
	b.ReportMetric(coldMS, "cold-ms")
	b.Logf("last run: %s", stats)
}
