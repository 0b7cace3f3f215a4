package ignore

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

func writeFile(t *testing.T, root, rel, text string) {
	t.Helper()
	p := filepath.Join(root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
}

func checkIgnored(t *testing.T, r *Rules, want map[string]bool) {
	t.Helper()
	for rel, ignored := range want {
		isDir := strings.HasSuffix(rel, "/")
		if got := r.Ignored(strings.TrimSuffix(rel, "/"), isDir); got != ignored {
			t.Errorf("Ignored(%q) = %v, want %v", rel, got, ignored)
		}
	}
}

// TestRuleFileQuirks: a byte-order mark, CRLF line ends and a line longer
// than 1 MiB still give rules that apply, to that line and the next.
func TestRuleFileQuirks(t *testing.T) {
	root := t.TempDir()
	long := "l" + strings.Repeat("*", 2<<20) + ".md"
	writeFile(t, root, GitIgnoreFile, "\ufeffbom.md\r\n"+long+"\r\nafter.md\n")
	writeFile(t, root, "sub/"+RuleFile, "\ufeff/first.md\n")
	// An absolute link that stays inside the folder is followed.
	writeFile(t, root, "shared/rules", "shared.md\n")
	writeFile(t, root, "linked/x.md", "x")
	if err := os.Symlink(filepath.Join(root, "shared/rules"), filepath.Join(root, "linked", GitIgnoreFile)); err != nil {
		t.Fatal(err)
	}
	r, err := New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkIgnored(t, r, map[string]bool{
		"bom.md": true, "long.md": true, "after.md": true, "sub/first.md": true,
		"other.md": false, "sub/other.md": false, "sub/deeper/first.md": false,
		"linked/shared.md": true, "linked/x.md": false,
	})
	for _, dir := range []string{".", "sub", "linked"} {
		if err := r.Err(dir); err != nil {
			t.Errorf("Err(%q) = %v", dir, err)
		}
	}
}

// brokenRuleFile is a way to make a rule file unusable, and what the
// error then says.
type brokenRuleFile struct {
	make   func(p string) error
	reason string
}

func brokenRuleFiles(t *testing.T) map[string]brokenRuleFile {
	outside := filepath.Join(t.TempDir(), "rules")
	if err := os.WriteFile(outside, []byte("nothing.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return map[string]brokenRuleFile{
		"fifo":         {func(p string) error { return syscall.Mkfifo(p, 0o644) }, "a FIFO"},
		"folder":       {func(p string) error { return os.Mkdir(p, 0o755) }, "a folder"},
		"link outside": {func(p string) error { return os.Symlink(outside, p) }, "outside the data folder"},
		"relative link outside": {func(p string) error {
			rel, err := filepath.Rel(filepath.Dir(p), outside)
			if err != nil {
				return err
			}
			return os.Symlink(rel, p)
		}, "outside the data folder"},
		"dangling link": {func(p string) error { return os.Symlink("missing", p) }, "symlink to nothing"},
		"link loop":     {func(p string) error { return os.Symlink(filepath.Base(p), p) }, "too many levels"},
		// Rules past the cap would be cut off.
		"over the cap": {func(p string) error {
			return os.WriteFile(p, []byte(strings.Repeat("#\n", maxRuleFile/2)+"*.md\n"), 0o644)
		}, "4 MiB limit"},
	}
}

// TestUnusableRuleFileHidesItsFolder: a rule file that exists but cannot
// be read as rules hides everything below its folder, never nothing.
func TestUnusableRuleFileHidesItsFolder(t *testing.T) {
	for name, broken := range brokenRuleFiles(t) {
		for _, file := range []string{GitIgnoreFile, RuleFile} {
			t.Run(name+"/"+file, func(t *testing.T) {
				root := t.TempDir()
				writeFile(t, root, "a.md", "a")
				writeFile(t, root, "sub/b.md", "b")
				writeFile(t, root, "sub/deep/c.md", "c")
				if err := broken.make(filepath.Join(root, "sub", file)); err != nil {
					t.Fatal(err)
				}
				r, err := New(root, []string{"!*.md"}) // a negated exclude does not open the door either
				if err != nil {
					t.Fatal(err)
				}
				checkIgnored(t, r, map[string]bool{
					"a.md": false, "sub/": false,
					"sub/b.md": true, "sub/deep/": true, "sub/deep/c.md": true,
				})
				if !r.Match("sub/b.md", false) || r.Match("a.md", false) {
					t.Errorf("Match: sub/b.md %v, a.md %v", r.Match("sub/b.md", false), r.Match("a.md", false))
				}
				var fe *FileError
				if err := r.Err("sub"); !errors.As(err, &fe) || fe.Path != "sub/"+file ||
					!strings.Contains(err.Error(), broken.reason) || !strings.Contains(err.Error(), "nothing in sub/ is indexed") {
					t.Errorf("Err(sub) = %v, want a FileError for sub/%s saying %q", err, file, broken.reason)
				}
				if err := r.Err("."); err != nil {
					t.Errorf("Err(.) = %v", err)
				}
			})
		}
	}
}

// A broken rule file at the top hides the whole folder.
func TestUnusableTopRuleFile(t *testing.T) {
	root := t.TempDir()
	writeFile(t, root, "a.md", "a")
	writeFile(t, root, "sub/b.md", "b")
	if err := syscall.Mkfifo(filepath.Join(root, GitIgnoreFile), 0o644); err != nil {
		t.Fatal(err)
	}
	r, err := New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	checkIgnored(t, r, map[string]bool{"a.md": true, "sub/": true, "sub/b.md": true})
	var fe *FileError
	if err := r.Err("."); !errors.As(err, &fe) || fe.Path != GitIgnoreFile || !strings.Contains(err.Error(), "nothing in the data folder") {
		t.Errorf("Err(.) = %v", err)
	}
}
