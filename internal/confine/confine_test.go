package confine

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// layout makes <tmp>/data with real.txt and <tmp>/outside/secret.txt, and
// opens data as a root; dir is data's absolute path, symlinks resolved.
func layout(t *testing.T) (root *os.Root, dir, outside string) {
	t.Helper()
	base, err := filepath.EvalSymlinks(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	dir, outside = filepath.Join(base, "data"), filepath.Join(base, "outside")
	for _, d := range []string{dir, outside} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	testutil.WriteFile(t, filepath.Join(dir, "real.txt"), []byte("inside"))
	testutil.WriteFile(t, filepath.Join(outside, "secret.txt"), []byte("secret"))
	root, err = os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { root.Close() })
	return root, dir, outside
}

// read opens name with OpenRegular and returns its text.
func read(root *os.Root, dir, name string) (string, error) {
	f, _, err := OpenRegular(root, dir, name)
	if err != nil {
		return "", err
	}
	defer f.Close()
	b, err := io.ReadAll(f)
	return string(b), err
}

func TestOpenRegularStaysInside(t *testing.T) {
	root, dir, outside := layout(t)
	testutil.Symlink(t, "../outside/secret.txt", filepath.Join(dir, "rel-out"))
	testutil.Symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "abs-out"))
	testutil.Symlink(t, filepath.Join(dir, "real.txt"), filepath.Join(dir, "abs-in"))
	testutil.Symlink(t, "real.txt", filepath.Join(dir, "rel-in"))
	testutil.Symlink(t, outside, filepath.Join(dir, "dir-out"))
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want string // text read; "" means ErrOutside
	}{
		{"real.txt", "inside"},
		{"rel-in", "inside"},
		{"abs-in", "inside"}, // os.Root refuses absolute targets; confine resolves this one
		{"rel-out", ""},
		{"abs-out", ""},
		{"dir-out/secret.txt", ""},
		{"../outside/secret.txt", ""},
		{"sub/../../outside/secret.txt", ""},
		{filepath.Join(outside, "secret.txt"), ""}, // an absolute name
	} {
		got, err := read(root, dir, tc.name)
		switch {
		case tc.want == "" && !errors.Is(err, ErrOutside):
			t.Errorf("%s: read %q, err %v; want ErrOutside", tc.name, got, err)
		case tc.want != "" && (err != nil || got != tc.want):
			t.Errorf("%s: read %q, err %v; want %q", tc.name, got, err, tc.want)
		}
	}
}

// A file swapped for a link to the outside after a link to it was
// resolved: the retry goes through the root too, so the swap is refused.
func TestDoRefusesASwapBetweenItsSteps(t *testing.T) {
	root, dir, outside := layout(t)
	testutil.Symlink(t, filepath.Join(dir, "real.txt"), filepath.Join(dir, "abs-in"))
	calls := 0
	_, err := Do(root, dir, "abs-in", func(rel string) (*os.File, error) {
		calls++
		if calls == 2 {
			// After the link was resolved by path and before the retry
			// opens the result, real.txt becomes a link to the secret.
			if err := os.Remove(filepath.Join(dir, "real.txt")); err != nil {
				t.Fatal(err)
			}
			testutil.Symlink(t, filepath.Join(outside, "secret.txt"), filepath.Join(dir, "real.txt"))
		}
		f, err := root.Open(rel)
		if err == nil {
			f.Close()
		}
		return f, err
	})
	if calls != 2 || !errors.Is(err, ErrOutside) {
		t.Fatalf("%d calls, err %v; want two calls and ErrOutside", calls, err)
	}
	// The same swap done before the open is refused at once.
	if _, err := read(root, dir, "real.txt"); !errors.Is(err, ErrOutside) {
		t.Fatalf("swapped file: err %v, want ErrOutside", err)
	}
}

// Only regular files open: a FIFO is refused without blocking, a folder
// and a missing file are errors that are not ErrOutside.
func TestOpenRegularRefusesOtherKinds(t *testing.T) {
	root, dir, _ := layout(t)
	if err := syscall.Mkfifo(filepath.Join(dir, "pipe"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]string{"pipe": "a FIFO", "sub": "a folder"} {
		_, err := read(root, dir, name)
		if err == nil || !strings.Contains(err.Error(), "not a regular file but "+want) {
			t.Errorf("%s: err %v, want it refused as %s", name, err, want)
		}
	}
	if _, err := read(root, dir, "missing.txt"); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err %v, want ErrNotExist", err)
	}
}

// The os.Root error for an escape is recognised by identity, not text.
func TestEscapeErrorIsLearnt(t *testing.T) {
	root, _, _ := layout(t)
	if errEscapes() == nil {
		t.Fatal("the os.Root escape error could not be learnt")
	}
	_, err := root.Open("../outside/secret.txt")
	if !escapes(err) {
		t.Fatalf("%v not recognised as an escape", err)
	}
	if _, err := root.Open("missing.txt"); escapes(err) {
		t.Fatalf("%v taken for an escape", err)
	}
}

func TestWithin(t *testing.T) {
	for _, tc := range []struct {
		p    string
		want bool
	}{
		{"/data", true},
		{"/data/a/b.txt", true},
		{"/data/../etc", false},
		{"/database", false}, // a shared prefix is not a parent
		{"/", false},
		{"/data/..hidden", true},
	} {
		if got := Within("/data", tc.p); got != tc.want {
			t.Errorf("Within(/data, %s) = %v, want %v", tc.p, got, tc.want)
		}
	}
}
