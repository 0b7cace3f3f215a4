package stages

import (
	"context"
	"errors"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

func TestWalkerScope(t *testing.T) {
	root := t.TempDir()
	outside := t.TempDir()
	write := func(rel string) {
		p := filepath.Join(root, rel)
		testutil.MkdirAll(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("a.md")
	write("B.TXT")
	write("skip.bin")
	write("sub/c.pdf")
	write("index/faiss-notes.md") // inside the index folder: never walked
	write(".git/config.md")       // hidden folder: skipped
	testutil.WriteFile(t, filepath.Join(outside, "secret.md"), []byte("x"))
	testutil.Symlink(t, filepath.Join(outside, "secret.md"), filepath.Join(root, "escape.md"))
	testutil.Symlink(t, filepath.Join(root, "a.md"), filepath.Join(root, "alias.md"))
	testutil.Symlink(t, outside, filepath.Join(root, "outdir"))

	w := &Walker{Folder: openFolder(t, root), IndexFolder: filepath.Join(root, "index"),
		Exts: map[string]bool{".md": true, ".txt": true, ".pdf": true}}
	got := walkAll(t, w)
	want := []string{"B.TXT", "a.md", "alias.md", "sub/c.pdf"}
	if !slices.Equal(got, want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
	var err error
	if w.Glob, err = glob.Parse("sub/**"); err != nil {
		t.Fatal(err)
	}
	if got := walkAll(t, w); !slices.Equal(got, []string{"sub/c.pdf"}) {
		t.Fatalf("with glob: %v", got)
	}
}

func openFolder(t *testing.T, dir string) *Folder {
	t.Helper()
	f, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	return f
}

func walkAll(t *testing.T, w *Walker) []string {
	t.Helper()
	var got []string
	err := w.Walk(context.Background(), func(j *FileJob) error {
		if j.Kind != Skipped {
			got = append(got, j.Rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(got)
	return got
}

func TestWalkStopsAtEmitError(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"a.md", "b.md", "c.md"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".md": true}}
	stop := errors.New("downstream gone")
	calls := 0
	err := w.Walk(context.Background(), func(*FileJob) error { calls++; return stop })
	if !errors.Is(err, stop) || calls != 1 {
		t.Fatalf("walk returned %v after %d emits", err, calls)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := w.Walk(ctx, func(*FileJob) error { return nil }); !errors.Is(err, context.Canceled) {
		t.Fatalf("cancelled walk returned %v", err)
	}
}

// TestWalkerNamesAndLinks: names are walked byte-exact (and stored
// encoded), and links are followed only while they resolve inside.
func TestWalkerNamesAndLinks(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	for _, name := range []string{"caf\xe9.md", "caf\u00e9.md", "%41.md", "\xff\xfe.md", "sub/\xe9t\xe9.md"} {
		p := filepath.Join(root, name)
		testutil.MkdirAll(t, filepath.Dir(p))
		if err := os.WriteFile(p, []byte(name), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WriteFile(t, filepath.Join(outside, "secret.md"), []byte("x"))
	testutil.Symlink(t, "../"+filepath.Base(outside)+"/secret.md", filepath.Join(root, "rel-escape.md"))
	testutil.Symlink(t, "sub/../../"+filepath.Base(outside)+"/secret.md", filepath.Join(root, "dotdot.md"))
	testutil.Symlink(t, "sub", filepath.Join(root, "subdir-link"))
	testutil.Symlink(t, "subdir-link/\xe9t\xe9.md", filepath.Join(root, "via-link.md"))
	testutil.Symlink(t, "missing.md", filepath.Join(root, "dangling.md"))

	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".md": true}}
	skips := &Skips{}
	w.Skipped = skips.Add
	var jobs []*FileJob
	if err := w.Walk(context.Background(), func(j *FileJob) error { jobs = append(jobs, j); return nil }); err != nil {
		t.Fatal(err)
	}
	// Links to nothing and links leading outside are reported, so the user
	// learns why they are not searchable.
	g := skips.Groups()
	if len(g) != 2 || g[0].Reason != SkipBrokenLink || !slices.Equal(g[0].Examples, []string{"dangling.md"}) ||
		g[1].Reason != SkipOutside || g[1].Count != 2 || g[1].Note == "" {
		t.Errorf("skip groups %+v, want dangling.md as %s and two %s", g, SkipBrokenLink, SkipOutside)
	}
	got := map[string]string{}
	var escaped []string
	for _, j := range jobs {
		if j.Kind == Skipped {
			escaped = append(escaped, j.Rel)
			continue
		}
		got[j.Rel] = j.Name
	}
	// Links leading outside are emitted as Skipped, to be counted.
	if slices.Sort(escaped); !slices.Equal(escaped, []string{"dotdot.md", "rel-escape.md"}) {
		t.Errorf("skipped as leading outside: %q", escaped)
	}
	want := map[string]string{
		"%2541.md": "%41.md", "caf%E9.md": "caf\xe9.md", "caf\u00e9.md": "caf\u00e9.md",
		"%FF%FE.md": "\xff\xfe.md", "sub/%E9t%E9.md": "sub/\xe9t\xe9.md", "via-link.md": "via-link.md",
	}
	if !maps.Equal(got, want) {
		t.Fatalf("walked %q, want %q", got, want)
	}
	// A run scoped to changed paths (watch updates) takes raw names too.
	w.Paths = []string{"caf\xe9.md", "sub/\xe9t\xe9.md", "../escape.md", "."}
	if got := walkAll(t, w); !slices.Equal(got, []string{"caf%E9.md", "sub/%E9t%E9.md"}) {
		t.Fatalf("scoped walk: %q", got)
	}
}

// TestWalkerLinkToTheFolderItself: a link back to the data folder, by
// an absolute path or by ".", is a folder behind a link: not followed (its
// files are walked under their own names) and not reported as leading
// outside, which it does not.
func TestWalkerLinkToTheFolderItself(t *testing.T) {
	root, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(root, "a.md"), []byte("a"))
	testutil.Symlink(t, root, filepath.Join(root, "self"))
	testutil.Symlink(t, ".", filepath.Join(root, "dot"))
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".md": true, "": true}}
	skips := &Skips{}
	w.Skipped = skips.Add
	var jobs []string
	if err := w.Walk(context.Background(), func(j *FileJob) error {
		if j.Kind == Skipped {
			j.Rel += " (skipped)"
		}
		jobs = append(jobs, j.Rel)
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	if g := skips.Groups(); len(g) != 0 {
		t.Errorf("skip groups %+v, want none", g)
	}
	if !slices.Equal(jobs, []string{"a.md"}) {
		t.Errorf("walked %q, want only a.md", jobs)
	}
}

// A CSV or TSV file over TableCap is not emitted but reported as a large
// table; one within it, and other files of any size, are emitted.
func TestWalkerTableCap(t *testing.T) {
	root := t.TempDir()
	for name, size := range map[string]int{"small.csv": 100, "big.csv": 2000, "big.TSV": 2000, "big.md": 2000} {
		testutil.WriteFile(t, filepath.Join(root, name), make([]byte, size))
	}
	var skips Skips
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".csv": true, ".tsv": true, ".md": true},
		TableCap: 1000, Skipped: skips.Add}
	if got, want := walkAll(t, w), []string{"big.md", "small.csv"}; !slices.Equal(got, want) {
		t.Fatalf("walked %v, want %v", got, want)
	}
	g := skips.Groups()
	if len(g) != 1 || g[0].Reason != SkipLargeTable || g[0].Count != 2 || !slices.Equal(g[0].Exts, []string{".csv", ".tsv"}) || g[0].Note == "" {
		t.Errorf("skipped %+v, want the two large tables", g)
	}
}
