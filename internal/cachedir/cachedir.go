// Package cachedir says where the program keeps the files it downloads or
// compiles once: the model, the ONNX Runtime library, the PDF engine's
// compiled code.
package cachedir

import (
	"os"
	"path/filepath"
)

// Env names the environment variable that overrides Path.
const Env = "MICRO_RAG_CACHE_DIR"

// Path is $MICRO_RAG_CACHE_DIR, else ${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp.
// It is the same folder scripts/setup.sh installs into.
func Path() string {
	if d := os.Getenv(Env); d != "" {
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
