package localstore

import (
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// debianPython is the interpreter that Debian's python3-faiss (make setup-test)
// installs into; a python3 earlier on PATH may be another one.
const debianPython = "/usr/bin/python3"

// pyCheckFaiss opens faiss.index with Python's faiss and compares it with
// the live vectors given as JSON {id: vector}: same ids, same vectors, and
// each vector's nearest neighbour is itself.
const pyCheckFaiss = `
import json, sys
import faiss, numpy as np
index = faiss.read_index(sys.argv[1])
want = {int(k): np.array(v, dtype="float32") for k, v in json.load(open(sys.argv[2])).items()}
kind = type(faiss.downcast_index(index)).__name__
flat = faiss.downcast_index(faiss.downcast_index(index).index)
assert kind == "IndexIDMap2" and isinstance(flat, faiss.IndexFlat), (kind, type(flat))
assert flat.metric_type == faiss.METRIC_INNER_PRODUCT, flat.metric_type
ids = faiss.vector_to_array(faiss.downcast_index(index).id_map)
assert index.ntotal == len(want) and sorted(ids.tolist()) == sorted(want), (index.ntotal, len(want))
for i, v in want.items():
    got = index.reconstruct(i)
    assert np.abs(got - v).max() < 1e-6, i
q = np.stack(list(want.values()))
D, I = index.search(q, 1)
assert I[:, 0].tolist() == list(want), "nearest neighbour is not itself"
print("ok", index.ntotal)
`

// TestFaissFileOpensInPythonFaiss: after commits that add, replace and
// remove files, and a merge, faiss.index is a file Python's faiss reads and
// it holds exactly the live vectors.
func TestFaissFileOpensInPythonFaiss(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(8, 9))
	s := openStore(t, dir)
	defer s.Close()
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	vecs := map[string][][]float32{}
	for round := range 4 {
		for i := range 6 {
			p := fmt.Sprintf("f%d.md", (round*3+i)%10)
			vecs[p] = putFile(t, w, rng, p, 1+rng.IntN(4))
		}
		w.RemoveFile(fmt.Sprintf("f%d.md", round))
		delete(vecs, fmt.Sprintf("f%d.md", round))
		if err := w.Commit(false); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Merge(); err != nil {
		t.Fatal(err)
	}
	want := map[string][]float32{}
	for p, vs := range vecs {
		f, _ := w.st.files.Get(p)
		for i, id := range f.ChunkIDs {
			want[fmt.Sprint(id)] = vs[i]
		}
	}
	w.Close()
	raw, _ := json.Marshal(want)
	wantPath := filepath.Join(t.TempDir(), "want.json")
	if err := os.WriteFile(wantPath, raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command(debianPython, "-c", pyCheckFaiss, filepath.Join(dir, FaissFile), wantPath).CombinedOutput()
	if err != nil {
		t.Fatalf("python faiss (make setup-test installs python3-faiss): %v\n%s", err, out)
	}
	if got := strings.TrimSpace(string(out)); got != fmt.Sprint("ok ", len(want)) {
		t.Fatalf("python faiss says %q, want ok %d", got, len(want))
	}
}
