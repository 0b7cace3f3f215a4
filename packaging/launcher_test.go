package packaging

import (
	"encoding/json"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestLauncherWithoutPlatformPackage installs the npm launcher alone, as
// npm does when it skips the optional platform package, and checks that
// running it says which package is missing and why, instead of failing
// with a bare stack trace.
func TestLauncherWithoutPlatformPackage(t *testing.T) {
	dir := t.TempDir()
	cmd := exec.Command("npx", "-y", "--offline", "--package", dist.launcher, "--", "micro-rag-mcp", "--version")
	cmd.Env = clientEnv(t, dir)
	out, err := cmd.CombinedOutput()
	ee, ok := err.(*exec.ExitError)
	if !ok || ee.ExitCode() != 127 {
		t.Fatalf("want exit status 127, got %v; output:\n%s", err, out)
	}
	plat := npmManifest(t, dist.platform)
	for _, want := range []string{
		plat.Name + "@" + plat.Version + " is not installed",
		"--omit=optional",
		"npm install " + plat.Name + "@" + plat.Version,
	} {
		if !strings.Contains(string(out), want) {
			t.Errorf("message lacks %q:\n%s", want, out)
		}
	}
}

// TestLauncherMessages checks the launcher's message for the systems npm
// skips the platform package on, which this machine is not.
func TestLauncherMessages(t *testing.T) {
	dir := t.TempDir()
	extract(t, dist.launcher, dir)
	launcher := filepath.Join(dir, "package", "bin", "micro-rag-mcp.js")
	floor := npmManifest(t, dist.launcher).GlibcFloor
	for _, c := range []struct {
		sys  string
		want []string
	}{
		{`{"platform":"darwin","arch":"arm64","libc":""}`, []string{"this system is darwin arm64", "Linux x86_64 with glibc " + floor, "Build micro-rag-mcp from source"}},
		{`{"platform":"linux","arch":"arm64","libc":"glibc 2.36"}`, []string{"this system is linux arm64 glibc 2.36", "Build micro-rag-mcp from source"}},
		{`{"platform":"linux","arch":"x64","libc":"musl"}`, []string{"musl libc", "glibc-based distribution"}},
	} {
		out, err := exec.Command("node", "-e", "process.stdout.write(require(process.argv[1]).missingMessage(JSON.parse(process.argv[2])))",
			launcher, c.sys).CombinedOutput()
		if err != nil {
			t.Fatalf("%s: %v\n%s", c.sys, err, out)
		}
		for _, w := range c.want {
			if !strings.Contains(string(out), w) {
				t.Errorf("%s: message lacks %q:\n%s", c.sys, w, out)
			}
		}
	}
}

// manifest is the part of an npm package.json the tests read.
type manifest struct {
	Name                 string            `json:"name"`
	Version              string            `json:"version"`
	OS                   []string          `json:"os"`
	CPU                  []string          `json:"cpu"`
	Libc                 []string          `json:"libc"`
	Bin                  map[string]string `json:"bin"`
	OptionalDependencies map[string]string `json:"optionalDependencies"`
	GlibcFloor           string            `json:"glibcFloor"`
}

func npmManifest(t *testing.T, tgz string) manifest {
	t.Helper()
	var m manifest
	if err := json.Unmarshal(tarFiles(t, tgz)["package/package.json"].data, &m); err != nil {
		t.Fatal(err)
	}
	return m
}

func extract(t *testing.T, tgz, dir string) {
	t.Helper()
	if out, err := exec.Command("tar", "-xzf", tgz, "-C", dir).CombinedOutput(); err != nil {
		t.Fatalf("tar: %v\n%s", err, out)
	}
}
