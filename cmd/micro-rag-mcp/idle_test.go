package main

// --idle-release over MCP with the real model: the server gives the
// model's memory back after the idle period, and the next search, reindex
// or watched change loads it again. Local index only: what is released is
// the model's, whatever the store. Their RSS is measured by
// scripts/idle_rss.py (BENCHMARKS.md), not asserted here.

import (
	"fmt"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// The server's log lines for a release, the load after it, the end of a
// reindex and a watched update.
const (
	logReleased    = "idle: model released"
	logReloaded    = "model loaded again after idle"
	logReindexDone = "msg=\"reindex done\""
	logUpdated     = "index updated after file changes"
)

// testIdle is the --idle-release of these tests: short, so they wait
// little, and long beside the server's own steps between two embeddings.
const testIdle = "1s"

// idleNotes is how many notes of bigFolder the long reindex reads.
const idleNotes = 30

// startIdleServer starts a server on data with --idle-release testIdle and
// extra flags, and returns it with its log once its initial reindex is over.
func startIdleServer(t *testing.T, data string, extra ...string) (*client.Client, *testutil.SyncBuffer) {
	t.Helper()
	args := append([]string{"--data-folder", data, "--title", "docs-idle", "--inst", testInst, "--log-level", "debug",
		"--idle-release", testIdle}, extra...)
	c, logs := startCommandLogs(t, nil, nil, binary, args)
	waitForTop(t, c, sampleQueries[0].query, sampleQueries[0].path)
	reindex(t, c, map[string]any{}) // waits out the initial reindex
	return c, logs
}

// logCount is how many times the log holds text.
func logCount(logs *testutil.SyncBuffer, text string) int { return strings.Count(logs.String(), text) }

// waitCount waits until the log holds text at least n times.
func waitCount(t *testing.T, logs *testutil.SyncBuffer, text string, n int) {
	t.Helper()
	for deadline := time.Now().Add(indexTimeout); strings.Count(logs.String(), text) < n; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the server logged %q %d times, want %d:\n%s", text, strings.Count(logs.String(), text), n, logs.String())
		}
	}
}

// sameResults fails unless got ranks the same passages as want, with the
// same scores up to float rounding.
func sameResults(t *testing.T, what string, want, got []isearch.Result) {
	t.Helper()
	if len(want) == 0 || len(got) != len(want) {
		t.Fatalf("%s: %d results, want %d (and some)", what, len(got), len(want))
	}
	for i := range want {
		w, g := want[i], got[i]
		if g.Path != w.Path || g.ChunkIndex != w.ChunkIndex || math.Abs(float64(g.Score-w.Score)) > 1e-4 {
			t.Errorf("%s: result %d is %s#%d score %.5f, want %s#%d score %.5f", what, i, g.Path, g.ChunkIndex, g.Score, w.Path, w.ChunkIndex, w.Score)
		}
	}
}

// TestIdleReleaseSearchAndReindex: after the idle period the model is
// released; the next search loads it again and answers as before; a
// reindex in a later idle period loads it too; a long reindex is never
// interrupted by a release, which comes once it is over.
func TestIdleReleaseSearchAndReindex(t *testing.T) {
	data := copySample(t)
	c, logs := startIdleServer(t, data, "--watch=false")
	q := sampleQueries[3]
	released := logCount(logs, logReleased)
	before := search(t, c, q.query, 5, 0)
	reloads := logCount(logs, logReloaded)

	waitCount(t, logs, logReleased, released+1)
	if n := logCount(logs, logReloaded); n != reloads {
		t.Fatalf("the model loaded again with no search (%d loads logged, %d before)", n, reloads)
	}
	sameResults(t, "the first search after the release", before, search(t, c, q.query, 5, 0))
	waitCount(t, logs, logReloaded, reloads+1)

	waitCount(t, logs, logReleased, released+2)
	if err := os.WriteFile(filepath.Join(data, "idle-notes.md"),
		[]byte("# Greenhouse watering\n\nThe tomato seedlings in the greenhouse are watered at dawn with rainwater from the barrel.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if r := reindex(t, c, map[string]any{"path_glob": "idle-notes.md"}); r.FilesAdded != 1 || r.ChunksEmbedded == 0 {
		t.Fatalf("reindex after the release: %+v, want one file added and embedded", r)
	}
	waitCount(t, logs, logReloaded, reloads+2)
	if res := search(t, c, "when are the tomato seedlings watered", 3, 0); len(res) == 0 || res[0].Path != "idle-notes.md" {
		t.Errorf("the file the reindex added after the release is not found first: %+v", res)
	}

	// A reindex of 30 notes (some 100 chunks) runs for many idle periods:
	// no release during it.
	waitCount(t, logs, logReleased, released+3)
	notes := filepath.Join(data, "notes")
	if err := os.Mkdir(notes, 0o755); err != nil {
		t.Fatal(err)
	}
	for i := range idleNotes {
		name := fmt.Sprintf("note-%03d.txt", i)
		text, err := os.ReadFile(filepath.Join(bigFolder(t), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(notes, name), text, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	start, done := len(logs.String()), logCount(logs, logReindexDone)
	r := reindex(t, c, map[string]any{})
	if r.FilesAdded != idleNotes {
		t.Fatalf("reindex of the notes: %+v, want %d files added", r, idleNotes)
	}
	// The reply can overtake the server's stderr line through the pipe.
	waitCount(t, logs, logReindexDone, done+1)
	during := logs.String()[start:]
	end := strings.LastIndex(during, logReindexDone)
	during = during[:end]
	if strings.Contains(during, logReleased) {
		t.Errorf("the model was released while a reindex of %d ms ran:\n%s", r.ElapsedMS, during)
	}
	if !strings.Contains(during, logReloaded) {
		t.Errorf("the reindex did not load the released model again:\n%s", during)
	}
	waitCount(t, logs, logReleased, released+4) // and once it is over, idle again
}

// TestIdleReleaseWatchedChange: a file written while the model is
// released is indexed by the watcher, which loads the model again.
func TestIdleReleaseWatchedChange(t *testing.T) {
	data := copySample(t)
	c, logs := startIdleServer(t, data)
	waitCount(t, logs, logReleased, logCount(logs, logReleased)+1)
	reloads, updates := logCount(logs, logReloaded), logCount(logs, logUpdated)
	if err := os.WriteFile(filepath.Join(data, "watched.md"),
		[]byte("# Bicycle shed\n\nThe bicycle shed behind the canteen is locked at seven in the evening; the key hangs at reception.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	// No search before the update: a search would load the model itself.
	waitCount(t, logs, logUpdated, updates+1)
	if n := logCount(logs, logReloaded); n <= reloads {
		t.Errorf("the watched change was indexed without loading the model again (%d loads logged, %d before)", n, reloads)
	}
	waitForTop(t, c, "when is the bicycle shed locked", "watched.md")
}

// TestIdleReleaseOff: --idle-release 0 never releases, and --help says so.
func TestIdleReleaseOff(t *testing.T) {
	code, stdout, _ := runBinary(t, "--help")
	if code != 0 || !strings.Contains(stdout, "--idle-release duration") || !strings.Contains(stdout, "0 = never (default 5m0s)") {
		t.Errorf("--help: code %d, lacks --idle-release with its default:\n%s", code, stdout)
	}
	data := copySample(t)
	args := []string{"--data-folder", data, "--title", "docs-idle", "--inst", testInst, "--log-level", "debug", "--idle-release", "0", "--watch=false"}
	c, logs := startCommandLogs(t, nil, nil, binary, args)
	waitForTop(t, c, sampleQueries[0].query, sampleQueries[0].path)
	time.Sleep(3 * time.Second) // three periods of testIdle
	search(t, c, sampleQueries[0].query, 3, 0)
	if strings.Contains(logs.String(), logReleased) || strings.Contains(logs.String(), logReloaded) {
		t.Errorf("--idle-release 0 released the model:\n%s", logs.String())
	}
}
