package model

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
)

func writeModel(t *testing.T, dir string) {
	t.Helper()
	os.MkdirAll(dir, 0o755)
	for _, n := range []string{ONNXName, TokenizerName} {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestLocateOrder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(cachedir.Env, cache)
	t.Setenv(EnvModelDir, "")

	// The folder looked in, and no fix: the engine adds the one that fits
	// the model (a download, --model-dir, the built model's asset).
	_, err := Locate("")
	if err == nil || !strings.Contains(err.Error(), filepath.Join(cache, "models", DefaultName)) || strings.Contains(err.Error(), "make setup") {
		t.Fatalf("missing model: err = %v, want the folder named and no fix", err)
	}

	def := filepath.Join(cache, "models", DefaultName)
	writeModel(t, def)
	f, err := Locate("")
	if err != nil || f.ONNX != filepath.Join(def, ONNXName) || f.Tokenizer != filepath.Join(def, TokenizerName) {
		t.Fatalf("default: %+v, %v", f, err)
	}

	env := t.TempDir()
	writeModel(t, env)
	t.Setenv(EnvModelDir, env)
	if f, err := Locate(""); err != nil || filepath.Dir(f.ONNX) != env {
		t.Fatalf("env: %+v, %v", f, err)
	}

	flag := t.TempDir()
	writeModel(t, flag)
	if f, err := Locate(flag); err != nil || filepath.Dir(f.Tokenizer) != flag {
		t.Fatalf("flag: %+v, %v", f, err)
	}

	// Only one of the two files: not a model.
	half := t.TempDir()
	os.WriteFile(filepath.Join(half, ONNXName), []byte("x"), 0o644)
	if _, err := Locate(half); err == nil || !strings.Contains(err.Error(), TokenizerName) {
		t.Fatalf("half model: err = %v", err)
	}
}

func TestORTLibraryOrder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(cachedir.Env, cache)
	t.Setenv(EnvORTLib, "")

	_, err := ORTLibrary("")
	if err == nil || !strings.Contains(err.Error(), "make setup") || !strings.Contains(err.Error(), "--ort-lib") {
		t.Fatalf("missing lib: err = %v", err)
	}
	lib := filepath.Join(cache, "lib", "libonnxruntime.so")
	os.MkdirAll(filepath.Dir(lib), 0o755)
	os.WriteFile(lib+".1.24.3", []byte("elf"), 0o644)
	os.Symlink("libonnxruntime.so.1.24.3", lib) // as setup installs it
	if got, err := ORTLibrary(""); err != nil || got != lib {
		t.Fatalf("default: %q, %v", got, err)
	}
	other := filepath.Join(t.TempDir(), "libort.so")
	os.WriteFile(other, []byte("elf"), 0o644)
	t.Setenv(EnvORTLib, other)
	if got, err := ORTLibrary(""); err != nil || got != other {
		t.Fatalf("env: %q, %v", got, err)
	}
	if _, err := ORTLibrary(filepath.Join(t.TempDir(), "nope.so")); err == nil {
		t.Fatal("flag naming a missing file was accepted")
	}
}

// The release tarball's layout: bin/micro-rag-mcp finds lib/ beside bin/
// before the cache; the flag and the environment still come first.
func TestORTLibraryBesideExecutable(t *testing.T) {
	cache, root := t.TempDir(), t.TempDir()
	t.Setenv(cachedir.Env, cache)
	t.Setenv(EnvORTLib, "")
	bin := filepath.Join(root, "bin")
	bundled := filepath.Join(root, "lib", ORTLibName)
	cached := filepath.Join(cache, "lib", ORTLibName)
	for _, p := range []string{bundled, cached} {
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.WriteFile(p, []byte("elf"), 0o644)
	}
	os.MkdirAll(bin, 0o755)
	if got, err := ortLibrary("", bin); err != nil || got != bundled {
		t.Fatalf("beside the executable: %q, %v; want %q", got, err, bundled)
	}
	os.Remove(bundled)
	if got, err := ortLibrary("", bin); err != nil || got != cached {
		t.Fatalf("cache after a missing bundle: %q, %v; want %q", got, err, cached)
	}
	os.Remove(cached)
	_, err := ortLibrary("", bin)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(root, "lib")) || !strings.Contains(err.Error(), cache) {
		t.Fatalf("both missing: the error should name both places: %v", err)
	}
	os.WriteFile(bundled, []byte("elf"), 0o644)
	t.Setenv(EnvORTLib, filepath.Join(root, "absent.so"))
	if _, err := ortLibrary("", bin); err == nil {
		t.Fatal("an env naming a missing file fell back to the bundled library")
	}
}

func TestLookupAndInt8Folder(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(cachedir.Env, cache)
	t.Setenv(EnvModelDir, "")
	def, err := Lookup("")
	if err != nil || def.Name != Q8Name || Models[0].Name != DefaultName {
		t.Fatalf("default = %+v, %v, want %s (Models[0])", def, err, Q8Name)
	}
	// fp32 is one flag away, sentence-transformers' own file.
	fp32, err := Lookup(FP32Name)
	if err != nil || fp32.Hub.Repo != "sentence-transformers/all-MiniLM-L6-v2" {
		t.Fatalf("Lookup(%q) = %+v, %v", FP32Name, fp32, err)
	}
	m, err := Lookup(Int8Name)
	if err != nil || m.Name != Int8Name {
		t.Fatalf("Lookup(%q) = %+v, %v", Int8Name, m, err)
	}
	if _, err := Lookup("all-MiniLM-L6-v2-fp16"); err == nil || !strings.Contains(err.Error(), Int8Name) {
		t.Fatalf("unknown model: %v, want the known names", err)
	}
	// Each model has its own folder: the fp32 files do not stand in for int8.
	writeModel(t, filepath.Join(cache, "models", FP32Name))
	if _, err := m.Locate(""); err == nil {
		t.Fatal("int8 model found in the fp32 folder")
	}
	dir := filepath.Join(cache, "models", Int8Name)
	writeModel(t, dir)
	if f, err := m.Locate(""); err != nil || filepath.Dir(f.ONNX) != dir {
		t.Fatalf("int8: %+v, %v", f, err)
	}
	if got, want := m.Hub.URL(m.Hub.Files[0]), "https://huggingface.co/Xenova/all-MiniLM-L6-v2/resolve/main/onnx/model_quantized.onnx"; got != want {
		t.Errorf("int8 URL = %q, want %q", got, want)
	}
}

func TestFromDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "my-model")
	os.MkdirAll(dir, 0o755)
	if _, found, err := FromDir(dir); found || err != nil {
		t.Fatalf("no model.json: found %v, err %v", found, err)
	}
	os.WriteFile(filepath.Join(dir, SpecName), []byte(`{"pooling": "mean", "max_length": 128, "passage_prefix": "passage: ", "query_prefix": "query: "}`), 0o644)
	m, found, err := FromDir(dir)
	if !found || err != nil || m.Name != "my-model" || !m.User || m.Spec.Pooling != PoolMean || m.Spec.MaxLength != 128 ||
		m.Spec.PassagePrefix != "passage: " || m.Spec.QueryPrefix != "query: " || m.Spec.Lowercase != nil || m.Null != (NullCosine{}) {
		t.Fatalf("FromDir = %+v, %v, %v", m, found, err)
	}
	os.WriteFile(filepath.Join(dir, SpecName), []byte(`{"pooling": "cls", "max_length": 512, "null_cosine": {"mean": 0.52, "spread": 0.05}}`), 0o644)
	if m, _, err := FromDir(dir); err != nil || m.Null != (NullCosine{Mean: 0.52, Spread: 0.05}) {
		t.Fatalf("null_cosine: %+v, %v", m.Null, err)
	}
	for bad, want := range map[string]string{
		`{"pooling": "cls", "max_length": 64, "null_cosine": {"mean": 0.5, "spread": -1}}`: "null_cosine",
		`{"pooling": "cls"}`:                               "max_length 0 is not in 8..8192",
		`{"pooling": "first", "max_length": 64}`:           `pooling "first"`,
		`{"pooling": "cls", "max_length": 64, "dim": 768}`: `unknown field "dim"`,
		`not json`: "model.json",
	} {
		os.WriteFile(filepath.Join(dir, SpecName), []byte(bad), 0o644)
		if _, found, err := FromDir(dir); !found || err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: found %v, err %v; want %q", bad, found, err, want)
		}
	}
}

// TestLocateBundled: a model the cache lacks is found in models/<name>
// beside the executable's folder (a release package's layout), and the
// cache's copy wins when both exist.
func TestLocateBundled(t *testing.T) {
	cache := t.TempDir()
	t.Setenv(cachedir.Env, cache)
	t.Setenv(EnvModelDir, "")
	m, _ := Lookup(Q8Name)
	pkg := t.TempDir()
	bin := filepath.Join(pkg, "bin")
	if _, err := m.locate("", bin); err == nil {
		t.Fatal("found a model that is nowhere")
	}
	bundled := filepath.Join(pkg, "models", Q8Name)
	writeModel(t, bundled)
	if f, err := m.locate("", bin); err != nil || filepath.Dir(f.ONNX) != bundled {
		t.Fatalf("bundled: %+v, %v", f, err)
	}
	cached := filepath.Join(cache, "models", Q8Name)
	writeModel(t, cached)
	if f, err := m.locate("", bin); err != nil || filepath.Dir(f.ONNX) != cached {
		t.Fatalf("cached: %+v, %v", f, err)
	}
}
