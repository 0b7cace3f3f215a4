package durable

import (
	"os"
	"path/filepath"
	"testing"
)

func TestSync(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "f")
	if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := SyncFile(p); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(dir); err != nil {
		t.Fatal(err)
	}
	if err := SyncDir(filepath.Join(dir, "missing")); !os.IsNotExist(err) {
		t.Fatalf("missing folder: %v", err)
	}
}
