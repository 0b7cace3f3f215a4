package quickstart

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/internal/mcpcall"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// The README's sections whose fenced blocks the test runs.
var sections = []string{"Quick start", "Your own folder and a client"}

// Placeholders in the README's JSON config, and what they stand for.
const (
	cloneHolder = "/path/to/micro-rag-mcp"
	homeHolder  = "/home/me"
)

// What make demo may leave in .tools/ (issue 33's goal: 60 MB).
const maxToolsBytes = 60 << 20

// block is one fenced block of the README.
type block struct {
	lang, text string
}

// TestQuickStart copies the tree into a 0700 folder and runs there, with a
// home of its own holding ~/notes (the sample documents), the README's
// shell blocks as printed (make test excepted: it is what runs this), with
// a stand-in claude that records its arguments; then starts the server that
// claude mcp add was given and each server of the JSON config, as a client
// would, and searches through each.
func TestQuickStart(t *testing.T) {
	checkout := testutil.PrivateCheckout(t)
	blocks := readmeBlocks(t, filepath.Join(checkout, "README.md"))
	home := filepath.Join(filepath.Dir(checkout), "home")
	testutil.MkdirAll(t, filepath.Join(home, "notes"))
	copyTree(t, filepath.Join(checkout, "testdata", "sample"), filepath.Join(home, "notes"))
	env := quickstartEnv(t, home)

	var shells, configs []string
	for _, b := range blocks {
		switch b.lang {
		case "sh":
			shells = append(shells, b.text)
		case "json":
			configs = append(configs, b.text)
		}
	}
	if len(shells) < 2 || len(configs) < 1 {
		t.Fatalf("the README's quick start has %d shell and %d JSON blocks, want at least 2 and 1", len(shells), len(configs))
	}
	sawTest := false
	for _, sh := range shells {
		var lines []string
		for _, l := range strings.Split(sh, "\n") {
			if f := strings.Fields(l); len(f) >= 2 && f[0] == "make" && f[1] == "test" {
				sawTest = true
				continue
			}
			lines = append(lines, l)
		}
		out := runShell(t, checkout, env, strings.Join(lines, "\n"))
		if strings.Contains(out, "Running pip as the 'root' user") {
			t.Errorf("the quick start printed pip's root warning:\n%s", out)
		}
	}
	if !sawTest {
		t.Error("the README's quick start no longer says make test")
	}
	n := treeBytes(t, filepath.Join(checkout, ".tools"))
	t.Logf(".tools/ after the quick start: %.1f MB", float64(n)/1e6)
	if n > maxToolsBytes {
		t.Errorf(".tools/ holds %d MB after the quick start, want at most %d", n>>20, maxToolsBytes>>20)
	}

	// claude mcp add --scope user NAME -- COMMAND ARGS...
	raw, err := os.ReadFile(filepath.Join(home, "claude-args"))
	if err != nil {
		t.Fatalf("the quick start never ran claude: %v", err)
	}
	argv := strings.Split(strings.TrimSuffix(string(raw), "\x00"), "\x00")
	dash := indexOf(argv, "--")
	if len(argv) < 4 || argv[0] != "mcp" || argv[1] != "add" || dash < 0 || dash+1 >= len(argv) {
		t.Fatalf("claude was run as %q, want mcp add ... -- COMMAND ARGS", argv)
	}
	if i := indexOf(argv[:dash], "--scope"); i < 0 || argv[i+1] != "user" {
		t.Errorf("claude mcp add without --scope user: %q", argv)
	}
	searchThrough(t, env, argv[dash+1], argv[dash+2:])

	for _, text := range configs {
		text = strings.ReplaceAll(strings.ReplaceAll(text, cloneHolder, checkout), homeHolder, home)
		var cfg struct {
			MCPServers map[string]struct {
				Command string   `json:"command"`
				Args    []string `json:"args"`
			} `json:"mcpServers"`
		}
		if err := json.Unmarshal([]byte(text), &cfg); err != nil {
			t.Fatalf("the README's JSON config does not parse: %v\n%s", err, text)
		}
		if len(cfg.MCPServers) == 0 {
			t.Fatalf("the README's JSON config names no server:\n%s", text)
		}
		for name, s := range cfg.MCPServers {
			t.Run(name, func(t *testing.T) { searchThrough(t, env, s.Command, s.Args) })
		}
	}
}

// searchThrough starts command as a client would, initializes, checks the
// server's name is its --title, and searches for a passage the sample has.
func searchThrough(t *testing.T, env []string, command string, args []string) {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	c, err := client.NewStdioMCPClientWithOptions(command, env, args, transport.WithCommandStderrWriter(logs))
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		c.Close()
		if t.Failed() {
			t.Logf("%s stderr:\n%s", command, logs.String())
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "quickstart", Version: "0"}
	info, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize %s: %v", command, err)
	}
	if i := indexOf(args, "--title"); i < 0 || i+1 >= len(args) || info.ServerInfo.Name != args[i+1] {
		t.Errorf("serverInfo.name %q, args %q", info.ServerInfo.Name, args)
	}
	res, err := mcpcall.Tool(ctx, c, "search", map[string]any{"query": "What caused the checkout outage?", "top_k": 3})
	if err != nil || res.IsError {
		t.Fatalf("search: %v %v", err, res)
	}
	var out struct {
		Results []struct {
			Path string `json:"path"`
		} `json:"results"`
	}
	if err := mcpcall.Decode(res.StructuredContent, &out); err != nil {
		t.Fatal(err)
	}
	if len(out.Results) == 0 || !strings.Contains(out.Results[0].Path, "postmortem-checkout-outage") {
		t.Errorf("search through %s: top results %+v, want postmortem-checkout-outage.txt", command, out.Results)
	}
}

// runShell runs one README block with bash -e from the checkout and returns
// what it printed.
func runShell(t *testing.T, dir string, env []string, script string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, "bash", "-euo", "pipefail", "-c", script)
	cmd.Dir, cmd.Env = dir, env
	start := time.Now()
	out, err := cmd.CombinedOutput()
	t.Logf("ran in %v:\n%s", time.Since(start).Round(time.Second), script)
	if err != nil {
		t.Fatalf("the README's block failed: %v\n%s\n--- output:\n%s", err, script, out)
	}
	return string(out)
}

// quickstartEnv is this environment with HOME moved to home and a stand-in
// claude first on PATH; the caches that make setup fills (the model, ONNX
// Runtime, Go's) stay where they are, so nothing is fetched again.
func quickstartEnv(t *testing.T, home string) []string {
	cache, err := os.UserCacheDir()
	if err != nil {
		t.Fatal(err)
	}
	goenv, err := exec.Command("go", "env", "GOPATH", "GOCACHE", "GOMODCACHE").Output()
	if err != nil {
		t.Fatal(err)
	}
	gopaths := strings.Fields(string(goenv))
	fake := filepath.Join(home, "fakebin")
	testutil.MkdirAll(t, fake)
	testutil.WriteFile(t, filepath.Join(fake, "claude"), []byte("#!/bin/sh\nprintf '%s\\0' \"$@\" > \"$HOME/claude-args\"\n"))
	if err := os.Chmod(filepath.Join(fake, "claude"), 0o755); err != nil {
		t.Fatal(err)
	}
	var env []string
	for _, kv := range os.Environ() {
		k, _, _ := strings.Cut(kv, "=")
		switch k {
		case "HOME", "PATH", "XDG_CACHE_HOME", "MAKEFLAGS", "MAKELEVEL", "MFLAGS", "GOPATH", "GOCACHE", "GOMODCACHE":
			continue
		}
		if strings.HasPrefix(k, "MICRO_RAG_") {
			continue
		}
		env = append(env, kv)
	}
	return append(env, "HOME="+home, "PATH="+fake+string(os.PathListSeparator)+os.Getenv("PATH"),
		"XDG_CACHE_HOME="+cache, "GOPATH="+gopaths[0], "GOCACHE="+gopaths[1], "GOMODCACHE="+gopaths[2])
}

// readmeBlocks returns the fenced blocks under the headings named in
// sections, up to the next heading.
func readmeBlocks(t *testing.T, path string) []block {
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var blocks []block
	var cur *block
	inSection := false
	for sc := bufio.NewScanner(f); sc.Scan(); {
		l := sc.Text()
		switch {
		case cur != nil && strings.HasPrefix(l, "```"):
			if inSection {
				blocks = append(blocks, *cur)
			}
			cur = nil
		case cur != nil:
			cur.text += l + "\n"
		case strings.HasPrefix(l, "```"):
			cur = &block{lang: strings.TrimPrefix(l, "```")}
		case strings.HasPrefix(l, "#"):
			title := strings.TrimSpace(strings.TrimLeft(l, "#"))
			inSection = indexOf(sections, title) >= 0
		}
	}
	if len(blocks) == 0 {
		t.Fatalf("%s has no fenced blocks under %q", path, sections)
	}
	return blocks
}

func copyTree(t *testing.T, src, dst string) {
	if out, err := exec.Command("cp", "-a", src+"/.", dst).CombinedOutput(); err != nil {
		t.Fatalf("cp %s: %v\n%s", src, err, out)
	}
}

// treeBytes is the size of the files under dir (0 when it is missing).
func treeBytes(t *testing.T, dir string) int64 {
	var n int64
	err := filepath.WalkDir(dir, func(_ string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.Type().IsRegular() {
			info, err := d.Info()
			if err != nil {
				return err
			}
			n += info.Size()
		}
		return nil
	})
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	return n
}

func indexOf(list []string, s string) int {
	for i, v := range list {
		if v == s {
			return i
		}
	}
	return -1
}
