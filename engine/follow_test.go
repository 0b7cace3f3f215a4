package engine

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// localStore is the local folder's store behind e, for its test hooks.
func localStore(t *testing.T, e *Engine) *localstore.Store {
	t.Helper()
	s, ok := localstore.LocalStore(e.store)
	if !ok {
		t.Fatalf("engine's store is %T, not the local folder", e.store)
	}
	return s
}

// indexed reports whether the current snapshot lists path.
func indexed(e *Engine, path string) bool {
	snap := e.store.Acquire()
	if snap == nil {
		return false
	}
	defer snap.Release()
	_, ok := snap.File(path)
	return ok
}

// eventually polls cond until it holds or a generous deadline passes (the
// CI machine is shared and slow).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With Watch on, the index follows the folder by itself: new files, editor
// saves (temp file renamed over the original), deleted and moved-in
// folders, and ignore rules that change.
func TestWatchKeepsIndexFresh(t *testing.T) { eachBackend(t, testWatchKeepsIndexFresh) }

func testWatchKeepsIndexFresh(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, Store: store, IndexFolder: filepath.Join(t.TempDir(), "idx"), Watch: true, WatchSettle: 200 * time.Millisecond})
	reindex(t, e, ReindexRequest{})

	writeCorpus(t, data, map[string]string{"notes/glacier.md": "Glaciers calve icebergs where their tongues reach the sea."})
	eventually(t, "a new file is searchable", func() bool { return bestHit(t, e, "icebergs breaking off glaciers").Path == "notes/glacier.md" })

	// An editor's save: write a temporary file, rename it over the original.
	tmp := filepath.Join(data, ".alpaca.md.swp")
	if err := os.WriteFile(tmp, []byte("Llamas guard sheep flocks against foxes and coyotes."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(data, "alpaca.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a file saved by rename is updated", func() bool {
		r := bestHit(t, e, "animals that guard sheep from foxes")
		return r.Path == "alpaca.md" && strings.Contains(r.Snippet, "Llamas")
	})

	if err := os.RemoveAll(filepath.Join(data, "notes")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a deleted folder leaves the index", func() bool {
		return !indexed(e, "notes/sourdough.md") && !indexed(e, "notes/tides.txt") && !indexed(e, "notes/glacier.md")
	})

	outside := t.TempDir()
	writeCorpus(t, outside, map[string]string{"moved/deep/owls.md": "Owls swallow their prey whole and cough up pellets of bone and fur."})
	if err := os.Rename(filepath.Join(outside, "moved"), filepath.Join(data, "moved")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a folder moved in is indexed", func() bool { return indexed(e, "moved/deep/owls.md") })

	// A new ignore rule removes the file at the next run; dropping it adds
	// the file back.
	writeCorpus(t, data, map[string]string{".gitignore": "kernel.txt\n"})
	eventually(t, "a newly ignored file leaves the index", func() bool { return !indexed(e, "kernel.txt") })
	if err := os.Remove(filepath.Join(data, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a file no longer ignored comes back", func() bool { return indexed(e, "kernel.txt") })
	if st := e.IndexState(); st.Indexing && st.Activity != activityWatch {
		t.Errorf("state after updates: %+v", st)
	}
}

// bestHit is the best hit, or none.
func bestHit(t *testing.T, e *Engine, q string) isearch.Result {
	if res := search(t, e, q); len(res) > 0 {
		return res[0]
	}
	return isearch.Result{}
}

// retryClock stands in for time.After where follow paces its retries: it
// records each wait and hands the test a channel to fire instead.
type retryClock struct {
	mu    sync.Mutex
	waits []time.Duration
	asked chan chan time.Time
}

func (c *retryClock) after(d time.Duration) <-chan time.Time {
	c.mu.Lock()
	c.waits = append(c.waits, d)
	c.mu.Unlock()
	fire := make(chan time.Time, 1)
	c.asked <- fire
	return fire
}

// TestWatchRetriesFailedUpdate: an update after file changes whose commits
// fail as on a full disk is tried again by itself, waiting twice as long
// each time, until the index holds the new files; no other file event is
// needed, and after the success nothing is retried.
func TestWatchRetriesFailedUpdate(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	var logs testutil.SyncBuffer
	e, err := New(Config{
		DataFolder: data, IndexFolder: filepath.Join(t.TempDir(), "idx"), Watch: true, WatchSettle: 200 * time.Millisecond,
		NoInitialReindex: true,
		Index:            index.Options{MergeRatio: -1}, // every commit writes faiss.index, through the write hook below
		Logger:           slog.New(slog.NewTextHandler(&logs, &slog.HandlerOptions{Level: slog.LevelWarn})),
	})
	if err != nil {
		t.Fatal(err)
	}
	clock := &retryClock{asked: make(chan chan time.Time, 16)}
	e.after = clock.after
	e.Start(context.Background())
	t.Cleanup(func() { e.Close() })
	if err := e.WaitModel(context.Background()); err != nil {
		t.Fatal(err)
	}
	reindex(t, e, ReindexRequest{})

	const failures = 3
	var left atomic.Int32
	left.Store(failures)
	committed := make(chan struct{}) // closed by the first write that succeeds
	var once sync.Once
	localStore(t, e).SetWriteIndex(func(idx *faiss.Index, path string) error {
		if left.Add(-1) >= 0 {
			return fmt.Errorf("write %s: %w", path, syscall.ENOSPC)
		}
		once.Do(func() { close(committed) })
		return faiss.WriteIndex(idx, path)
	})
	notes := map[string]string{}
	for i := range 6 {
		notes[fmt.Sprintf("new/note%d.md", i)] = fmt.Sprintf("Note %d: the lighthouse keeper logs lamp hours, fog signals and passing ships.", i)
	}
	writeCorpus(t, data, notes)

	// Each failure asks for a wait; firing it stands for the time passing.
	// The minute is only there so that a missing retry fails the test
	// instead of hanging it.
	for i := range failures {
		select {
		case fire := <-clock.asked:
			// Meanwhile search says the index may miss the changes.
			if st := e.IndexState(); !st.Pending || !strings.Contains(st.LastRunError, "no space left on device") || st.RetryAt.IsZero() {
				t.Errorf("index state after failure %d: %+v; want pending with the error and the retry time", i+1, st)
			}
			fire <- time.Now()
		case <-time.After(time.Minute):
			t.Fatalf("no retry after failure %d; log:\n%s", i+1, logs.String())
		}
	}
	select {
	case <-committed:
	case <-time.After(time.Minute):
		t.Fatalf("no commit after %d retries; log:\n%s", failures, logs.String())
	}
	// The successful update holds the run slot until it is done.
	_, release, err := e.runs.acquire(context.Background(), activityWatch, nil)
	if err != nil {
		t.Fatal(err)
	}
	release()
	if st := e.IndexState(); st.Pending || st.LastRunError != "" {
		t.Errorf("index state after the successful update: %+v", st)
	}
	for p := range notes {
		if !indexed(e, p) {
			t.Errorf("%s not indexed after the retries", p)
		}
	}
	e.Close() // follow has returned: every wait it asked for is recorded
	clock.mu.Lock()
	defer clock.mu.Unlock()
	if want := []time.Duration{time.Second, 2 * time.Second, 4 * time.Second}; !slices.Equal(clock.waits, want) {
		t.Errorf("waits before the retries %v, want %v", clock.waits, want)
	}
	if n := strings.Count(logs.String(), "level=WARN msg=\"update after file changes failed"); n != failures {
		t.Errorf("%d failures logged at warn, want %d; log:\n%s", n, failures, logs.String())
	}
	if !strings.Contains(logs.String(), "no space left on device") {
		t.Errorf("the warning does not carry the error; log:\n%s", logs.String())
	}
}

func TestNextRetry(t *testing.T) {
	var got []time.Duration
	for w := time.Duration(0); len(got) < 9; {
		w = nextRetry(w)
		got = append(got, w)
	}
	want := []time.Duration{1, 2, 4, 8, 16, 32, 60, 60, 60}
	for i := range want {
		want[i] *= time.Second
	}
	if !slices.Equal(got, want) {
		t.Fatalf("waits %v, want %v", got, want)
	}
}
