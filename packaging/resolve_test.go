package packaging

import (
	"archive/zip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// The registry's name micro-rag-mcp belongs to another project (an older
// Python implementation, 0.1.0 to 0.1.7, for Python 3.12 and newer); ours
// is micro-rag-mcp-go. These stand in for that project in a local index.
const (
	otherName    = "micro-rag-mcp"
	otherVersion = "0.1.7"
	ourName      = "micro-rag-mcp-go"
)

// pythons are the versions the wheel installs on (Requires-Python >=3.8)
// up to the newest released; the other project needs 3.12 or newer.
var pythons = []string{"3.8", "3.9", "3.10", "3.11", "3.12", "3.13", "3.14"}

// TestDocumentedFormsResolveHere resolves each Python install form the
// README documents with uv's resolver, offline, for every Python version,
// against a local index that holds what the registry will: the other
// project's micro-rag-mcp 0.1.7 and our wheel under our name. Each must
// resolve to the very wheel built here (same SHA-256), never elsewhere.
func TestDocumentedFormsResolveHere(t *testing.T) {
	dir := t.TempDir()
	env := clientEnv(t, dir)
	index := localIndex(t, filepath.Join(dir, "index"), map[string]string{
		otherName: otherWheel(t, filepath.Join(dir, "other")),
		ourName:   dist.wheel,
	})
	sum := fileSHA256(t, dist.wheel)
	forms := []struct {
		name        string
		requirement string
		findLinks   bool
	}{
		{"uvx micro-rag-mcp-go (published)", ourName, false},
		{"pip install micro-rag-mcp-go (published)", ourName, false},
		{"uvx --find-links ./dist micro-rag-mcp-go", ourName, true},
		{"uvx --from ./dist/micro_rag_mcp_go-….whl", filepath.Base(dist.wheel), false},
	}
	for _, py := range pythons {
		for _, f := range forms {
			got, err := resolve(env, index, py, f.requirement, f.findLinks)
			if err != nil {
				t.Errorf("python %s, %s: %v", py, f.name, err)
				continue
			}
			if !strings.Contains(got, "sha256:"+sum) || strings.Contains(got, otherVersion) {
				t.Errorf("python %s, %s resolves to something not built here (want sha256:%s):\n%s", py, f.name, sum, got)
			}
		}
	}
	// The old form still reaches the other project on 3.12 and newer, as it
	// does on the registry: the index stands for the registry faithfully.
	for _, py := range []string{"3.12", "3.13"} {
		got, err := resolve(env, index, py, otherName, true)
		if err != nil || !strings.Contains(got, otherName+"=="+otherVersion) {
			t.Errorf("python %s, uvx --find-links ./dist micro-rag-mcp: %v\n%s; want the other project's %s", py, err, got, otherVersion)
		}
	}
}

// resolve runs uv pip compile for one requirement, from the repository
// root (so ./dist/... paths read as the README prints them), and returns
// the pinned requirements with their hashes.
func resolve(env []string, index, python, requirement string, findLinks bool) (string, error) {
	if requirement == filepath.Base(dist.wheel) {
		requirement = "./dist/" + requirement
	}
	args := []string{"pip", "compile", "--offline", "--no-header", "--generate-hashes", "--no-annotate",
		"--python-version", python, "--index-url", "file://" + index}
	if findLinks {
		args = append(args, "--find-links", "./dist")
	}
	cmd := exec.Command(filepath.Join(toolsDir, "bin", "uv"), append(args, "-")...)
	cmd.Dir, cmd.Env = root, env
	cmd.Stdin = strings.NewReader(requirement + "\n")
	out, err := cmd.CombinedOutput()
	if err != nil {
		return string(out), fmt.Errorf("uv %s: %w\n%s", strings.Join(args, " "), err, out)
	}
	return string(out), nil
}

// localIndex writes a simple-API index (PEP 503) in dir with one wheel per
// project and returns its folder.
func localIndex(t *testing.T, dir string, wheels map[string]string) string {
	var projects strings.Builder
	for name, wheel := range wheels {
		pdir := filepath.Join(dir, name)
		if err := os.MkdirAll(pdir, 0o755); err != nil {
			t.Fatal(err)
		}
		page := fmt.Sprintf("<html><body><a href=\"file://%s#sha256=%s\">%s</a></body></html>\n", wheel, fileSHA256(t, wheel), filepath.Base(wheel))
		if err := os.WriteFile(filepath.Join(pdir, "index.html"), []byte(page), 0o644); err != nil {
			t.Fatal(err)
		}
		fmt.Fprintf(&projects, "<a href=\"%s/\">%s</a>\n", name, name)
	}
	if err := os.WriteFile(filepath.Join(dir, "index.html"), []byte("<html><body>\n"+projects.String()+"</body></html>\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return dir
}

// otherWheel writes a wheel with the other project's name, version and
// Python floor, whose command only says whose it is.
func otherWheel(t *testing.T, dir string) string {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, "micro_rag_mcp-"+otherVersion+"-py3-none-any.whl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	info := "micro_rag_mcp-" + otherVersion + ".dist-info/"
	files := [][2]string{
		{"micro_rag_mcp/__init__.py", "def main():\n    print('not built here')\n"},
		{info + "METADATA", "Metadata-Version: 2.1\nName: " + otherName + "\nVersion: " + otherVersion + "\nRequires-Python: >=3.12\n"},
		{info + "WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\nTag: py3-none-any\n"},
		{info + "entry_points.txt", "[console_scripts]\nmicro-rag-mcp = micro_rag_mcp:main\n"},
		{info + "RECORD", ""},
	}
	z := zip.NewWriter(f)
	for _, file := range files {
		w, err := z.Create(file[0])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := w.Write([]byte(file[1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	return path
}

func fileSHA256(t *testing.T, path string) string {
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}
