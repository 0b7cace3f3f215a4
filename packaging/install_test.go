package packaging

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// Time bounds that only end a hung step; the measured times are logged.
// With the model download stalled on purpose, any answer to initialize at
// all shows that it does not wait for the download; the goal for
// it is 5 s, checked by the figure logged as "initialize answered".
const (
	installBound    = 3 * time.Minute
	initializeBound = 30 * time.Second
	indexBound      = 5 * time.Minute
	stopBound       = 30 * time.Second
)

const (
	title = "sample-docs"
	inst  = "Engineering team documents: onboarding, incidents, designs, HR."
)

// form is one way a client's config starts the server.
type form struct {
	name string
	// install prepares dir (a throwaway home for every cache the tools use)
	// and returns the command line that runs micro-rag-mcp.
	install func(t *testing.T, dir string, env []string) []string
	npmExec bool // started through npm exec (npx)
}

var forms = []form{
	{"pip", func(t *testing.T, dir string, env []string) []string {
		venv := filepath.Join(dir, "venv")
		run(t, env, python(t), "-m", "venv", "--without-pip", venv)
		run(t, env, python(t), "-m", "pip", "--python", filepath.Join(venv, "bin", "python"),
			"install", "--quiet", "--no-index", dist.wheel)
		return []string{filepath.Join(venv, "bin", "micro-rag-mcp")}
	}, false},
	{"uvx-from-wheel", func(t *testing.T, dir string, env []string) []string {
		return []string{filepath.Join(toolsDir, "bin", "uvx"), "--offline", "--from", dist.wheel, "micro-rag-mcp"}
	}, false},
	{"uvx-find-links", func(t *testing.T, dir string, env []string) []string {
		// The distribution's own name as the command: what uvx NAME runs.
		return []string{filepath.Join(toolsDir, "bin", "uvx"), "--offline", "--find-links", dist.dist, "micro-rag-mcp-go"}
	}, false},
	{"npx", func(t *testing.T, dir string, env []string) []string {
		return []string{"npx", "-y", "--offline", "--package", dist.platform, "--package", dist.launcher, "--", "micro-rag-mcp"}
	}, true},
}

// TestInstallForms installs each form offline and runs it as a client does:
// --version; a session from an empty model cache with the download hanging,
// which must still answer initialize; a session with the model in the cache
// that indexes testdata/sample and searches it, ended by SIGTERM sent to
// the launcher, which must reach the server.
func TestInstallForms(t *testing.T) {
	for _, f := range forms {
		t.Run(f.name, func(t *testing.T) {
			dir := t.TempDir()
			env := clientEnv(t, dir)
			argv := f.install(t, dir, env)

			t.Run("version", func(t *testing.T) {
				start := time.Now()
				out := run(t, env, argv[0], append(argv[1:], "--version")...)
				t.Logf("--version (first run, installs) took %v", time.Since(start).Round(time.Millisecond))
				if want := "micro-rag-mcp " + dist.version + " "; !strings.HasPrefix(out, want) {
					t.Errorf("--version printed %q, want it to start with %q", out, want)
				}
			})
			t.Run("initialize with an empty model cache", func(t *testing.T) {
				emptyCacheSession(t, dir, env, argv)
			})
			t.Run("search, then SIGTERM", func(t *testing.T) {
				searchSession(t, f, dir, env, argv)
			})
		})
	}
}

func emptyCacheSession(t *testing.T, dir string, env, argv []string) {
	cache := filepath.Join(dir, "empty-cache")
	if err := os.MkdirAll(cache, 0o755); err != nil {
		t.Fatal(err)
	}
	proxy := newStallProxy(t)
	env = append(env, "XDG_CACHE_HOME="+cache, "HTTPS_PROXY="+proxy.URL(), "https_proxy="+proxy.URL())
	s := startSession(t, serveArgs(argv, filepath.Join(dir, "index-empty")), env)
	name, err := s.initialize(initializeBound)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("initialize answered %v after start, model cache empty", time.Since(s.start).Round(time.Millisecond))
	if name != title {
		t.Errorf("serverInfo.name = %q, want %q", name, title)
	}
	// The model is being fetched into the user cache (never beside the
	// binary), through the proxy that holds it forever.
	modelDir := filepath.Join(cache, "micro-rag-mcp", "models", model.DefaultName)
	if !s.waitStderr("model not cached: downloading it once", initializeBound) || !strings.Contains(s.stderr.String(), modelDir) {
		t.Errorf("the server did not log a download into %s", modelDir)
	}
	if req := proxy.firstRequest(initializeBound); !strings.HasPrefix(req, "CONNECT ") {
		t.Errorf("the download did not go through the stalled proxy (first request %q)", req)
	}
	s.stdin.Close()
	code, err := s.waitExit(stopBound)
	if err != nil {
		t.Fatal(err)
	}
	if code != 0 {
		t.Errorf("exit status %d after stdin closed, want 0", code)
	}
}

func searchSession(t *testing.T, f form, dir string, env, argv []string) {
	// A user cache holding only the model: ONNX Runtime must come from the
	// package's own lib/.
	cache := filepath.Join(dir, "cache")
	models := filepath.Join(cache, "micro-rag-mcp", "models")
	if err := os.MkdirAll(models, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(model.Models[0].Dir(), filepath.Join(models, model.DefaultName)); err != nil {
		t.Fatal(err)
	}
	env = append(env, "XDG_CACHE_HOME="+cache)
	s := startSession(t, serveArgs(argv, filepath.Join(dir, "index")), env)
	if _, err := s.initialize(initializeBound); err != nil {
		t.Fatal(err)
	}
	t.Logf("initialize answered %v after start, model in the cache", time.Since(s.start).Round(time.Millisecond))
	if top := searchIndexed(t, s, "How many weeks of parental leave do I get?"); !strings.HasSuffix(top, "employee-handbook-leave.docx") {
		t.Errorf("top result %q, want employee-handbook-leave.docx", top)
	}

	// A client stops a server by signalling the process it started, which
	// is the launcher; stdin stays open, so only the signal can end it.
	if err := s.cmd.Process.Signal(syscall.SIGTERM); err != nil {
		t.Fatal(err)
	}
	if _, err := s.waitExit(stopBound); err != nil {
		t.Fatal(err)
	}
	// npm exec passes SIGTERM to the sh it runs the launcher with, and dies
	// of it itself; the launcher, orphaned, stops the server.
	st := s.cmd.ProcessState.Sys().(syscall.WaitStatus)
	if !(st.Exited() && st.ExitStatus() == 0) && !(f.npmExec && st.Signaled() && st.Signal() == syscall.SIGTERM) {
		t.Errorf("after SIGTERM the launcher ended with %v, want the server's exit status 0", s.cmd.ProcessState)
	}
	if !s.waitStderr("MCP session ended", stopBound) {
		t.Error("the server did not log its shutdown: SIGTERM did not reach it")
	}
	for end := time.Now().Add(stopBound); len(processesUnder(dir)) > 0 && time.Now().Before(end); {
		time.Sleep(100 * time.Millisecond)
	}
	if left := processesUnder(dir); len(left) > 0 {
		t.Errorf("processes left running after SIGTERM: %v", left)
	}
}

// searchIndexed waits for the session's initial indexing and returns the
// path of query's top search result ("" when there is none).
func searchIndexed(t *testing.T, s *session, query string) string {
	t.Helper()
	// reindex waits for the model and the initial indexing; busy while that runs.
	for end := time.Now().Add(indexBound); ; time.Sleep(200 * time.Millisecond) {
		_, err := s.tool("reindex", map[string]any{}, indexBound)
		if err == nil {
			break
		}
		if !strings.Contains(err.Error(), "busy:") || time.Now().After(end) {
			t.Fatal(err)
		}
	}
	out, err := s.tool("search", map[string]any{"query": query, "top_k": 3}, indexBound)
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Results []struct {
			Path string `json:"path"`
		} `json:"results"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatal(err)
	}
	if len(res.Results) == 0 {
		return ""
	}
	return res.Results[0].Path
}

// serveArgs is argv serving testdata/sample over stdio, the index in index.
// Dense search only, so a hit shows that the model ran.
func serveArgs(argv []string, index string) []string {
	return append(append([]string(nil), argv...), "--data-folder", filepath.Join(root, "testdata", "sample"),
		"--index-folder", index, "--title", title, "--inst", inst, "--search-mode", "dense")
}

// clientEnv is this process's environment with every cache the tools use
// moved under dir, the network switched off for them, and none of the
// server's own overrides.
func clientEnv(t *testing.T, dir string) []string {
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch {
		case strings.HasPrefix(k, "MICRO_RAG_"), strings.HasPrefix(k, "UV_"), strings.HasPrefix(k, "PIP_"),
			strings.HasPrefix(strings.ToLower(k), "npm_config_"), strings.HasSuffix(strings.ToLower(k), "_proxy"),
			k == "XDG_CACHE_HOME", k == "VIRTUAL_ENV", k == "NODE_OPTIONS":
			continue
		}
		env = append(env, kv)
	}
	return append(env,
		"UV_CACHE_DIR="+filepath.Join(dir, "uv-cache"), "UV_TOOL_DIR="+filepath.Join(dir, "uv-tools"),
		"UV_PYTHON="+python(t), "UV_PYTHON_DOWNLOADS=never", "UV_NO_CONFIG=1",
		"PIP_CACHE_DIR="+filepath.Join(dir, "pip-cache"), "PIP_DISABLE_PIP_VERSION_CHECK=1",
		"npm_config_cache="+filepath.Join(dir, "npm-cache"), "npm_config_update_notifier=false",
		"npm_config_audit=false", "npm_config_fund=false",
	)
}

var pythonExe string

// python is the interpreter behind python3 (not a shim that reads $HOME).
func python(t *testing.T) string {
	if pythonExe == "" {
		out, err := exec.Command("python3", "-c", "import sys; print(sys.executable)").Output()
		if err != nil {
			t.Fatalf("python3: %v", err)
		}
		pythonExe = strings.TrimSpace(string(out))
	}
	return pythonExe
}

// run runs a command to completion and returns its stdout.
func run(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), installBound)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Env = env
	var stderr testutil.SyncBuffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, stderr.String())
	}
	return string(out)
}
