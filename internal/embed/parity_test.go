package embed

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// TestMatchesONNXReference compares every model of the table with Python's
// onnxruntime and tokenizers running the same files
// (testdata/gen_golden_onnx.py): tokenisation, truncation, prefixes and
// pooling must agree to |1 - cos| <= 1e-5 for each text, passages and
// queries, embedded one at a time as the reference does.
func TestMatchesONNXReference(t *testing.T) {
	for _, m := range model.Models {
		if m.Hub.Release {
			continue // built by this project, no published reference (docs/int8.md compares it to fp32)
		}
		// int8 kernels differ by CPU (AVX2 without VNNI against VNNI): the
		// references were made on another CPU; observed up to 0.0057 there.
		tol := 1e-5
		if strings.HasSuffix(m.Name, "-int8") {
			tol = 1e-2
		}
		t.Run(m.Name, func(t *testing.T) {
			e := openModel(t, m, "the bge models come with `make models`")
			gs := loadGoldenFile(t, "testdata/golden-"+m.Name+".jsonl", e.Dim(), 70)
			worst, truncated, queries := 0.0, 0, 0
			var v []float32
			for i, g := range gs {
				v = embedGolden(t, e, v, g)
				if g.Query {
					queries++
				}
				d := 1 - cosine(v, g.Embedding)
				worst = max(worst, d)
				if d > tol {
					t.Errorf("text %d %.40q (query %v): 1-cos %.2g with the reference", i, g.Text, g.Query, d)
				}
				text := g.Text
				if g.Query {
					text = m.Spec.QueryPrefix + text
				} else {
					text = m.Spec.PassagePrefix + text
				}
				if n := len(e.Tokenizer().Encode(nil, text, e.MaxLen())); n != g.Tokens {
					t.Errorf("text %d %.40q: %d ids, the reference has %d", i, g.Text, n, g.Tokens)
				}
				if g.Tokens == e.MaxLen() {
					truncated++
				}
			}
			if truncated < 2 || queries < 5 {
				t.Errorf("only %d texts reach the %d-id limit and %d are queries", truncated, e.MaxLen(), queries)
			}
			// In one batch, padded: the vectors the index stores.
			var passages []string
			var want [][]float32
			for _, g := range gs {
				if !g.Query {
					passages, want = append(passages, g.Text), append(want, g.Embedding)
				}
			}
			batch, err := e.Embed(nil, passages)
			if err != nil {
				t.Fatal(err)
			}
			worstBatch, dim := 0.0, e.Dim()
			for i := range passages {
				d := 1 - cosine(batch[i*dim:(i+1)*dim], want[i])
				worstBatch = max(worstBatch, d)
				if d > tol {
					t.Errorf("text %d %.40q in a batch: 1-cos %.2g with the reference", i, passages[i], d)
				}
			}
			t.Logf("%d texts (%d queries, %d truncated at %d): max 1-cos %.2g one by one, %.2g in batches",
				len(gs), queries, truncated, e.MaxLen(), worst, worstBatch)
		})
	}
}

func TestDynamicQuant(t *testing.T) {
	for _, m := range model.Models {
		files, err := m.Locate("")
		if err != nil {
			t.Fatal(err)
		}
		q, err := dynamicQuant(files.ONNX)
		if err != nil || q != (strings.HasSuffix(m.Name, "-int8") || m.Name == model.Q8Name) {
			t.Errorf("%s: dynamicQuant = %v, %v", m.Name, q, err)
		}
	}
	// The name across the boundary of two reads, and at the very end.
	for _, at := range []int{1<<20 - 10, 1<<20 - 1, 3 << 20} {
		p := filepath.Join(t.TempDir(), "m.onnx")
		data := append(make([]byte, at), "DynamicQuantizeLinear"...)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if q, err := dynamicQuant(p); !q || err != nil {
			t.Errorf("name at %d: %v, %v", at, q, err)
		}
		if err := os.WriteFile(p, data[:len(data)-1], 0o644); err != nil {
			t.Fatal(err)
		}
		if q, err := dynamicQuant(p); q || err != nil {
			t.Errorf("cut name at %d: %v, %v", at, q, err)
		}
	}
}

// A one-sequence-per-Run model runs its Runs side by side on one thread
// each; the vectors must be the very bits one Run after another gives.
func TestSideBySideRunsSameVectors(t *testing.T) {
	m, _ := model.Lookup(model.Int8Name)
	files, err := m.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	ts := texts(loadGolden(t))
	var vecs [2][]float32
	for i, threads := range []int{1, 2} {
		e, err := New(Config{ModelPath: files.ONNX, TokenizerPath: files.Tokenizer, Threads: threads})
		if err != nil {
			t.Fatal(err)
		}
		if e.maxBatch != 1 || e.parallel != threads || e.cfg.Threads != 1 {
			t.Fatalf("threads %d: maxBatch %d, parallel %d, ONNX Runtime threads %d; want 1, %d, 1", threads, e.maxBatch, e.parallel, e.cfg.Threads, threads)
		}
		if vecs[i], err = e.Embed(nil, ts); err != nil {
			t.Fatal(err)
		}
		e.Close()
	}
	if !slices.Equal(vecs[0], vecs[1]) {
		t.Fatalf("%d texts: side-by-side Runs give other vectors than one at a time", len(ts))
	}
}

// TestDefaultModelNearFP32 holds the default (project-made int8) file to
// fp32's vectors: the fp32 reference texts, embedded as the server embeds
// them (one text a Run), must keep a mean 1 - cos of at most 0.002 and no
// text over 0.005 (this file: 0.0011 and 0.0020 on the Xeon). The file
// before its outlier channels (98ffcba2…) fails it (0.0056, 0.0122), so a
// change of QUANTIZE_ARGS or of scripts/quantize/outliers.json that loses
// that closeness fails here.
func TestDefaultModelNearFP32(t *testing.T) {
	m, err := model.Lookup(model.DefaultName)
	if err != nil {
		t.Fatal(err)
	}
	e := openModel(t, m, "make setup builds it")
	gs := loadGoldenFile(t, "testdata/golden-"+model.FP32Name+".jsonl", e.Dim(), 70)
	var v []float32
	sum, worst := 0.0, 0.0
	for i, g := range gs {
		v = embedGolden(t, e, v, g)
		d := 1 - cosine(v, g.Embedding)
		sum, worst = sum+d, max(worst, d)
		if d > 0.005 {
			t.Errorf("text %d %.40q: 1-cos %.4f with fp32", i, g.Text, d)
		}
	}
	mean := sum / float64(len(gs))
	if mean > 0.002 {
		t.Errorf("mean 1-cos %.4f with fp32 over %d texts, want at most 0.002", mean, len(gs))
	}
	t.Logf("%s against fp32, %d texts: mean 1-cos %.5f, max %.5f", m.Name, len(gs), mean, worst)
}

// openModel opens the table's model m from the cache, closed when the test
// ends; missing says how a missing model is installed.
func openModel(t testing.TB, m model.Model, missing string) *Embedder {
	t.Helper()
	files, err := m.Locate("")
	if err != nil {
		t.Fatalf("%v (%s)", err, missing)
	}
	e, err := New(Config{ModelPath: files.ONNX, TokenizerPath: files.Tokenizer, Spec: m.Spec})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.Close() })
	return e
}

// embedGolden embeds one reference text into v[:0] as the server does: a
// query with the query prefix, a passage alone in its Run.
func embedGolden(t *testing.T, e *Embedder, v []float32, g golden) []float32 {
	t.Helper()
	var err error
	if g.Query {
		v, err = e.EmbedQuery(v[:0], g.Text)
	} else {
		v, err = e.Embed(v[:0], []string{g.Text})
	}
	if err != nil {
		t.Fatal(err)
	}
	return v
}
