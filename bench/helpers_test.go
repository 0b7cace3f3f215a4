package bench

import (
	"context"
	"flag"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Sizes can be changed without editing code, e.g.
// go test -bench Ingest ./bench/ -args -ingest.files=500
var (
	ingestFiles  = flag.Int("ingest.files", 200, "files in the cold-ingest corpus")
	reindexFiles = flag.Int("reindex.files", 10000, "small files in the no-op/1%-edit corpus")
	searchSizes  = flag.String("search.sizes", "10k,100k,1M", "index sizes for the search benchmark")
)

// The corpora every benchmark shares (seeded; cached by bench/corpus).
var (
	ingestCorpus = func() corpus.Config { return corpus.Config{Seed: 1, Files: *ingestFiles} }
	// embedCorpus is long plain text only, so it holds hundreds of
	// full-size chunks whatever the ingest mix draws.
	embedCorpus   = corpus.Config{Seed: 4, Files: 220, Exts: []string{".txt"}, MinChars: 5000, MaxChars: 20000}
	readerCorpus  = corpus.Config{Seed: 3, Files: 120, Exts: []string{".txt", ".md", ".pdf", ".docx", ".html", ".csv"}}
	reindexCorpus = func() corpus.Config {
		return corpus.Config{Seed: 2, Files: *reindexFiles, Exts: []string{".txt", ".md"}, MinChars: 100, MaxChars: 700}
	}
)

func buildCorpus(b *testing.B, cfg corpus.Config) corpus.Corpus {
	b.Helper()
	c, err := corpus.Build(context.Background(), cfg)
	if err != nil {
		b.Fatal(err)
	}
	return c
}

// corpusFiles lists a corpus's documents in walk order, optionally of one
// extension.
func corpusFiles(b testing.TB, dir string, exts ...string) []string {
	b.Helper()
	var out []string
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || d.Name() == corpus.MetaFile {
			return err
		}
		if len(exts) == 0 || slices.Contains(exts, filepath.Ext(p)) {
			out = append(out, p)
		}
		return nil
	})
	if err != nil {
		b.Fatal(err)
	}
	sort.Strings(out)
	return out
}

var shared struct {
	once sync.Once
	emb  *embed.Embedder
	err  error
}

// embedder is one real MiniLM session for the whole process (sessions are
// costly to create and are never closed before the process ends).
func embedder(b testing.TB) *embed.Embedder {
	b.Helper()
	shared.once.Do(func() { shared.emb, shared.err = embed.New(embed.Config{}) })
	if shared.err != nil {
		b.Fatalf("embedder (run make setup): %v", shared.err)
	}
	return shared.emb
}

func tok(b testing.TB) *tokenizer.Tokenizer { return embedder(b).Tokenizer() }

// chunkTexts extracts and chunks files exactly as a reindex does.
func chunkTexts(b testing.TB, files []string) []string {
	b.Helper()
	t := tok(b)
	var out []string
	for _, f := range files {
		doc, err := extract.Extract(context.Background(), f, extract.DefaultLimits, benchPDF)
		if err != nil {
			continue // the reindex counts it as failed and moves on too
		}
		for _, c := range chunk.Split(doc.Text, doc.PageStarts, chunk.Default, t) {
			out = append(out, c.Text)
		}
	}
	return out
}

// tokenize encodes texts as the embedder would.
func tokenize(t *tokenizer.Tokenizer, texts []string) [][]int32 {
	out := make([][]int32, len(texts))
	for i, s := range texts {
		out[i] = t.Encode(nil, s, tokenizer.MaxSeqLen)
	}
	return out
}

// embedRaw runs the model alone over pre-tokenised sequences in batches of
// embed.DefaultMaxBatch, the pipeline's batch size.
func embedRaw(b testing.TB, e *embed.Embedder, seqs [][]int32, dst []float32) []float32 {
	for i := 0; i < len(seqs); i += embed.DefaultMaxBatch {
		var err error
		dst, err = e.EmbedTokens(dst[:0], seqs[i:min(i+embed.DefaultMaxBatch, len(seqs))])
		if err != nil {
			b.Fatal(err)
		}
	}
	return dst
}

// warnLog keeps the engine's first warnings, which say why a file failed.
type warnLog struct {
	mu       sync.Mutex
	warnings []string
}

func (s *warnLog) Enabled(_ context.Context, l slog.Level) bool { return l >= slog.LevelWarn }
func (s *warnLog) Handle(_ context.Context, r slog.Record) error {
	line := r.Message
	r.Attrs(func(a slog.Attr) bool { line += " " + a.String(); return true })
	s.mu.Lock()
	if len(s.warnings) < 20 {
		s.warnings = append(s.warnings, line)
	}
	s.mu.Unlock()
	return nil
}
func (s *warnLog) WithAttrs([]slog.Attr) slog.Handler { return s }
func (s *warnLog) WithGroup(string) slog.Handler      { return s }

// problems returns the warnings logged so far, one a line.
func (s *warnLog) problems() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return strings.Join(s.warnings, "\n")
}

// copyTree copies a corpus so a benchmark may edit it.
func copyTree(b *testing.B, src, dst string) {
	b.Helper()
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(src, p)
		to := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(to, 0o755)
		}
		data, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		return os.WriteFile(to, data, 0o644)
	})
	if err != nil {
		b.Fatal(err)
	}
}

// benchPDF reads the benchmarks' PDFs outside an engine.
var benchPDF = extract.NewPDFEngine(extract.PDFOptions{}, nil)
