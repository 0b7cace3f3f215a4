package stages

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
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
	if got, want := walkAll(t, w), []string{"a.md", "docs/b.md", "docs/c.txt"}; !slices.Equal(got, want) {
		t.Errorf("whole walk %v, want %v", got, want)
	}

	// A scoped walk finds the same files under its paths, nothing twice,
	// and nothing below a skipped folder.
	w.Paths = []string{"docs", "docs/b.md", "gone.md", "drafts/d.md", "node_modules/pkg/readme.md", "notes.tmp.md", "a.md"}
	if got, want := walkAll(t, w), []string{"a.md", "docs/b.md", "docs/c.txt"}; !slices.Equal(got, want) {
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

// A folder whose rule file cannot be used is withheld: the walk emits one
// Failed job naming the rule file and why, and nothing below the folder,
// over the whole tree and over paths inside it.
func TestWalkWithholdsFolderOfBrokenRuleFile(t *testing.T) {
	outside := filepath.Join(t.TempDir(), "rules")
	if err := os.WriteFile(outside, []byte("nothing.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]struct {
		make   func(p string) error
		reason string
	}{
		"fifo":         {func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a FIFO"},
		"link outside": {func(p string) error { return os.Symlink(outside, p) }, "outside the data folder"},
		"too large": {func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("#\n", 2<<20)+"*.md\n"), 0o644)
		}, "limit"},
	} {
		for _, top := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/top=%v", name, top), func(t *testing.T) {
				root := t.TempDir()
				writeTree(t, root, map[string]string{"a.md": "a", "docs/b.md": "b", "docs/deep/c.md": "c", "other/d.md": "d"})
				rule, want := "docs/"+ignore.RuleFile, []string{"a.md", "docs/" + ignore.RuleFile, "other/d.md"}
				if top {
					rule, want = ignore.GitIgnoreFile, []string{ignore.GitIgnoreFile}
				}
				if err := c.make(filepath.Join(root, rule)); err != nil {
					t.Fatal(err)
				}
				rules, err := ignore.New(root, nil)
				if err != nil {
					t.Fatal(err)
				}
				w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".md": true}, Rules: rules}
				jobs := func() (rels []string) {
					t.Helper()
					err := w.Walk(context.Background(), func(j *FileJob) error {
						rels = append(rels, j.Rel)
						if j.Kind == Failed != (j.Rel == rule) {
							t.Errorf("%s: kind %v", j.Rel, j.Kind)
						}
						if j.Rel == rule && (j.Err == nil || !strings.Contains(j.Err.Error(), c.reason) || !strings.Contains(j.Err.Error(), "nothing in")) {
							t.Errorf("%s failed with %v, want the reason (%q) and what is left out", j.Rel, j.Err, c.reason)
						}
						return nil
					})
					if err != nil {
						t.Fatal(err)
					}
					slices.Sort(rels)
					return slices.Compact(rels)
				}
				if got := jobs(); !slices.Equal(got, want) {
					t.Errorf("whole walk %v, want %v", got, want)
				}
				w.Paths = []string{"docs/b.md", "docs/deep"}
				if got := jobs(); !slices.Equal(got, []string{rule}) {
					t.Errorf("scoped walk %v, want only %s", got, rule)
				}
			})
		}
	}
}
