package stages

import (
	"errors"
	"io"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestFolderOpen(t *testing.T) {
	root, outside := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(root, "in.md"), []byte("inside"), 0o644)
	os.WriteFile(filepath.Join(outside, "out.md"), []byte("outside"), 0o644)
	os.Symlink(filepath.Join(root, "in.md"), filepath.Join(root, "abs-in.md"))
	os.Symlink(filepath.Join(outside, "out.md"), filepath.Join(root, "abs-out.md"))
	os.Symlink("../"+filepath.Base(outside)+"/out.md", filepath.Join(root, "rel-out.md"))
	os.Mkdir(filepath.Join(root, "dir.md"), 0o755)
	if err := syscall.Mkfifo(filepath.Join(root, "fifo.md"), 0o644); err != nil {
		t.Fatal(err)
	}
	f := openFolder(t, root)
	for _, name := range []string{"in.md", "abs-in.md"} {
		file, fi, err := f.Open(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		b, _ := io.ReadAll(file)
		file.Close()
		if string(b) != "inside" || fi.Size() != 6 {
			t.Errorf("%s read %q (size %d)", name, b, fi.Size())
		}
	}
	for _, name := range []string{"abs-out.md", "rel-out.md"} {
		if _, _, err := f.Open(name); !errors.Is(err, ErrOutside) {
			t.Errorf("%s: err %v, want ErrOutside", name, err)
		}
	}
	// Not regular: refused at once, a FIFO without waiting for a writer.
	for _, name := range []string{"dir.md", "fifo.md"} {
		if file, _, err := f.Open(name); err == nil {
			file.Close()
			t.Errorf("%s opened", name)
		}
	}
}
