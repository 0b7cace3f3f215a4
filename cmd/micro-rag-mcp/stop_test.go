package main

// Stopping a reindex from outside while it embeds one large file: SIGINT,
// SIGTERM and EOF on a server's stdin each end the process within seconds,
// free index.lock and leave an index that status finds sound, with none of
// the stopped batch's files listed as failed.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/gofrs/flock"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// exitWait is how long a stopped process may take before the test calls it
// hung: far above the one model call a stop waits for, far below the
// minutes a large file takes.
const exitWait = 30 * time.Second

// largeText is about n bytes of varied prose in paragraphs (seeded): a
// file of many chunks that takes minutes to embed.
func largeText(n int, seed uint64) string {
	words := strings.Fields(`river mountain engine harbor violin orchard lantern
		glacier copper meadow falcon quarry velvet thunder compass saffron
		beacon canyon marble pepper tundra walnut cobalt prairie ember
		lagoon timber nickel orchid summit basalt juniper`)
	rng := rand.New(rand.NewPCG(seed, 7))
	var b strings.Builder
	for s := 0; b.Len() < n; s++ {
		for range 6 + rng.IntN(10) {
			b.WriteString(words[rng.IntN(len(words))])
			b.WriteByte(' ')
		}
		b.WriteString("end.")
		if s%7 == 6 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// smallFacts are the small files beside the large one, with a query each
// that finds only that file.
var smallFacts = []struct{ name, text, query string }{
	{"a-payments.md", "# Payments\n\nThe checkout service retries each card payment twice before giving up.\n", "how often are card payments retried"},
	{"b-oncall.md", "# On call\n\nThe on-call engineer is paged when error rates pass five percent.\n", "when is the on-call engineer paged"},
	{"c-backup.md", "# Backups\n\nDatabase backups run nightly at two in the morning and are kept for thirty days.\n", "how long are database backups kept"},
}

// largeFolder makes a data folder with the small files and large.txt of
// about size bytes, and an index folder beside it.
func largeFolder(t *testing.T, size int) (data, idx string) {
	t.Helper()
	root := t.TempDir()
	data, idx = filepath.Join(root, "docs"), filepath.Join(root, "idx")
	if err := os.MkdirAll(data, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, f := range smallFacts {
		if err := os.WriteFile(filepath.Join(data, f.name), []byte(f.text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(filepath.Join(data, "large.txt"), []byte(largeText(size, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	return data, idx
}

// progressChunks reads the chunks done from a reindex progress line
// ("reindex: 1,024/~9,000 chunks ..."), or -1.
var progressLine = regexp.MustCompile(`^reindex: ([\d,]+)/`)

func progressChunks(line string) int {
	m := progressLine.FindStringSubmatch(line)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(strings.ReplaceAll(m[1], ",", ""))
	return n
}

// startReindex starts a CLI reindex and returns once its progress shows
// at least min chunks embedded; stderr keeps everything it wrote.
func startReindex(t *testing.T, b backend, min int, args ...string) (cmd *exec.Cmd, stderr *testutil.SyncBuffer) {
	t.Helper()
	cmd = b.command(append([]string{"reindex"}, args...)...)
	pipe, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	stderr = &testutil.SyncBuffer{}
	reached := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(pipe)
		once := false
		for sc.Scan() {
			fmt.Fprintln(stderr, sc.Text())
			if !once && progressChunks(sc.Text()) >= min {
				once = true
				close(reached)
			}
		}
		io.Copy(stderr, pipe)
	}()
	select {
	case <-reached:
	case <-time.After(indexTimeout):
		t.Fatalf("reindex never embedded %d chunks:\n%s", min, stderr.String())
	}
	return cmd, stderr
}

// waitFor waits until buf holds text.
func waitFor(t *testing.T, buf *testutil.SyncBuffer, text string) {
	t.Helper()
	for deadline := time.Now().Add(indexTimeout); !strings.Contains(buf.String(), text); time.Sleep(10 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("never said %q:\n%s", text, buf.String())
		}
	}
}

// waitExit waits for cmd to end and returns its exit code and how long it took.
func waitExit(t *testing.T, cmd *exec.Cmd) (int, time.Duration) {
	t.Helper()
	start := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		code := 0
		if ee, ok := err.(*exec.ExitError); ok {
			code = ee.ExitCode()
		} else if err != nil {
			t.Fatal(err)
		}
		return code, time.Since(start)
	case <-time.After(exitWait):
		cmd.Process.Kill()
		t.Fatalf("still running %s after it was told to stop", exitWait)
	}
	return 0, 0
}

var noFailedFiles = regexp.MustCompile(`(?m)^failed files:\s+0$`)

// checkLeftClean checks that nobody holds the index (index.lock, or an
// advisory lock in the test's database) and that status loads the index
// as sound and lists no failed file (a stop is not a failure).
func checkLeftClean(t *testing.T, b backend, data, idx string) {
	t.Helper()
	if b.postgres() {
		// The server drops a dead client's session, and its locks, on its own.
		deadline := time.Now().Add(exitWait)
		for n := b.advisoryLocks(t); n != 0; n = b.advisoryLocks(t) {
			if time.Now().After(deadline) {
				t.Errorf("%d advisory locks still held", n)
				break
			}
			time.Sleep(100 * time.Millisecond)
		}
	} else {
		l := flock.New(filepath.Join(idx, localstore.LockFile))
		if ok, err := l.TryLock(); err != nil || !ok {
			t.Errorf("index.lock still held (%v)", err)
		} else {
			l.Unlock()
		}
	}
	code, out, errOut := b.run(t, "status", "--data-folder", data, "--index-folder", idx)
	if code != 0 || !strings.Contains(out, "integrity:") || !strings.Contains(out, engine.IntegrityOK) || !noFailedFiles.MatchString(out) {
		t.Errorf("status exit %d:\n%s%s", code, out, errOut)
	}
}

// TestStopDuringEmbedding: each way of stopping, while the model embeds a
// 1.5 MB file (some 2,000 chunks, over a minute of embedding).
func TestStopDuringEmbedding(t *testing.T) { eachBackend(t, testStopDuringEmbedding) }

func testStopDuringEmbedding(t *testing.T, b backend) {
	for _, tc := range []struct {
		name string
		sigs []syscall.Signal
		code int
		says string
	}{
		{"SIGINT", []syscall.Signal{syscall.SIGINT}, 1, "reindex interrupted"},
		{"SIGTERM", []syscall.Signal{syscall.SIGTERM}, 1, "reindex interrupted"},
		// The second signal does not wait for the batch in the model.
		{"SIGINT twice", []syscall.Signal{syscall.SIGINT, syscall.SIGINT}, 130, "exiting at once"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, idx := largeFolder(t, 1500_000)
			cmd, stderr := startReindex(t, b, 128, "--data-folder", data, "--index-folder", idx)
			for i, s := range tc.sigs {
				if i > 0 {
					// Signals sent together can merge into one: wait
					// until the first was taken.
					waitFor(t, stderr, "signal again")
				}
				cmd.Process.Signal(s)
			}
			code, took := waitExit(t, cmd)
			t.Logf("exit %d %s after %v", code, took.Round(time.Millisecond), tc.sigs)
			if code != tc.code || !strings.Contains(stderr.String(), tc.says) {
				t.Errorf("exit %d, want %d with %q:\n%s", code, tc.code, tc.says, stderr.String())
			}
			checkLeftClean(t, b, data, idx)
		})
	}
	t.Run("server stdin EOF", func(t *testing.T) {
		data, idx := largeFolder(t, 1500_000)
		s := b.startRaw(t, serverArgs(data, "--index-folder", idx)...)
		s.initialize(`1`)
		for i := 0; ; i++ {
			res := s.tool(fmt.Sprintf(`"s%d"`, i), "search", map[string]any{"query": "river"})
			var out struct {
				IndexState *engine.IndexState `json:"index_state"`
			}
			decode(t, res["structuredContent"], &out)
			if st := out.IndexState; st != nil && st.ChunksDone >= 128 {
				break
			}
			if i > int(indexTimeout/(200*time.Millisecond)) {
				t.Fatalf("the initial reindex never embedded 128 chunks:\n%s", s.logs.String())
			}
			time.Sleep(200 * time.Millisecond)
		}
		s.stdin.Close()
		code, took := waitExit(t, s.cmd)
		t.Logf("exit %d %s after EOF", code, took.Round(time.Millisecond))
		if code != 0 {
			t.Errorf("exit %d after EOF:\n%s", code, s.logs.String())
		}
		s.checkStdout()
		checkLeftClean(t, b, data, idx)
	})
}

// TestBusyStartRetries: a server whose start-up reindex finds another
// process holding the index says so in its searches, and indexes the
// folder itself once that process is gone, though it died before its
// first commit.
func TestBusyStartRetries(t *testing.T) { eachBackend(t, testBusyStartRetries) }

func testBusyStartRetries(t *testing.T, b backend) {
	data := copySample(t)
	addNotes(t, data, 40)
	idx := filepath.Join(t.TempDir(), "idx")
	a := b.command("reindex", "--data-folder", data, "--index-folder", idx)
	aLogs := &testutil.SyncBuffer{}
	a.Stderr = aLogs
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { a.Process.Kill(); a.Wait() })
	waitFor(t, aLogs, "reindex: ")

	srv := b.startRaw(t, serverArgs(data, "--index-folder", idx)...)
	srv.initialize(`1`)
	waitFor(t, srv.logs, "initial reindex waits")
	res := srv.tool(`"w"`, "search", map[string]any{"query": "warehouse ledger"})
	var out struct {
		IndexState *engine.IndexState `json:"index_state"`
	}
	decode(t, res["structuredContent"], &out)
	if out.IndexState == nil || !strings.Contains(out.IndexState.Activity, "waiting for another process") {
		t.Errorf("search while waiting: index_state %+v", out.IndexState)
	}
	a.Process.Kill() // before its first checkpoint: nothing committed
	a.Wait()
	waitFor(t, srv.logs, "initial reindex done")
	if p := srv.searchPaths(`"after"`, sampleQueries[0].query); len(p) == 0 || p[0] != sampleQueries[0].path {
		t.Errorf("no results after the initial reindex ran:\n%s", srv.logs.String())
	}
	srv.close()
}

// TestKilledReindexKeepsIndex: a forced reindex killed outright (SIGKILL:
// no chance to clean up) while it embeds leaves the previous index sound
// and searchable on either backend, its lock dies with it, and the next
// reindex completes.
func TestKilledReindexKeepsIndex(t *testing.T) { eachBackend(t, testKilledReindexKeepsIndex) }

func testKilledReindexKeepsIndex(t *testing.T, b backend) {
	data := copySample(t)
	d := []string{"--data-folder", data, "--index-folder", filepath.Join(t.TempDir(), "idx")}
	if code, _, stderr := b.run(t, append([]string{"reindex"}, d...)...); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	large := filepath.Join(data, "large.txt")
	if err := os.WriteFile(large, []byte(largeText(400_000, 1)), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd, _ := startReindex(t, b, 128, append([]string{"--force"}, d...)...)
	cmd.Process.Kill()
	cmd.Wait()
	checkLeftClean(t, b, d[1], d[3])
	searchFinds := func(when string) {
		t.Helper()
		for _, q := range sampleQueries {
			code, stdout, stderr := b.run(t, append([]string{"search", "--json", "--top-k", "1", q.query}, d...)...)
			var out struct{ Results []isearch.Result }
			if json.Unmarshal([]byte(stdout), &out); code != 0 || len(out.Results) == 0 || out.Results[0].Path != q.path {
				t.Errorf("%s: %q finds %+v, want %s (exit %d)\n%s", when, q.query, out.Results, q.path, code, stderr)
			}
		}
	}
	searchFinds("after the kill")
	os.Remove(large)
	if code, r, stderr := reindexJSON(t, b, d...); code != 0 || r.FilesFailed != 0 || r.ChunksTotal == 0 {
		t.Errorf("reindex after the kill: exit %d, %+v\n%s", code, r, stderr)
	}
	searchFinds("after the next reindex")
}
