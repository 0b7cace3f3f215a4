package main

import (
	"bytes"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// binary is the micro-rag-mcp built once by TestMain for the tests that exec it.
var binary string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "micro-rag-mcp-test-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	binary = filepath.Join(dir, "micro-rag-mcp")
	build := exec.Command("go", "build", "-ldflags", "-X main.version=9.9.9-test -X main.commit=0123abc", "-o", binary, ".")
	build.Stdout, build.Stderr = os.Stderr, os.Stderr
	if err := build.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "building micro-rag-mcp:", err)
		os.RemoveAll(dir)
		os.Exit(1)
	}
	// One PostgreSQL server for the tests that run on both backends.
	code := pgtest.Run(m)
	os.RemoveAll(dir)
	if bigDir != "" {
		os.RemoveAll(bigDir)
	}
	os.Exit(code)
}

// runBinary runs the built binary to completion and returns its exit code and output.
func runBinary(t *testing.T, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	return runBinaryEnv(t, nil, args...)
}

// runBinaryEnv is runBinary with extra environment variables.
func runBinaryEnv(t *testing.T, env []string, args ...string) (code int, stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(binary, args...)
	if env != nil {
		cmd.Env = append(os.Environ(), env...)
	}
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	cmd.Stdin = strings.NewReader("")
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		return ee.ExitCode(), o.String(), e.String()
	} else if err != nil {
		t.Fatal(err)
	}
	return 0, o.String(), e.String()
}

func TestFlagErrors(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file.txt")
	if err := os.WriteFile(file, []byte("x"), 0o644); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name     string
		args     []string
		code     int
		stderr   []string // all must appear
		usageOut bool     // usage text expected on stderr
	}{
		{"no flags", nil, 2, []string{"missing required flag(s): --data-folder, --title, --inst"}, true},
		{"missing inst", []string{"--data-folder", dir, "--title", "t"}, 2, []string{"--inst"}, true},
		{"missing title", []string{"--data-folder", dir, "--inst", "i"}, 2, []string{"missing required flag(s): --title (--title: MCP server name shown to clients); add them"}, true},
		{"unknown flag", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--bogus"}, 2, []string{"micro-rag-mcp: unknown flag --bogus\nRun 'micro-rag-mcp --help' for usage."}, false},
		{"misspelt flag", []string{"search", "--data-folder", dir, "--topk", "3", "q"}, 2, []string{"micro-rag-mcp: unknown flag --topk (did you mean --top-k?)\nRun 'micro-rag-mcp search --help' for usage."}, false},
		{"short flag", []string{"reindex", "--data", dir}, 2, []string{"unknown flag --data (did you mean --data-folder?)"}, false},
		{"bad exts", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--exts", ".txt,.exe"}, 2, []string{`no reader for ".exe"`}, false},
		{"empty exts", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--exts", ""}, 2, []string{`--exts "": no file extensions given; pass some (such as --exts .md,.txt), or leave --exts out to keep the list recorded in the index`}, false},
		{"reindex with empty exts", []string{"reindex", "--data-folder", dir, "--exts="}, 2, []string{`--exts "": no file extensions given`, "Run 'micro-rag-mcp reindex --help' for usage."}, false},
		{"reindex adding nothing", []string{"reindex", "--data-folder", dir, "--exts", "+"}, 2, []string{`--exts "+": no file extensions given`}, false},
		{"reindex with empty add-exts", []string{"reindex", "--data-folder", dir, "--add-exts", " , "}, 2, []string{`--add-exts " , ": no file extensions given; pass some (such as --add-exts .md,.txt), or leave --add-exts out to add none`}, false},
		{"bad log level", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--log-level", "loud"}, 2, []string{"--log-level"}, false},
		{"pprof on all interfaces", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--pprof", ":6060"}, 2, []string{"not a loopback address"}, false},
		{"pprof on a public address", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--pprof", "8.8.8.8:6060"}, 2, []string{"not a loopback address"}, false},
		{"data folder missing", []string{"--data-folder", filepath.Join(dir, "nope"), "--title", "t", "--inst", "i"}, 1, []string{"does not exist"}, false},
		{"data folder is a file", []string{"--data-folder", file, "--title", "t", "--inst", "i"}, 1, []string{"is not a directory"}, false},
		{"stray argument", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "extra"}, 2, []string{`unexpected argument "extra"`}, true},
		{"search without query", []string{"search", "--data-folder", dir}, 2, []string{"search needs a query"}, true},
		{"search without folder", []string{"search", "query"}, 2, []string{"--data-folder"}, true},
		{"search top-k out of range", []string{"search", "--data-folder", dir, "--top-k", "0", "q"}, 2, []string{`"top_k" must be between 1 and 50`}, false},
		{"search with an empty ext", []string{"search", "--data-folder", dir, "--ext", "", "q"}, 2, []string{`argument "ext": "" is not a file extension`, "Run 'micro-rag-mcp search --help' for usage."}, false},
		{"bad search mode", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--search-mode", "fuzzy"}, 2, []string{`--search-mode: search mode "fuzzy" is not one of dense, keyword, hybrid`}, false},
		{"search with bad search mode", []string{"search", "--data-folder", dir, "--search-mode", "semantic", "q"}, 2, []string{`"semantic" is not one of`, "Run 'micro-rag-mcp search --help' for usage."}, false},
		{"blank title", []string{"--data-folder", dir, "--title", " ", "--inst", "i"}, 2, []string{"missing required flag(s): --title"}, true},
		{"list with a bad glob", []string{"list", "--data-folder", dir, "--path-glob", "["}, 2, []string{"--path-glob: ", "Run 'micro-rag-mcp list --help' for usage."}, false},
		{"reindex with a bad glob", []string{"reindex", "--data-folder", dir, "--path-glob", "["}, 2, []string{"--path-glob: ", "Run 'micro-rag-mcp reindex --help' for usage."}, false},
		{"negative idle release", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--idle-release", "-1s"}, 2, []string{"--idle-release -1s is negative"}, false},
		{"idle release without unit", []string{"--data-folder", dir, "--title", "t", "--inst", "i", "--idle-release", "10"}, 2, []string{`invalid value "10" for flag --idle-release: not a duration: write it with a unit, such as 30s`}, false},
		{"reindex has no idle release", []string{"reindex", "--data-folder", dir, "--idle-release", "1m"}, 2, []string{"unknown flag --idle-release"}, false},
		{"reindex has no search mode", []string{"reindex", "--data-folder", dir, "--search-mode", "dense"}, 2, []string{"unknown flag --search-mode"}, false},
		{"reindex without folder", []string{"reindex"}, 2, []string{"--data-folder"}, true},
		{"status without folder", []string{"status"}, 2, []string{"--data-folder"}, true},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, stdout, stderr := runBinary(t, tc.args...)
			if code != tc.code {
				t.Errorf("exit code %d, want %d; stderr:\n%s", code, tc.code, stderr)
			}
			if stdout != "" {
				t.Errorf("stdout not empty: %q", stdout)
			}
			for _, want := range tc.stderr {
				if !strings.Contains(stderr, want) {
					t.Errorf("stderr lacks %q:\n%s", want, stderr)
				}
			}
			if tc.usageOut && !strings.Contains(stderr, "Usage:") {
				t.Errorf("no usage on stderr:\n%s", stderr)
			}
			if !tc.usageOut && strings.Contains(stderr, "Usage:") {
				t.Errorf("usage printed for an error it does not help with:\n%s", stderr)
			}
			// The error comes first, not after the usage.
			if !strings.HasPrefix(stderr, "micro-rag-mcp: ") {
				t.Errorf("stderr does not start with the error:\n%s", stderr)
			}
		})
	}
}

func TestVersionAndHelp(t *testing.T) {
	code, stdout, _ := runBinary(t, "--version")
	if want := "micro-rag-mcp 9.9.9-test (commit 0123abc, " + runtime.Version() + ")"; code != 0 || strings.TrimSpace(stdout) != want {
		t.Errorf("--version: code %d, stdout %q", code, stdout)
	}
	code, stdout, _ = runBinary(t, "--help")
	if strings.Contains(stdout, "\n  -data-folder") || !strings.Contains(stdout, "\n  --data-folder string\n") {
		t.Errorf("--help spells flags with one dash, the README with two:\n%s", stdout)
	}
	if code != 0 || !strings.Contains(stdout, "--data-folder") || !strings.Contains(stdout, "--inst") {
		t.Errorf("--help: code %d, stdout %q", code, stdout)
	}
	code, stdout, _ = runBinary(t, "search", "--help")
	if code != 0 || !strings.Contains(stdout, "--top-k") {
		t.Errorf("search --help: code %d, stdout %q", code, stdout)
	}
	// docs/command-line.md promises every --help gives the exit statuses,
	// the server's included (a client's user reads that one first).
	for _, args := range [][]string{{"--help"}, {"reindex", "--help"}, {"list", "--help"}, {"search", "--help"}, {"status", "--help"}} {
		code, stdout, _ = runBinary(t, args...)
		if code != 0 || !strings.Contains(stdout, "\nExit status: 0 ") {
			t.Errorf("%v gives no exit statuses: code %d\n%s", args, code, stdout)
		}
	}
	// The README does not describe model.json; command-line.md does.
	if strings.Contains(stdout, "(see README)") {
		t.Errorf("--model-dir points to the README for model.json, which command-line.md describes:\n%s", stdout)
	}
	// The explain line labels its parts cover and best (lower case).
	code, stdout, _ = runBinary(t, "search", "--help")
	if strings.Contains(stdout, "BEST") {
		t.Errorf("search --help names the explain column BEST; it prints best:\n%s", stdout)
	}
}

func TestParseExts(t *testing.T) {
	got, err := parseExts("exts", " TXT, .Md,pdf,.docx,.txt ")
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{".txt", ".md", ".pdf", ".docx"}; strings.Join(got, " ") != strings.Join(want, " ") {
		t.Errorf("got %v, want %v", got, want)
	}
	for _, bad := range []string{"", " , ", ".exe", "txt,.zip"} {
		if _, err := parseExts("exts", bad); err == nil {
			t.Errorf("parseExts(%q) accepted", bad)
		}
	}
}

func TestCheckLoopback(t *testing.T) {
	for _, ok := range []string{"127.0.0.1:6060", "localhost:0", "[::1]:6060", "127.1.2.3:9"} {
		if err := checkLoopback(ok); err != nil {
			t.Errorf("%s refused: %v", ok, err)
		}
	}
	for _, bad := range []string{":6060", "0.0.0.0:6060", "[::]:1", "10.0.0.1:80", "example.com:80", "6060"} {
		if err := checkLoopback(bad); err == nil {
			t.Errorf("%s accepted", bad)
		}
	}
}

func TestParseFlagsInterleaved(t *testing.T) {
	var c common
	var topK int
	fs := newFlagSet("search", "x", io.Discard)
	c.register(fs)
	fs.IntVar(&topK, "top-k", 5, "")
	pos, err := parseFlags(fs, []string{"parental", "--data-folder", "/d", "leave", "--top-k", "3", "--", "--literal"}, io.Discard)
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(pos, "|") != "parental|leave|--literal" || c.dataFolder != "/d" || topK != 3 {
		t.Errorf("pos %q, folder %q, topK %d", pos, c.dataFolder, topK)
	}
}

// copySample copies testdata/sample into a fresh temporary folder.
func copySample(t *testing.T) string {
	t.Helper()
	dst := filepath.Join(t.TempDir(), "docs")
	if err := os.CopyFS(dst, os.DirFS("../../testdata/sample")); err != nil {
		t.Fatal(err)
	}
	return dst
}

var (
	bigOnce sync.Once
	bigDir  string
)

// bigFolder returns a shared, read-only folder of generated text files large
// enough that reindexing it takes several seconds. Callers copy it if they
// need to change it; index folders must be placed elsewhere.
func bigFolder(t *testing.T) string {
	t.Helper()
	bigOnce.Do(func() {
		dir, err := os.MkdirTemp("", "micro-rag-mcp-big-")
		if err != nil {
			t.Fatal(err)
		}
		words := strings.Fields(`ledger invoice payment warehouse replica cluster
			latency throughput partition schema deploy rollback incident pager
			budget hiring roadmap quarterly vendor contract audit backup restore
			compliance onboarding mentor review release feature customer
			support ticket escalation network storage compute memory kernel`)
		rng := rand.New(rand.NewPCG(1, 2))
		for i := range 200 {
			var b strings.Builder
			for p := range 4 {
				for s := range 8 {
					fmt.Fprintf(&b, "Note %d.%d.%d: ", i, p, s)
					for range 10 {
						b.WriteString(words[rng.IntN(len(words))])
						b.WriteByte(' ')
					}
					b.WriteString("done. ")
				}
				b.WriteString("\n\n")
			}
			name := filepath.Join(dir, fmt.Sprintf("note-%03d.txt", i))
			if err := os.WriteFile(name, []byte(b.String()), 0o644); err != nil {
				t.Fatal(err)
			}
		}
		bigDir = dir
	})
	if bigDir == "" {
		t.Fatal("big folder was not generated")
	}
	return bigDir
}

// TestBroadDataFolder: / and the home folder are refused as data folders
// (a reindex would read everything) unless --allow-broad-folder is given.
// Like TestFlagErrors, it is refused before any store is opened.
func TestBroadDataFolder(t *testing.T) {
	home := t.TempDir()
	run := func(args ...string) (int, string) {
		cmd := exec.Command(binary, args...)
		cmd.Env = append(os.Environ(), "HOME="+home)
		out, err := cmd.CombinedOutput()
		if ee, ok := err.(*exec.ExitError); ok {
			return ee.ExitCode(), string(out)
		}
		return 0, string(out)
	}
	for dir, what := range map[string]string{"/": "the root of the file system", home: "your home folder"} {
		for _, cmd := range [][]string{{"reindex"}, {"status"}, {"--title", "t", "--inst", "i"}} {
			code, out := run(append(cmd, "--data-folder", dir)...)
			if code != 2 || !strings.Contains(out, "is "+what) || !strings.Contains(out, "--allow-broad-folder") {
				t.Errorf("%v --data-folder %s: exit %d:\n%s", cmd, dir, code, out)
			}
		}
	}
	if code, out := run("status", "--data-folder", home, "--allow-broad-folder", "--index-folder", filepath.Join(t.TempDir(), "idx")); code != 0 {
		t.Errorf("status with --allow-broad-folder: exit %d:\n%s", code, out)
	}
}
