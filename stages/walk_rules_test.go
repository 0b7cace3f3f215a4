package stages

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/stages/ignore"
)

func writeTree(t *testing.T, root string, files map[string]string) {
	t.Helper()
	for rel, text := range files {
		p := filepath.Join(root, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func walked(t *testing.T, w *Walker) []string {
	t.Helper()
	var got []string
	if err := w.Walk(context.Background(), func(j *FileJob) error { got = append(got, j.Rel); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

// The walk honours .gitignore, .micro-rag-ignore, --exclude and the
// built-in skips, over the whole tree and over a list of paths.
func TestWalkHonoursIgnoreRules(t *testing.T) {
	root := t.TempDir()
	writeTree(t, root, map[string]string{
		".gitignore":                 "drafts/\n*.tmp.md\n",
		"docs/.micro-rag-ignore":     "private.md\n",
		"a.md":                       "a",
		"notes.tmp.md":               "tmp",
		"drafts/d.md":                "draft",
		"docs/b.md":                  "b",
		"docs/private.md":            "secret",
		"docs/c.txt":                 "c",
		"node_modules/pkg/readme.md": "pkg",
		".cache/x.md":                "cache",
		"build/out.md":               "generated",
	})
	rules, err := ignore.New(root, []string{"build/"})
	if err != nil {
		t.Fatal(err)
	}
	w := &Walker{Folder: openFolder(t, root), IndexFolder: filepath.Join(root, "index"), Exts: map[string]bool{".md": true, ".txt": true}, Rules: rules}
	if got, want := walked(t, w), []string{"a.md", "docs/b.md", "docs/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("whole walk %v, want %v", got, want)
	}

	// A scoped walk finds the same files under its paths, nothing twice,
	// and nothing below a skipped folder.
	w.Paths = []string{"docs", "docs/b.md", "gone.md", "drafts/d.md", "node_modules/pkg/readme.md", "notes.tmp.md", "a.md"}
	if got, want := walked(t, w), []string{"a.md", "docs/b.md", "docs/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("scoped walk %v, want %v", got, want)
	}
	for rel, in := range map[string]bool{"docs/x/y.md": true, "gone.md": true, "a.md": true, "docsx.md": false, "other.md": false} {
		if w.InScope(rel) != in {
			t.Errorf("InScope(%q) = %v", rel, !in)
		}
	}
	w.Paths = nil
	if !w.InScope("anything.md") {
		t.Error("a run without paths covers everything")
	}
}
