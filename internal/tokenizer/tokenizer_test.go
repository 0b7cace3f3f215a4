package tokenizer

import (
	"bufio"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"
)

// modelDir is where setup put all-MiniLM-L6-v2.
func modelDir() string {
	if d := os.Getenv("MICRO_RAG_MODEL_DIR"); d != "" {
		return d
	}
	return cachedModel("all-MiniLM-L6-v2")
}

// cachedModel is the folder setup (or `make models`) put the model name in.
func cachedModel(name string) string {
	cache := os.Getenv("XDG_CACHE_HOME")
	if cache == "" {
		home, _ := os.UserHomeDir()
		cache = filepath.Join(home, ".cache")
	}
	return filepath.Join(cache, "micro-rag-mcp", "models", name)
}

// loadZH is bge-small-zh-v1.5's cased tokenizer, from `make models`.
var loadZH = sync.OnceValues(func() (*Tokenizer, error) {
	return Load(filepath.Join(cachedModel("bge-small-zh-v1.5-int8"), "tokenizer.json"))
})

var (
	loadOnce sync.Once
	loaded   *Tokenizer
	loadErr  error
)

func load(tb testing.TB) *Tokenizer {
	tb.Helper()
	loadOnce.Do(func() { loaded, loadErr = Load(filepath.Join(modelDir(), "tokenizer.json")) })
	if loadErr != nil {
		tb.Fatalf("load tokenizer (run make setup): %v", loadErr)
	}
	return loaded
}

type fixture struct {
	Text string  `json:"text"`
	IDs  []int32 `json:"ids"`
}

func fixtures(tb testing.TB) []fixture { return fixturesIn(tb, "testdata/fixtures.jsonl") }

func fixturesIn(tb testing.TB, path string) []fixture {
	tb.Helper()
	f, err := os.Open(path)
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	var out []fixture
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var fx fixture
		if err := json.Unmarshal(sc.Bytes(), &fx); err != nil {
			tb.Fatal(err)
		}
		out = append(out, fx)
	}
	if err := sc.Err(); err != nil {
		tb.Fatal(err)
	}
	return out
}

// TestFixtures compares Encode with Hugging Face tokenizers on every fixture.
func TestFixtures(t *testing.T) {
	compareFixtures(t, load(t), fixtures(t))
}

// TestFixturesCased does the same for bge-small-zh's cased vocabulary (no
// lowercasing, accents kept).
func TestFixturesCased(t *testing.T) {
	tk, err := loadZH()
	if err != nil {
		t.Fatalf("load bge-small-zh tokenizer (run make models): %v", err)
	}
	if tk.Lowercase() || tk.VocabSize() != 21128 {
		t.Fatalf("lowercase %v, vocab %d: not bge-small-zh's tokenizer", tk.Lowercase(), tk.VocabSize())
	}
	compareFixtures(t, tk, fixturesIn(t, "testdata/fixtures-zh.jsonl"))
}

func compareFixtures(t *testing.T, tk *Tokenizer, fx []fixture) {
	if len(fx) < 300 {
		t.Fatalf("only %d fixtures", len(fx))
	}
	match := 0
	for _, f := range fx {
		got := tk.Encode(nil, f.Text, MaxSeqLen)
		if slices.Equal(got, f.IDs) {
			match++
			continue
		}
		t.Errorf("text %q\n got  %v\n want %v", f.Text, got, f.IDs)
	}
	t.Logf("%d of %d fixtures match", match, len(fx))
}

func TestLoad(t *testing.T) {
	tk := load(t)
	if got := tk.VocabSize(); got != 30522 {
		t.Errorf("VocabSize = %d, want 30522", got)
	}
	if _, err := Load("testdata/missing.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
	if !tk.Lowercase() {
		t.Error("all-MiniLM-L6-v2's vocabulary is uncased")
	}
	raw, err := os.ReadFile(filepath.Join(modelDir(), "tokenizer.json"))
	if err != nil {
		t.Fatal(err)
	}
	// Each unsupported configuration is refused with what it is and what
	// is supported.
	for _, c := range []struct{ old, new, want string }{
		{`"model": {
    "type": "WordPiece"`, `"model": {"type": "Unigram"`, `its model is "Unigram" (SentencePiece)`},
		{`"model": {
    "type": "WordPiece"`, `"model": {"type": "BPE"`, `its model is "BPE"`},
		{`"type": "BertNormalizer"`, `"type": "NFC"`, `its normalizer is "NFC"`},
		{`"strip_accents": null`, `"strip_accents": false`, `lowercase=true strip_accents=false`},
		{`"type": "BertPreTokenizer"`, `"type": "Metaspace"`, `its pre_tokenizer is "Metaspace"`},
	} {
		if !strings.Contains(string(raw), c.old) {
			t.Fatalf("tokenizer.json lacks %s", c.old)
		}
		bad := filepath.Join(t.TempDir(), "tokenizer.json")
		if err := os.WriteFile(bad, []byte(strings.Replace(string(raw), c.old, c.new, 1)), 0o600); err != nil {
			t.Fatal(err)
		}
		_, err := Load(bad)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "supported: BERT-style WordPiece") {
			t.Errorf("%s: err = %v", c.new, err)
		}
	}
}

func TestEncodeAppendsAndTruncates(t *testing.T) {
	tk := load(t)
	dst := []int32{7, 8}
	got := tk.Encode(dst, "hello world", 0)
	if want := []int32{7, 8, 101, 7592, 2088, 102}; !slices.Equal(got, want) {
		t.Fatalf("Encode = %v, want %v", got, want)
	}
	long := strings.Repeat("word ", 1000)
	for _, max := range []int{2, 3, 10, 256} {
		got := tk.Encode(nil, long, max)
		if len(got) != max || got[0] != 101 || got[len(got)-1] != 102 {
			t.Errorf("maxLen %d: len %d, ends %d..%d", max, len(got), got[0], got[len(got)-1])
		}
	}
	if got := tk.Encode(nil, long, -1); len(got) != MaxSeqLen {
		t.Errorf("maxLen -1: len %d, want %d", len(got), MaxSeqLen)
	}
	if got := tk.Encode(nil, "", 0); !slices.Equal(got, []int32{101, 102}) {
		t.Errorf("empty: %v", got)
	}
}

// TestCount checks Count against Encode on every fixture short enough not
// to be truncated, and on the long ones without truncation.
func TestCount(t *testing.T) {
	tk := load(t)
	for _, f := range fixtures(t) {
		n := tk.Count(f.Text)
		if len(f.IDs) < MaxSeqLen && n != len(f.IDs)-2 {
			t.Errorf("Count(%q) = %d, want %d", f.Text, n, len(f.IDs)-2)
		}
		if full := tk.Encode(nil, f.Text, 1<<30); n != len(full)-2 {
			t.Errorf("Count(%q) = %d, untruncated Encode has %d pieces", f.Text, n, len(full)-2)
		}
	}
}

// TestFitPrefix checks the cut the chunker relies on: the prefix fits, it
// ends where a pre-token ends, and one more pre-token would not fit.
func TestFitPrefix(t *testing.T) {
	tk := load(t)
	texts := []string{
		"The quick brown fox jumps over the lazy dog.",
		"antidisestablishmentarianism is long; so is pneumonoultramicroscopicsilicovolcanoconiosis!",
		"café naïve 中文字 [CLS] hello [SEP]  trailing  ",
		strings.Repeat("Retrieval-augmented generation, with chunks. ", 40),
	}
	for _, f := range fixtures(t) {
		texts = append(texts, f.Text)
	}
	for _, text := range texts {
		total := tk.Count(text)
		for _, max := range []int{0, 1, 2, 5, 17, total - 1, total, total + 3} {
			if max < 0 {
				continue
			}
			n := tk.FitPrefix(text, max)
			if n < 0 || n > len(text) {
				t.Fatalf("FitPrefix(%q, %d) = %d out of range", text, max, n)
			}
			if c := tk.Count(text[:n]); c > max {
				t.Errorf("FitPrefix(%q, %d) = %d, but that prefix has %d pieces", text, max, n, c)
			}
			if total <= max {
				if n != len(text) {
					t.Errorf("FitPrefix(%q, %d) = %d, whole text fits", text, max, n)
				}
				continue
			}
			// The prefix ends at a pre-token end: its pieces are the
			// leading pieces of the whole text.
			whole := tk.Encode(nil, text, 1<<30)
			part := tk.Encode(nil, text[:n], 1<<30)
			if !slices.Equal(part[:len(part)-1], whole[:len(part)-1]) {
				t.Errorf("FitPrefix(%q, %d) = %d cuts inside a pre-token: %v vs %v", text, max, n, part, whole[:len(part)])
			}
			// Maximality: no longer cut that leaves the tokenisation intact
			// (a pre-token boundary) adds pieces and still fits.
			if len(text) > 200 {
				continue
			}
			base := tk.Count(text[:n])
			for m := n + 1; m < len(text); m++ {
				if !utf8.RuneStart(text[m]) {
					continue
				}
				c := tk.Count(text[:m])
				if c > base && c <= max && cutKeepsTokens(tk, text, m) {
					t.Errorf("FitPrefix(%q, %d) = %d, but text[:%d] ends a pre-token and fits", text, max, n, m)
					break
				}
			}
		}
	}
}

// cutKeepsTokens reports whether tokenising text[:m] and text[m:] apart
// gives the pieces of text: m lies between pre-tokens.
func cutKeepsTokens(tk *Tokenizer, text string, m int) bool {
	whole := tk.Encode(nil, text, 1<<30)
	a := tk.Encode(nil, text[:m], 1<<30)
	b := tk.Encode(nil, text[m:], 1<<30)
	joined := append(a[:len(a)-1:len(a)-1], b[1:]...)
	return slices.Equal(joined, whole)
}

// TestConcurrent runs Encode from several goroutines; with -race it also
// proves the Tokenizer is not written after Load.
func TestConcurrent(t *testing.T) {
	tk := load(t)
	fx := fixtures(t)
	var wg sync.WaitGroup
	errs := make(chan string, 8)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var buf []int32
			for i := range fx {
				f := fx[(i+g*37)%len(fx)]
				buf = tk.Encode(buf[:0], f.Text, 0)
				if !slices.Equal(buf, f.IDs) {
					errs <- fmt.Sprintf("goroutine %d: %q differs", g, f.Text)
					return
				}
				if tk.Count(f.Text) < len(f.IDs)-2 {
					errs <- fmt.Sprintf("goroutine %d: Count(%q) too small", g, f.Text)
					return
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}
}

func FuzzEncode(f *testing.F) {
	tk := load(f)
	for _, fx := range fixtures(f)[:120] {
		f.Add(fx.Text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		ids := tk.Encode(nil, text, 0)
		if len(ids) < 2 || len(ids) > MaxSeqLen || ids[0] != 101 || ids[len(ids)-1] != 102 {
			t.Fatalf("Encode(%q) = %v", text, ids)
		}
		for _, id := range ids {
			if id < 0 || int(id) >= tk.VocabSize() {
				t.Fatalf("Encode(%q): id %d out of range", text, id)
			}
		}
		n := tk.Count(text)
		if n+2 <= MaxSeqLen && n+2 != len(ids) {
			t.Fatalf("Count(%q) = %d, Encode gave %d ids", text, n, len(ids))
		}
		if n+2 > MaxSeqLen && len(ids) != MaxSeqLen {
			t.Fatalf("Count(%q) = %d, Encode not truncated to %d: %d", text, n, MaxSeqLen, len(ids))
		}
		if p := tk.FitPrefix(text, 10); p < 0 || p > len(text) || tk.Count(text[:p]) > 10 {
			t.Fatalf("FitPrefix(%q, 10) = %d", text, p)
		}
	})
}

// passages are seeded ~1000-character English texts.
func passages(n int) []string {
	words := strings.Fields(`the a of to and in is that for it with as on was by be this are from
		at or an have not which but they has their one were all can been more when there would
		retrieval embedding vector index search document chunk query semantic similarity model
		tokenizer sentence passage relevant results throughput latency concurrency pipeline
		incremental checksum manifest snapshot, compaction. however, therefore; (for example)`)
	rng := rand.New(rand.NewPCG(1, 2))
	out := make([]string, n)
	for i := range out {
		var b strings.Builder
		for b.Len() < 1000 {
			w := words[rng.IntN(len(words))]
			if b.Len() == 0 || rng.IntN(12) == 0 {
				w = strings.ToUpper(w[:1]) + w[1:]
			}
			b.WriteString(w)
			b.WriteByte(' ')
		}
		out[i] = b.String()
	}
	return out
}

func BenchmarkEncode(b *testing.B) {
	tk := load(b)
	ps := passages(64)
	var bytes, tokens int
	for _, p := range ps {
		bytes += len(p)
	}
	b.SetBytes(int64(bytes / len(ps)))
	b.ReportAllocs()
	buf := make([]int32, 0, MaxSeqLen)
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		buf = tk.Encode(buf[:0], ps[i%len(ps)], 0)
		tokens += len(buf)
	}
	b.ReportMetric(float64(tokens)/b.Elapsed().Seconds(), "tokens/s")
}
