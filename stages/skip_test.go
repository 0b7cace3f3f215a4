package stages

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
)

// TestWalkReportsSkipped: files left out for their type are reported with
// their reason; files the rules leave out, rule files, folders and links
// leading outside are not.
func TestWalkReportsSkipped(t *testing.T) {
	root := t.TempDir()
	outside := filepath.Join(t.TempDir(), "secret.html")
	os.WriteFile(outside, []byte("x"), 0o644)
	for _, name := range []string{"a.md", "b.html", "c.tar.gz", "d.png", "e.xyz", "ignored/f.html", ".gitignore", "sub/g.CSV", "h.GZ"} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(root, ".gitignore"), []byte("ignored/\n"), 0o644)
	os.Symlink(outside, filepath.Join(root, "link.html"))
	os.Symlink(filepath.Join(root, "b.html"), filepath.Join(root, "inside.html"))
	rules, err := ignore.New(root, nil)
	if err != nil {
		t.Fatal(err)
	}
	var skips Skips
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".md": true}, Rules: rules, Skipped: skips.Add}
	if got := walkAll(t, w); strings.Join(got, ",") != "a.md" {
		t.Errorf("emitted %v", got)
	}
	var got []string
	for _, g := range skips.Groups() {
		got = append(got, g.Reason+"="+strings.Join(g.Examples, "+")+"["+strings.Join(g.Exts, " ")+"]")
	}
	want := "extension_not_enabled=b.html+inside.html+sub/g.CSV[.csv .html]," +
		"no_reader=e.xyz[.xyz],compressed=c.tar.gz+h.GZ[.gz],binary=d.png[]"
	if strings.Join(got, ",") != want {
		t.Errorf("skipped:\n got %s\nwant %s", strings.Join(got, ","), want)
	}
}

func TestSkipsKeepFewExamples(t *testing.T) {
	var s Skips
	for i := range 12 {
		s.Add(strings.Repeat("x", i+1)+".gz", ".gz", SkipCompressed)
	}
	g := s.Groups()
	if len(g) != 1 || g[0].Count != 12 || len(g[0].Examples) != MaxSkipExamples || g[0].Note == "" || SkipTotal(g) != 12 {
		t.Errorf("groups %+v", g)
	}
}

// TestWalkTextWithoutExtension: with "" enabled, files without an
// extension (and README.Debian) are emitted when they look like text and
// reported as binary otherwise.
func TestWalkTextWithoutExtension(t *testing.T) {
	root := t.TempDir()
	for name, body := range map[string]string{
		"README": "Read me first.\n", "README.Debian": "Debian notes.\n", "LICENSE": "Permission is granted.\n",
		"bin/tool": "\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00", "notes.xyz": "text",
	} {
		p := filepath.Join(root, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var skips Skips
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{"": true}, Skipped: skips.Add}
	if got := walkAll(t, w); strings.Join(got, ",") != "LICENSE,README,README.Debian" {
		t.Errorf("emitted %v", got)
	}
	g := skips.Groups()
	if len(g) != 2 || g[0].Reason != SkipNoReader || g[1].Reason != SkipBinary || g[1].Examples[0] != "bin/tool" {
		t.Errorf("skipped %+v", g)
	}
}

// TestWalkGzip: with .gz enabled, compressed documents are emitted and
// archives are still reported as compressed.
func TestWalkGzip(t *testing.T) {
	root := t.TempDir()
	for _, name := range []string{"README.gz", "notes.md.gz", "src.tar.gz", "scan.pdf.gz"} {
		if err := os.WriteFile(filepath.Join(root, name), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	var skips Skips
	w := &Walker{Folder: openFolder(t, root), Exts: map[string]bool{".gz": true}, Skipped: skips.Add}
	if got := walkAll(t, w); strings.Join(got, ",") != "README.gz,notes.md.gz" {
		t.Errorf("emitted %v", got)
	}
	if g := skips.Groups(); len(g) != 1 || g[0].Reason != SkipCompressed || strings.Join(g[0].Examples, ",") != "scan.pdf.gz,src.tar.gz" {
		t.Errorf("skipped %+v", g)
	}
}
