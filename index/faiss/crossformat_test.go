package faiss

import (
	"encoding/json"
	"flag"
	"math"
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// Cross-format proof against upstream FAISS; testdata/crosswrite.py says how
// the files were made.

var update = flag.Bool("update", false, "rewrite testdata/go_written.index")

// Must match the GO_* constants in testdata/crosswrite.py.
const (
	goSeed, goQSeed           = 7, 8
	goN, goD, goNQ, goK       = 100, 8, 4, 5
	goID0               int64 = 2000
)

// lcgVectors makes unit vectors from a 32-bit LCG that crosswrite.py
// reproduces bit for bit (float64 maths, normalised in order).
func lcgVectors(seed uint32, n, d int) []float32 {
	state := seed
	out := make([]float32, 0, n*d)
	raw := make([]float64, d)
	for range n {
		var s float64
		for j := range raw {
			state = state*1664525 + 1013904223
			raw[j] = float64(state>>8)/float64(1<<24)*2 - 1
		}
		for _, v := range raw {
			s += v * v
		}
		norm := math.Sqrt(s)
		for _, v := range raw {
			out = append(out, float32(v/norm))
		}
	}
	return out
}

func TestCrossFormatGoWritten(t *testing.T) {
	idx := mustIDMap2(t, goD)
	ids := make([]int64, goN)
	for i := range ids {
		ids[i] = goID0 + int64(i)
	}
	if err := idx.AddWithIDs(lcgVectors(goSeed, goN, goD), ids); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "go.index")
	if err := WriteIndex(idx, path); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	golden := filepath.Join("testdata", "go_written.index")
	if *update {
		if err := os.WriteFile(golden, got, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(golden)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, want) {
		t.Fatalf("WriteIndex output (%d bytes) differs from %s (%d bytes), which upstream FAISS verified", len(got), golden, len(want))
	}
}

type pythonExpected struct {
	D         int         `json:"d"`
	K         int         `json:"k"`
	IDs       []int64     `json:"ids"`
	Vectors   [][]float64 `json:"vectors"`
	Queries   [][]float64 `json:"queries"`
	Distances [][]float64 `json:"distances"`
	Labels    [][]int64   `json:"labels"`
}

func TestCrossFormatPythonWritten(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("testdata", "python_expected.json"))
	if err != nil {
		t.Fatal(err)
	}
	var exp pythonExpected
	if err := json.Unmarshal(raw, &exp); err != nil {
		t.Fatal(err)
	}
	idx, err := ReadIndex(filepath.Join("testdata", "python_written.index"))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	if idx.D() != exp.D || idx.Ntotal() != int64(len(exp.IDs)) || idx.MetricType() != MetricInnerProduct {
		t.Fatalf("d %d ntotal %d metric %d, want d %d ntotal %d inner product", idx.D(), idx.Ntotal(), idx.MetricType(), exp.D, len(exp.IDs))
	}
	for i, id := range exp.IDs {
		v, err := idx.Reconstruct(id, nil)
		if err != nil {
			t.Fatal(err)
		}
		for j, f := range exp.Vectors[i] {
			if v[j] != float32(f) {
				t.Fatalf("id %d component %d: %v, python stored %v", id, j, v[j], f)
			}
		}
	}
	// Debian's 1.7.3 writes it back byte for byte as upstream wrote it.
	again := filepath.Join(t.TempDir(), "again.index")
	if err := WriteIndex(idx, again); err != nil {
		t.Fatal(err)
	}
	a, _ := os.ReadFile(again)
	b, _ := os.ReadFile(filepath.Join("testdata", "python_written.index"))
	if !slices.Equal(a, b) {
		t.Fatal("rewriting python_written.index changed its bytes")
	}
	for qi, q64 := range exp.Queries {
		q := make([]float32, len(q64))
		for j, f := range q64 {
			q[j] = float32(f)
		}
		dist, labels, err := idx.Search(q, exp.K)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(labels, exp.Labels[qi]) {
			t.Fatalf("query %d labels %v, python %v", qi, labels, exp.Labels[qi])
		}
		for j := range dist {
			if math.Abs(float64(dist[j])-exp.Distances[qi][j]) > 1e-5 {
				t.Fatalf("query %d distances %v, python %v", qi, dist, exp.Distances[qi])
			}
		}
	}
}
