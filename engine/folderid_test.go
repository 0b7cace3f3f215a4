package engine

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A run over a data folder that is now another folder, by symlink or by
// replacement at the same path, is refused with the fix; the first run
// records the folder, and a run over the same folder goes on.
func TestFolderIDRefusesAnotherFolder(t *testing.T) {
	root := t.TempDir()
	idx := filepath.Join(root, "idx")
	if err := os.Mkdir(idx, 0o700); err != nil {
		t.Fatal(err)
	}
	data, elsewhere := filepath.Join(root, "data"), filepath.Join(root, "elsewhere")
	for _, d := range []string{data, elsewhere} {
		if err := os.Mkdir(d, 0o700); err != nil {
			t.Fatal(err)
		}
	}
	run := func() error {
		resolved, err := CheckDataFolder(data)
		if err != nil {
			t.Fatal(err)
		}
		e := &Engine{cfg: Config{DataFolder: resolved, IndexFolder: idx}}
		return e.checkFolderID()
	}
	if err := run(); err != nil {
		t.Fatalf("first run: %v", err)
	}
	if err := run(); err != nil {
		t.Fatalf("same folder: %v", err)
	}
	recorded, _ := os.ReadFile(filepath.Join(idx, FolderIDFile))

	// mv data away && ln -s elsewhere data. The original stays on disk, so
	// its inode cannot be handed to the folder made below (a freed inode
	// is often reused at once, which would make the two folders equal).
	if err := os.Rename(data, filepath.Join(root, "data-before")); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(elsewhere, data); err != nil {
		t.Fatal(err)
	}
	var changed *FolderChangedError
	err := run()
	if !errors.As(err, &changed) || !strings.Contains(err.Error(), "resolves to "+elsewhere) ||
		!strings.Contains(err.Error(), "rm "+filepath.Join(idx, FolderIDFile)) {
		t.Fatalf("symlink elsewhere: %v", err)
	}

	// rm data && mkdir data: the same path, another folder.
	if err := os.Remove(data); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(data, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := run(); !errors.As(err, &changed) || !strings.Contains(err.Error(), "is another folder than") {
		t.Fatalf("replaced folder: %v", err)
	}
	if now, _ := os.ReadFile(filepath.Join(idx, FolderIDFile)); string(now) != string(recorded) {
		t.Fatalf("a refused run rewrote the record: %s", now)
	}

	// A damaged record is refused too, never rewritten as if absent.
	if err := os.WriteFile(filepath.Join(idx, FolderIDFile), []byte(`{"pa`), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := run(); !errors.As(err, &changed) || changed.Damaged == "" {
		t.Fatalf("damaged record: %v", err)
	}
}
