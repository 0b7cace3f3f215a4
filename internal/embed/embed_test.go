package embed

import (
	"bufio"
	"encoding/json"
	"math"
	"os"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
)

// shared is one embedder for the tests of this process (the runtime loads
// once per process anyway). Close is tested on its own instance.
var shared = sync.OnceValues(func() (*Embedder, error) { return New(Config{}) })

func testEmbedder(t testing.TB) *Embedder {
	t.Helper()
	e, err := shared()
	if err != nil {
		t.Fatalf("creating the embedder (run `make setup` first): %v", err)
	}
	return e
}

// TestRuntimeVersion: once an embedder is made, RuntimeVersion reads the
// loaded library's version: the one make setup installs.
func TestRuntimeVersion(t *testing.T) {
	testEmbedder(t)
	if got := RuntimeVersion(); got != model.ORTTested {
		t.Errorf("RuntimeVersion() = %q, want %q", got, model.ORTTested)
	}
}

// golden is one reference embedding: of a passage, or of a query (after
// the model's query prefix).
type golden struct {
	Text      string    `json:"text"`
	Query     bool      `json:"query"`
	Tokens    int       `json:"tokens"`
	Embedding []float32 `json:"embedding"`
}

func loadGolden(t testing.TB) []golden { return loadGoldenFile(t, "testdata/golden.jsonl", Dim, 50) }

// loadGoldenFile reads at least atLeast records of dim floats from path.
func loadGoldenFile(t testing.TB, path string, dim, atLeast int) []golden {
	t.Helper()
	out := readJSONL[golden](t, path)
	for _, g := range out {
		if len(g.Embedding) != dim {
			t.Fatalf("golden %q has %d dims", g.Text, len(g.Embedding))
		}
	}
	if len(out) < atLeast {
		t.Fatalf("only %d golden records in %s", len(out), path)
	}
	return out
}

// readJSONL reads one T from each line of the file at path.
func readJSONL[T any](t testing.TB, path string) []T {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func texts(gs []golden) []string {
	var ts []string
	for _, g := range gs {
		ts = append(ts, g.Text)
	}
	return ts
}

func cosine(a, b []float32) float64 {
	var ab, aa, bb float64
	for i := range a {
		ab += float64(a[i]) * float64(b[i])
		aa += float64(a[i]) * float64(a[i])
		bb += float64(b[i]) * float64(b[i])
	}
	return ab / math.Sqrt(aa*bb)
}

// TestMatchesSentenceTransformers compares with embeddings computed by
// sentence-transformers itself (testdata/gen_golden.py).
func TestMatchesSentenceTransformers(t *testing.T) {
	e := testEmbedder(t)
	gs := loadGolden(t)
	got, err := e.Embed(nil, texts(gs))
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(gs)*Dim {
		t.Fatalf("got %d floats, want %d", len(got), len(gs)*Dim)
	}
	minCos, worst, truncated := 2.0, "", 0
	for i, g := range gs {
		v := got[i*Dim : (i+1)*Dim]
		c := cosine(v, g.Embedding)
		if c < minCos {
			minCos, worst = c, g.Text
		}
		if c < 0.9999 {
			t.Errorf("text %d %.40q: cosine %.6f with sentence-transformers", i, g.Text, c)
		}
		if n := len(e.Tokenizer().Encode(nil, g.Text, tokenizer.MaxSeqLen)); n != g.Tokens {
			t.Errorf("text %d %.40q: %d ids, sentence-transformers has %d", i, g.Text, n, g.Tokens)
		}
		if g.Tokens == tokenizer.MaxSeqLen {
			truncated++
		}
	}
	if truncated < 4 {
		t.Errorf("only %d golden texts reach the 256-token limit", truncated)
	}
	t.Logf("%d texts (%d truncated at %d tokens): min cosine %.9f, 1-cos %.2g (%.40q)", len(gs), truncated, tokenizer.MaxSeqLen, minCos, 1-minCos, worst)
}

func TestUnitLengthAndAppend(t *testing.T) {
	e := testEmbedder(t)
	prefix := []float32{42, 43}
	got, err := e.Embed(prefix, []string{"first text", "a second, somewhat longer text about indexing"})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2+2*Dim || got[0] != 42 || got[1] != 43 {
		t.Fatalf("Embed did not append after the caller's data: len %d, head %v", len(got), got[:2])
	}
	for i := range 2 {
		v := got[2+i*Dim : 2+(i+1)*Dim]
		var sq float64
		for _, x := range v {
			sq += float64(x) * float64(x)
		}
		if math.Abs(math.Sqrt(sq)-1) > 1e-5 {
			t.Errorf("vector %d has norm %v", i, math.Sqrt(sq))
		}
	}
	if c := cosine(got[2:2+Dim], got[2+Dim:]); c > 0.99 {
		t.Errorf("different texts give nearly the same vector (cos %v)", c)
	}
	same, err := e.Embed(got[:0], nil)
	if err != nil || len(same) != 0 {
		t.Errorf("no texts: len %d, err %v", len(same), err)
	}
}

// Padding and batch composition must not change a text's vector.
func TestBatchInvariance(t *testing.T) {
	e := testEmbedder(t)
	ts := texts(loadGolden(t))
	batch, err := e.Embed(nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	minCos := 2.0
	var one []float32
	for i, text := range ts {
		one, err = e.Embed(one[:0], []string{text})
		if err != nil {
			t.Fatal(err)
		}
		c := cosine(one, batch[i*Dim:(i+1)*Dim])
		minCos = min(minCos, c)
		if c < 0.99999 {
			t.Errorf("text %d %.40q: alone vs in a batch, cosine %.7f", i, text, c)
		}
	}
	t.Logf("min cosine alone vs batch: %.9f, 1-cos %.2g", minCos, 1-minCos)
}

func TestEmbedTokensMatchesEmbed(t *testing.T) {
	e := testEmbedder(t)
	ts := texts(loadGolden(t))[:20]
	var ids [][]int32
	for _, s := range ts {
		ids = append(ids, e.Tokenizer().Encode(nil, s, tokenizer.MaxSeqLen))
	}
	a, err := e.Embed(nil, ts)
	if err != nil {
		t.Fatal(err)
	}
	b, err := e.EmbedTokens(nil, ids)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(a, b) {
		t.Error("EmbedTokens differs from Embed on the same texts")
	}

	long := make([]int32, tokenizer.MaxSeqLen+1)
	if _, err := e.EmbedTokens(nil, [][]int32{ids[0], long}); err == nil || !strings.Contains(err.Error(), "sequence 1") {
		t.Errorf("over-long sequence: err = %v", err)
	}
	if _, err := e.EmbedTokens(nil, [][]int32{{}}); err == nil {
		t.Error("empty sequence accepted")
	}
}

// shortGolden keeps the records under 64 tokens, for tests that need many
// texts but not long ones.
func shortGolden(t testing.TB) []golden {
	var out []golden
	for _, g := range loadGolden(t) {
		if g.Tokens < 64 {
			out = append(out, g)
		}
	}
	return out
}

// More texts than one batch holds, in one call.
func TestManyTexts(t *testing.T) {
	e := testEmbedder(t)
	gs := shortGolden(t)
	var want []golden
	for len(want) < 2*DefaultMaxBatch+5 {
		want = append(want, gs...)
	}
	want = want[:2*DefaultMaxBatch+5]
	got, err := e.Embed(nil, texts(want))
	if err != nil {
		t.Fatal(err)
	}
	for i, g := range want {
		if c := cosine(got[i*Dim:(i+1)*Dim], g.Embedding); c < 0.9999 {
			t.Errorf("text %d: cosine %v", i, c)
		}
	}
}

func TestConcurrentEmbed(t *testing.T) {
	e := testEmbedder(t)
	ts := texts(shortGolden(t))
	halves := [][]string{ts[:len(ts)/2], ts[len(ts)/2:]}
	var want [2][]float32
	for i, h := range halves {
		var err error
		if want[i], err = e.Embed(nil, h); err != nil {
			t.Fatal(err)
		}
	}
	var wg sync.WaitGroup
	var got [2][]float32
	var errs [2]error
	for i, h := range halves {
		wg.Go(func() {
			for range 3 {
				got[i], errs[i] = e.Embed(got[i][:0], h)
				if errs[i] != nil {
					return
				}
			}
		})
	}
	wg.Wait()
	for i := range halves {
		if errs[i] != nil {
			t.Fatal(errs[i])
		}
		for k := range len(halves[i]) {
			if c := cosine(got[i][k*Dim:(k+1)*Dim], want[i][k*Dim:(k+1)*Dim]); c < 0.99999 {
				t.Errorf("goroutine %d text %d: cosine %v with the sequential result", i, k, c)
			}
		}
	}
}

func TestClose(t *testing.T) {
	e, err := New(Config{Threads: 1})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := e.Embed(nil, []string{"before close"}); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Fatal(err)
	}
	if err := e.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := e.Embed(nil, []string{"after close"}); err == nil {
		t.Error("Embed after Close succeeded")
	}
}

func TestNewReportsMissingFiles(t *testing.T) {
	dir := t.TempDir()
	if _, err := New(Config{ModelPath: dir + "/model.onnx", TokenizerPath: dir + "/tokenizer.json"}); err == nil {
		t.Error("New succeeded without model files")
	}
	if _, err := New(Config{ORTLibrary: dir + "/libonnxruntime.so"}); err == nil || !strings.Contains(err.Error(), "make setup") {
		t.Errorf("missing runtime: err = %v", err)
	}
}

func TestPlan(t *testing.T) {
	mk := func(lens ...int) [][]int32 {
		var s [][]int32
		for _, n := range lens {
			s = append(s, make([]int32, n))
		}
		return s
	}
	cases := []struct {
		name     string
		lens     []int
		maxBatch int
		want     []int
	}{
		{"empty", nil, 64, []int{0}},
		{"one", []int{7}, 64, []int{0, 1}},
		{"even lengths stay together", slices.Repeat([]int{200}, 10), 64, []int{0, 10}},
		{"one long text is run alone", append([]int{256}, slices.Repeat([]int{10}, 63)...), 64, []int{0, 1, 64}},
		{"max batch", slices.Repeat([]int{50}, 10), 4, []int{0, 2, 6, 10}},
		// Runs stay within maxRunAttention: 16 sequences of 256 ids, 64 of 128.
		{"long sequences in runs of 16", slices.Repeat([]int{256}, 64), 64, []int{0, 16, 32, 48, 64}},
		{"half length in runs of 64", slices.Repeat([]int{128}, 64), 64, []int{0, 64}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := &Embedder{maxBatch: c.maxBatch, runPenalty: 128}
			sc := &scratch{}
			seqs := mk(c.lens...)
			for i := range seqs {
				sc.order = append(sc.order, i)
			}
			e.plan(sc, seqs)
			if c.name == "max batch" {
				// Any split into runs of at most 4 costs the same; check the rule.
				for r := 0; r+1 < len(sc.runs); r++ {
					if n := sc.runs[r+1] - sc.runs[r]; n > c.maxBatch || n == 0 {
						t.Errorf("run of %d in %v", n, sc.runs)
					}
				}
				if len(sc.runs) != 4 || sc.runs[0] != 0 || sc.runs[3] != 10 {
					t.Errorf("runs %v, want 3 runs covering 0..10", sc.runs)
				}
				return
			}
			if !slices.Equal(sc.runs, c.want) {
				t.Errorf("runs %v, want %v", sc.runs, c.want)
			}
		})
	}
}

// TestQueryDoesNotQueueBehindBatch: a one-text query finishes while a large
// batch started before it is held in the middle of its call, just before
// the model runs, because calls do not share buffers or a lock.
func TestQueryDoesNotQueueBehindBatch(t *testing.T) {
	e := testEmbedder(t)
	long := strings.Repeat("The harbour cranes unload containers from ships all night long. ", 16)
	batch := slices.Repeat([]string{long}, 64)
	held, release := make(chan struct{}), make(chan struct{})
	var first atomic.Bool
	hold := func() {
		if first.CompareAndSwap(false, true) { // the batch's first run
			close(held)
			<-release
		}
	}
	e.beforeRun.Store(&hold)
	defer e.beforeRun.Store(nil)
	finished := make(chan error)
	go func() {
		_, err := e.Embed(nil, batch)
		finished <- err
	}()
	<-held
	q, err := e.Embed(nil, []string{"where are containers unloaded?"})
	close(release)
	if err != nil || len(q) != Dim {
		t.Fatalf("query: %v (%d floats)", err, len(q))
	}
	if err := <-finished; err != nil {
		t.Fatal(err)
	}
}
