package packaging

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// installFormsMarker stands above the README's block of install forms.
const installFormsMarker = "<!-- install-forms:"

// TestReadmeInstallForms runs each line of the README's install-forms block
// exactly as printed, through bash from the repository root (its ./dist/
// paths and globs included), offline and from empty caches, and checks
// that each prints this build's version.
func TestReadmeInstallForms(t *testing.T) {
	lines := readmeBlock(t, installFormsMarker)
	if len(lines) < 3 {
		t.Fatalf("the README's install-forms block has %d lines, want the uvx, find-links and npx forms: %q", len(lines), lines)
	}
	for _, line := range lines {
		t.Run(strings.Fields(line)[0], func(t *testing.T) {
			dir := t.TempDir()
			env := append(clientEnv(t, dir), "UV_OFFLINE=1", "npm_config_offline=true",
				"PATH="+filepath.Join(toolsDir, "bin")+string(os.PathListSeparator)+os.Getenv("PATH"))
			cmd := exec.Command("bash", "-c", line)
			cmd.Dir, cmd.Env = root, env
			out, err := cmd.CombinedOutput()
			if err != nil {
				t.Fatalf("%s: %v\n%s", line, err, out)
			}
			if want := "micro-rag-mcp " + dist.version + " "; !strings.Contains(string(out), want) {
				t.Errorf("%s printed %q, want %q", line, out, want)
			}
		})
	}
}

// readmeBlock returns the lines of the first fenced block after the line
// starting with marker in the repository's README.md.
func readmeBlock(t *testing.T, marker string) []string {
	f, err := os.Open(filepath.Join(root, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var lines []string
	seen, in := false, false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		l := sc.Text()
		switch {
		case !seen:
			seen = strings.HasPrefix(l, marker)
		case !in && strings.HasPrefix(l, "```"):
			in = true
		case in && strings.HasPrefix(l, "```"):
			return lines
		case in && strings.TrimSpace(l) != "":
			lines = append(lines, l)
		}
	}
	t.Fatalf("README.md has no fenced block after %q", marker)
	return nil
}
