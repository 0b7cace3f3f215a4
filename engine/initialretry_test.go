package engine

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/stages"
)

// A start-up indexing that fails is tried again: meanwhile IndexState
// says it failed, why and when it is tried again, and status keeps the
// failure; the retry indexes the folder and clears both.
func TestInitialReindexRetried(t *testing.T) {
	data := filepath.Join(t.TempDir(), "docs")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	writeCorpus(t, data, corpus)
	e, err := New(Config{DataFolder: data, IndexFolder: t.TempDir(),
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError + 1}))})
	if err != nil {
		t.Fatal(err)
	}
	fire := make(chan time.Time)
	e.after = func(time.Duration) <-chan time.Time { return fire }
	// The folder is away when the start-up run looks: it fails.
	if err := os.Rename(data, data+".away"); err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	e.Start(ctx)
	defer e.Close()
	deadline := time.Now().Add(3 * time.Minute)
	var st IndexState
	for st = e.IndexState(); st.LastRunError == ""; st = e.IndexState() {
		if time.Now().After(deadline) {
			t.Fatalf("no failure reported: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if !st.Pending || st.RetryAt.IsZero() || st.Activity != activityInitial+" failed" {
		t.Fatalf("after a failed start-up run: %+v, want pending with the retry time", st)
	}
	if rs, err := e.ReadStatus(ctx); err == nil && rs.LastRunError == "" {
		t.Fatalf("status does not keep the failure")
	}
	if err := os.Rename(data+".away", data); err != nil {
		t.Fatal(err)
	}
	fire <- time.Now()
	deadline = time.Now().Add(time.Minute)
	for st = e.IndexState(); st.LastRunError != "" || e.Status().Files != len(corpus); st = e.IndexState() {
		if time.Now().After(deadline) {
			t.Fatalf("the retry did not index the folder: %+v", st)
		}
		time.Sleep(50 * time.Millisecond)
	}
	if rs, err := e.ReadStatus(ctx); err != nil || rs.LastRunError != "" || rs.Files != len(corpus) {
		t.Fatalf("status after the retry: %+v %v", rs, err)
	}
}

// A failed run's error stays in the record until a run over the whole
// folder succeeds: an update of one changed file indexes only that file.
func TestFailureKeptUntilWholeRun(t *testing.T) {
	e := &Engine{cfg: Config{IndexFolder: t.TempDir()}, log: slog.New(slog.DiscardHandler)}
	all := func(string) bool { return true }
	e.recordFailure(activityInitial, errors.New("conn closed"))
	e.recordRun(activityWatch, all, nil, false)
	if lr, _ := e.readLastRun(); !strings.Contains(lr.Error, "conn closed") {
		t.Fatalf("after an update of some files: error %q, want the failure kept", lr.Error)
	}
	e.recordRun(activityReindex, all, nil, true)
	if lr, _ := e.readLastRun(); lr.Error != "" {
		t.Fatalf("after a whole run: error %q, want none", lr.Error)
	}
}

// TestDamagedLastRunRecord: a run record truncated, emptied or holding
// null, [], {} or garbage is reported as damaged, naming the file (it was
// read as "no failures", so status hid a failed run); the next run
// replaces it with a readable record.
func TestDamagedLastRunRecord(t *testing.T) {
	all := func(string) bool { return true }
	for kind, data := range map[string]string{"truncated": "", "empty": "", "null": "null", "[]": "[]", "{}": "{}", "garbage": "\x00\xffnot json{"} {
		t.Run(kind, func(t *testing.T) {
			e := &Engine{cfg: Config{IndexFolder: t.TempDir()}, log: slog.New(slog.DiscardHandler)}
			e.recordFailure(activityInitial, errors.New("conn closed"))
			path := filepath.Join(e.cfg.IndexFolder, LastRunFile)
			if kind == "truncated" {
				b, err := os.ReadFile(path)
				if err != nil {
					t.Fatal(err)
				}
				data = string(b[:len(b)/2])
			}
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
			if _, err := e.readLastRun(); err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "next reindex rewrites it") {
				t.Fatalf("readLastRun = %v, want the damage named with its fix", err)
			}
			e.recordRun(activityReindex, all, []stages.Failure{{Path: "a.pdf", Reason: "encrypted"}}, true)
			if lr, err := e.readLastRun(); err != nil || len(lr.Failures) != 1 {
				t.Fatalf("after a run: %+v %v, want its record", lr, err)
			}
		})
	}
}

// A reindex that finds nothing to change commits nothing; status still
// dates it (an empty folder's index is not "never" reindexed), and a
// failed whole run or an update of one file does not move the date.
func TestLastReindexDatesRunsThatCommitNothing(t *testing.T) {
	ctx := context.Background()
	e := newEngine(t, Config{DataFolder: t.TempDir()})
	before := time.Now().Truncate(time.Second)
	reindex(t, e, ReindexRequest{})
	st, err := e.ReadStatus(ctx)
	if err != nil || st.LastReindex.Before(before) {
		t.Fatalf("empty folder reindexed: last reindex %v (%v), want at or after %v", st.LastReindex, err, before)
	}
	first := st.LastReindex
	time.Sleep(1100 * time.Millisecond) // the date has whole seconds
	e.recordFailure(activityReindex, errors.New("conn closed"))
	e.recordRun(activityWatch, func(string) bool { return true }, nil, false)
	if st, _ := e.ReadStatus(ctx); !st.LastReindex.Equal(first) {
		t.Errorf("after a failure and a one-file update: last reindex %v, want %v", st.LastReindex, first)
	}
	reindex(t, e, ReindexRequest{})
	if st, _ := e.ReadStatus(ctx); !st.LastReindex.After(first) {
		t.Errorf("a second reindex with nothing to change: last reindex %v, want after %v", st.LastReindex, first)
	}
}
