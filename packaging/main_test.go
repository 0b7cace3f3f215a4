// Package packaging tests what make dist writes for the one-line client
// configs: the wheel (pip, uvx) and the npm launcher with its platform
// package, installed offline into throwaway caches and run as a client runs
// them. TestMain builds dist/ first unless it already holds this source
// tree's build (scripts/dist.sh --if-changed).
package packaging

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// artifacts are the files of one make dist run.
type artifacts struct {
	dist     string // the folder, absolute
	tarball  string // micro-rag-mcp-VERSION-linux-amd64.tar.gz
	wheel    string // micro_rag_mcp_go-VERSION-py3-none-manylinux_X_Y_x86_64.whl
	platform string // npm micro-rag-mcp-go-linux-x64-gnu-VERSION.tgz
	launcher string // npm micro-rag-mcp-go-VERSION.tgz
	model    string // micro-rag-mcp-VERSION-model-all-MiniLM-L6-v2-q8.tar.gz: models/NAME/, its own release asset
	version  string // scripts/version.sh's, as --version prints it and every file name holds it
}

var (
	dist     artifacts
	root     string // the repository
	toolsDir string // .tools/python: uv and auditwheel (make setup-test)
)

func TestMain(m *testing.M) {
	if err := prepare(); err != nil {
		fmt.Fprintln(os.Stderr, "packaging:", err)
		os.Exit(1)
	}
	os.Exit(m.Run())
}

func prepare() error {
	var err error
	if root, err = filepath.Abs(".."); err != nil {
		return err
	}
	toolsDir = filepath.Join(root, ".tools", "python")
	if _, err := os.Stat(filepath.Join(toolsDir, "bin", "uvx")); err != nil {
		return fmt.Errorf("uv is not installed in %s: run make setup-test (%v)", toolsDir, err)
	}
	build := exec.Command("bash", "scripts/dist.sh", "--if-changed")
	build.Dir, build.Stdout, build.Stderr = root, os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		return fmt.Errorf("scripts/dist.sh: %w", err)
	}
	out, err := exec.Command("bash", filepath.Join(root, "scripts", "version.sh")).Output()
	if err != nil {
		return fmt.Errorf("scripts/version.sh: %w", err)
	}
	dist.version = strings.Fields(string(out))[0]
	dist.dist = filepath.Join(root, "dist")
	for _, f := range []struct {
		dst     *string
		pattern string
	}{
		{&dist.tarball, "micro-rag-mcp-[0-9]*-linux-amd64.tar.gz"},
		{&dist.wheel, "micro_rag_mcp_go-*.whl"},
		{&dist.platform, "micro-rag-mcp-go-linux-x64-gnu-*.tgz"},
		{&dist.launcher, "micro-rag-mcp-go-[0-9]*.tgz"},
		{&dist.model, "micro-rag-mcp-[0-9]*-model-" + model.Q8Name + ".tar.gz"},
	} {
		m, _ := filepath.Glob(filepath.Join(dist.dist, f.pattern))
		if len(m) != 1 {
			return fmt.Errorf("want one dist/%s, found %v", f.pattern, m)
		}
		*f.dst = m[0]
	}
	return nil
}
