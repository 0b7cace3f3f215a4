package bench

import (
	"slices"
	"testing"
)

// Several variants in one BenchmarkEmbedModels run, each reported by its
// file's name, so their speeds are measured taking turns.
func TestReferences(t *testing.T) {
	paths, names := references("/tmp/qv/u8-ffo0.onnx, /c/models/all-MiniLM-L6-v2-q8/model.onnx,,s8.onnx")
	if want := []string{"/tmp/qv/u8-ffo0.onnx", "/c/models/all-MiniLM-L6-v2-q8/model.onnx", "s8.onnx"}; !slices.Equal(paths, want) {
		t.Errorf("paths %q, want %q", paths, want)
	}
	if want := []string{"u8-ffo0", "all-MiniLM-L6-v2-q8", "s8"}; !slices.Equal(names, want) {
		t.Errorf("names %q, want %q", names, want)
	}
	if paths, _ := references(""); len(paths) != 0 {
		t.Errorf("no flag: paths %q, want none", paths)
	}
}
