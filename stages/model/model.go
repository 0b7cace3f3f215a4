// Package model says where the embedding model and the ONNX Runtime library
// live on disk, and fetches the model once, verified, on an end user's first
// run.
package model

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// Names of the model files inside a model directory.
const (
	ONNXName      = "model.onnx"
	TokenizerName = "tokenizer.json"
)

// ORTLibName is the ONNX Runtime library's file name in a lib folder.
const ORTLibName = "libonnxruntime.so"

// ModelName is the default model: its name on the command line and the
// directory under CacheDir()/models that holds it.
const ModelName = "all-MiniLM-L6-v2"

// Int8Name is the same network with int8 weights: about twice as fast on a
// CPU with int8 dot products, cosine ≥ 0.98 to the fp32 vectors.
const Int8Name = "all-MiniLM-L6-v2-int8"

// Model is one embedding model this program can run.
type Model struct {
	Name string // as given to --model; also its folder under CacheDir()/models
	Hub  Source // what an end user downloads on first run
}

// Models are the models --model accepts; the first is the default.
var Models = []Model{
	{Name: ModelName, Hub: HubSource},
	{Name: Int8Name, Hub: HubSourceInt8},
}

// Lookup returns the model called name ("" is the default).
func Lookup(name string) (Model, error) {
	if name == "" {
		return Models[0], nil
	}
	var names []string
	for _, m := range Models {
		if m.Name == name {
			return m, nil
		}
		names = append(names, m.Name)
	}
	return Model{}, fmt.Errorf("unknown model %q (known: %s)", name, strings.Join(names, ", "))
}

// Dir is CacheDir()/models/<name>, where setup and the first-run download
// put the model's files.
func (m Model) Dir() string { return filepath.Join(CacheDir(), "models", m.Name) }

// Environment variables that override the defaults.
const (
	EnvCacheDir = "MICRO_RAG_CACHE_DIR"
	EnvModelDir = "MICRO_RAG_MODEL_DIR"
	EnvORTLib   = "MICRO_RAG_ORT_LIB"
)

// CacheDir is where model and runtime files live:
// $MICRO_RAG_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp.
// It is the same folder scripts/setup.sh installs into.
func CacheDir() string {
	if d := os.Getenv(EnvCacheDir); d != "" {
		return d
	}
	// XDG says relative values are invalid and must be ignored.
	if x := os.Getenv("XDG_CACHE_HOME"); x != "" && filepath.IsAbs(x) {
		return filepath.Join(x, "micro-rag-mcp")
	}
	home, err := os.UserHomeDir()
	if err != nil || home == "" {
		// No home at all (some service accounts): keep working from /tmp.
		return filepath.Join(os.TempDir(), "micro-rag-mcp")
	}
	return filepath.Join(home, ".cache", "micro-rag-mcp")
}

// DefaultModelDir is CacheDir()/models/all-MiniLM-L6-v2.
func DefaultModelDir() string { return Models[0].Dir() }

// Files are the absolute paths of the model's two files.
type Files struct {
	ONNX, Tokenizer string
}

// FilesIn names the model files inside dir without checking them.
func FilesIn(dir string) (Files, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Files{}, err
	}
	return Files{ONNX: filepath.Join(abs, ONNXName), Tokenizer: filepath.Join(abs, TokenizerName)}, nil
}

// ModelDir picks the model directory: the flag, else $MICRO_RAG_MODEL_DIR,
// else DefaultModelDir().
func ModelDir(flag string) string {
	if flag != "" {
		return flag
	}
	if d := os.Getenv(EnvModelDir); d != "" {
		return d
	}
	return DefaultModelDir()
}

// Locate finds the default model already installed (see ModelDir for the
// order) and checks that both files are there. It never downloads; see
// Ensure.
func Locate(modelDir string) (Files, error) { return Models[0].Locate(modelDir) }

// Locate finds m's files: in modelDir if set, else $MICRO_RAG_MODEL_DIR,
// else m.Dir(); both files must be there. It never downloads.
func (m Model) Locate(modelDir string) (Files, error) {
	dir := modelDir
	if dir == "" {
		dir = os.Getenv(EnvModelDir)
	}
	if dir == "" {
		dir = m.Dir()
	}
	f, err := FilesIn(dir)
	if err != nil {
		return Files{}, err
	}
	for _, p := range []string{f.ONNX, f.Tokenizer} {
		if err := regularFile(p); err != nil {
			return Files{}, fmt.Errorf("model not found in %s: %w (run `make setup`, or pass --model-dir pointing at a folder with %s and %s)",
				dir, err, ONNXName, TokenizerName)
		}
	}
	return f, nil
}

// ORTLibrary finds the ONNX Runtime shared library: the flag, else
// $MICRO_RAG_ORT_LIB, else lib/libonnxruntime.so beside the folder of the
// executable (the release tarball's layout, symlinks to the binary
// followed), else CacheDir()/lib/libonnxruntime.so (where setup installs it).
func ORTLibrary(flag string) (string, error) {
	exeDir := ""
	if exe, err := os.Executable(); err == nil {
		if exe, err = filepath.EvalSymlinks(exe); err == nil {
			exeDir = filepath.Dir(exe)
		}
	}
	return ortLibrary(flag, exeDir)
}

// ortLibrary is ORTLibrary with the executable's folder given.
func ortLibrary(flag, exeDir string) (string, error) {
	p := flag
	if p == "" {
		p = os.Getenv(EnvORTLib)
	}
	var candidates []string
	if p != "" {
		candidates = []string{p}
	} else {
		if exeDir != "" {
			candidates = append(candidates, filepath.Join(exeDir, "..", "lib", ORTLibName))
		}
		candidates = append(candidates, filepath.Join(CacheDir(), "lib", ORTLibName))
	}
	var errs []error
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			return "", err
		}
		if err := regularFile(abs); err != nil {
			errs = append(errs, err)
			continue
		}
		return abs, nil
	}
	return "", fmt.Errorf("ONNX Runtime library (1.24 or newer) not found: %w (run `make setup`, or pass --ort-lib or set %s)", errors.Join(errs...), EnvORTLib)
}

// regularFile fails unless p (after symlinks) is a non-empty regular file.
func regularFile(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() == 0 {
		return errors.New(p + " is empty")
	}
	return nil
}
