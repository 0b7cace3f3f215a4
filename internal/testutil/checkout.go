package testutil

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

// PrivateCheckout copies the working tree of the repository above the
// working folder (tracked and untracked files that git does not ignore,
// uncommitted changes included) into a fresh folder of mode 0700, as a
// clone under a private home or a mktemp -d folder is, and returns its
// path. Nothing of .tools/ comes along.
func PrivateCheckout(t testing.TB) string {
	t.Helper()
	root, err := exec.Command("git", "rev-parse", "--show-toplevel").Output()
	if err != nil {
		t.Fatalf("git rev-parse: %v", err)
	}
	src := string(bytes.TrimSpace(root))
	parent := t.TempDir()
	if err := os.Chmod(parent, 0o700); err != nil {
		t.Fatal(err)
	}
	dst := filepath.Join(parent, "micro-rag-mcp")
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	// A pipe of git ls-files into tar keeps modes and symlinks as they are.
	sh := `git ls-files -z -co --exclude-standard | grep -zv '^\.tools$' | tar -C . --null -T - -cf - | tar -C "$1" -xf -`
	cmd := exec.Command("bash", "-o", "pipefail", "-c", sh, "copy", dst)
	cmd.Dir = src
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("copy of the working tree into %s: %v\n%s", dst, err, out)
	}
	return dst
}
