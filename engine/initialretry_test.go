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
	if lr := e.readLastRun(); !strings.Contains(lr.Error, "conn closed") {
		t.Fatalf("after an update of some files: error %q, want the failure kept", lr.Error)
	}
	e.recordRun(activityReindex, all, nil, true)
	if lr := e.readLastRun(); lr.Error != "" {
		t.Fatalf("after a whole run: error %q, want none", lr.Error)
	}
}
