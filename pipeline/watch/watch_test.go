package watch

import (
	"bytes"
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

	"github.com/fsnotify/fsnotify"
)

// syncBuffer is a log sink safe for the watcher goroutine and the test.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

type harness struct {
	t     *testing.T
	root  string
	out   chan Batch
	log   *syncBuffer
	done  chan error
	start time.Time
}

// startWatch runs the watcher on a fresh folder (filled by setup first) with
// a short settle time so tests stay quick.
func startWatch(t *testing.T, setup func(root string), tweak func(*Config)) *harness {
	t.Helper()
	root := t.TempDir()
	if setup != nil {
		setup(root)
	}
	h := &harness{t: t, root: root, out: make(chan Batch), log: &syncBuffer{}, done: make(chan error, 1)}
	cfg := Config{
		Root: root, Settle: 300 * time.Millisecond, MaxDelay: 2 * time.Second,
		Logger: slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	ready := make(chan struct{})
	cfg.ready = func() { close(ready) }
	ctx, cancel := context.WithCancel(context.Background())
	go func() { h.done <- Run(ctx, cfg, h.out) }()
	t.Cleanup(func() {
		cancel()
		for range h.out { // Run closes out when it returns
		}
		if err := <-h.done; err != nil {
			t.Errorf("Run: %v", err)
		}
	})
	// Changes before the watches are set would go unseen.
	select {
	case <-ready:
	case err := <-h.done:
		h.done <- err // for the cleanup
		t.Fatalf("Run returned before watching: %v", err)
	}
	h.start = time.Now()
	return h
}

func (h *harness) write(rel, text string) {
	h.t.Helper()
	p := filepath.Join(h.root, filepath.FromSlash(rel))
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		h.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
		h.t.Fatal(err)
	}
}

// next waits for one batch.
func (h *harness) next(within time.Duration) Batch {
	h.t.Helper()
	select {
	case b := <-h.out:
		return b
	case <-time.After(within):
		h.t.Fatalf("no batch within %s; log:\n%s", within, h.log)
		return Batch{}
	}
}

// none checks that no batch comes for a while.
func (h *harness) none(wait time.Duration) {
	h.t.Helper()
	select {
	case b := <-h.out:
		h.t.Fatalf("unexpected batch %+v", b)
	case <-time.After(wait):
	}
}

// gather collects batches until one contains all of want (or All is set).
func (h *harness) gather(within time.Duration, want ...string) (batches []Batch, seen map[string]bool) {
	h.t.Helper()
	seen = map[string]bool{}
	deadline := time.After(within)
	for {
		select {
		case b := <-h.out:
			batches = append(batches, b)
			for _, p := range b.Paths {
				seen[p] = true
			}
			missing := false
			for _, w := range want {
				missing = missing || !seen[w]
			}
			if !missing || b.All {
				return batches, seen
			}
		case <-deadline:
			h.t.Fatalf("within %s saw %v, want all of %v; log:\n%s", within, keys(seen), want, h.log)
		}
	}
}

func keys(m map[string]bool) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	slices.Sort(out)
	return out
}

func TestFileWriteIsOneBatchAfterSettling(t *testing.T) {
	h := startWatch(t, func(root string) { os.WriteFile(filepath.Join(root, "a.md"), []byte("one"), 0o644) }, nil)
	h.write("a.md", "two")
	b := h.next(5 * time.Second)
	if !slices.Equal(b.Paths, []string{"a.md"}) || b.All || b.Rules {
		t.Fatalf("batch %+v, want just a.md", b)
	}
	if waited := time.Since(h.start); waited < 300*time.Millisecond {
		t.Errorf("batch came %s after the write, before the 300ms settle time", waited)
	}
	h.none(600 * time.Millisecond)
}

// An editor writes a temporary file and renames it over the original.
func TestEditorSaveByRename(t *testing.T) {
	h := startWatch(t, func(root string) { os.WriteFile(filepath.Join(root, "notes.md"), []byte("old"), 0o644) },
		func(c *Config) { c.Settle = time.Second })
	h.write(".notes.md.swp", "swap")
	h.write("notes.md.tmp123", "new text")
	if err := os.Rename(filepath.Join(h.root, "notes.md"), filepath.Join(h.root, "notes.md~")); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(filepath.Join(h.root, "notes.md.tmp123"), filepath.Join(h.root, "notes.md")); err != nil {
		t.Fatal(err)
	}
	os.Remove(filepath.Join(h.root, ".notes.md.swp"))
	os.Remove(filepath.Join(h.root, "notes.md~"))
	b := h.next(5 * time.Second)
	if !slices.Contains(b.Paths, "notes.md") {
		t.Fatalf("batch %v lacks notes.md", b.Paths)
	}
	h.none(600 * time.Millisecond) // the whole save is one batch
}

// A mass change (a checkout, an unpacked archive) is one batch, not one per
// file.
func TestMassChangeIsOneBatch(t *testing.T) {
	// A settle time well above a scheduling stall on a busy machine.
	h := startWatch(t, nil, func(c *Config) { c.Settle, c.MaxDelay = 2*time.Second, 60*time.Second })
	const n = 3000
	for i := range n {
		h.write(fmt.Sprintf("d%d/f%d.md", i%10, i), "x")
	}
	b := h.next(30 * time.Second)
	if b.All {
		t.Fatalf("batch says All for %d paths", n)
	}
	files := 0
	for _, p := range b.Paths {
		if strings.HasSuffix(p, ".md") {
			files++
		}
	}
	// Folders created with their files may be reported as folders.
	if files+countDirs(b.Paths) < 10 || len(b.Paths) > n+10 {
		t.Fatalf("one batch of %d paths (%d files) for %d written files", len(b.Paths), files, n)
	}
	h.none(time.Second)
}

func countDirs(paths []string) int {
	n := 0
	for _, p := range paths {
		if !strings.Contains(p, ".") {
			n++
		}
	}
	return n
}

func TestMaxPathsTurnsIntoAll(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.MaxPaths = 20 })
	for i := range 30 {
		h.write(fmt.Sprintf("f%d.md", i), "x")
	}
	if b := h.next(5 * time.Second); !b.All || len(b.Paths) != 0 {
		t.Fatalf("batch %+v, want All", b)
	}
}

// New folders are watched at once, including ones made with their content.
func TestNewFoldersAreWatched(t *testing.T) {
	deep := make(chan struct{}) // closed when a/b/c has its watch
	var once sync.Once
	h := startWatch(t, nil, func(c *Config) {
		c.addWatch = func(w *fsnotify.Watcher, dir string) error {
			err := w.Add(dir)
			if err == nil && dir == filepath.Join(c.Root, "a", "b", "c") {
				once.Do(func() { close(deep) })
			}
			return err
		}
	})
	h.write("a/b/c/deep.md", "x")
	h.gather(5*time.Second, "a")
	select {
	case <-deep:
	case <-time.After(5 * time.Second):
		t.Fatalf("a/b/c not watched; log:\n%s", h.log)
	}
	h.write("a/b/c/later.md", "y")
	h.gather(5*time.Second, "a/b/c/later.md")
}

// A folder moved in from outside is reported and then watched; one moved
// out is reported and no longer watched.
func TestFolderMovedInAndOut(t *testing.T) {
	outside := t.TempDir()
	os.MkdirAll(filepath.Join(outside, "pack", "sub"), 0o755)
	os.WriteFile(filepath.Join(outside, "pack", "sub", "x.md"), []byte("x"), 0o644)
	h := startWatch(t, func(root string) {
		os.MkdirAll(filepath.Join(root, "old", "inner"), 0o755)
		os.WriteFile(filepath.Join(root, "old", "inner", "y.md"), []byte("y"), 0o644)
	}, nil)

	if err := os.Rename(filepath.Join(outside, "pack"), filepath.Join(h.root, "pack")); err != nil {
		t.Fatal(err)
	}
	h.gather(5*time.Second, "pack")
	h.write("pack/sub/x.md", "changed")
	h.gather(5*time.Second, "pack/sub/x.md")

	gone := filepath.Join(outside, "old")
	if err := os.Rename(filepath.Join(h.root, "old"), gone); err != nil {
		t.Fatal(err)
	}
	h.gather(5*time.Second, "old")
	// Writes in the moved-away folder are no longer ours.
	os.WriteFile(filepath.Join(gone, "inner", "y.md"), []byte("elsewhere"), 0o644)
	h.none(time.Second)
}

func TestFolderDeleted(t *testing.T) {
	h := startWatch(t, func(root string) {
		for i := range 5 {
			os.MkdirAll(filepath.Join(root, "docs", fmt.Sprint(i)), 0o755)
			os.WriteFile(filepath.Join(root, "docs", fmt.Sprint(i), "f.md"), []byte("x"), 0o644)
		}
	}, nil)
	if err := os.RemoveAll(filepath.Join(h.root, "docs")); err != nil {
		t.Fatal(err)
	}
	h.gather(5*time.Second, "docs")
	h.none(time.Second)
}

// Under writes that never pause, a batch still goes out after MaxDelay.
func TestSteadyStreamStillDelivers(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.Settle, c.MaxDelay = time.Second, 2*time.Second })
	stop := make(chan struct{})
	var wrote atomic.Int64
	go func() {
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			case <-time.After(100 * time.Millisecond):
				os.WriteFile(filepath.Join(h.root, "log.md"), []byte(fmt.Sprint(i)), 0o644)
				wrote.Add(1)
			}
		}
	}()
	defer close(stop)
	b := h.next(8 * time.Second)
	if !slices.Contains(b.Paths, "log.md") {
		t.Fatalf("batch %v lacks log.md", b.Paths)
	}
}

func TestSkipAndRuleFiles(t *testing.T) {
	var skipBuild atomic.Bool
	skipBuild.Store(true)
	reloads := atomic.Int32{}
	h := startWatch(t, func(root string) {
		os.MkdirAll(filepath.Join(root, "build"), 0o755)
		os.MkdirAll(filepath.Join(root, ".hidden"), 0o755)
	}, func(c *Config) {
		c.Skip = func(rel string, isDir bool) bool {
			return isDir && strings.HasPrefix(rel, ".") || rel == "build" && skipBuild.Load() || strings.HasSuffix(rel, ".log")
		}
		c.RuleFiles = []string{".gitignore"}
		c.Reload = func() { reloads.Add(1); skipBuild.Store(false) }
	})
	h.write("build/out.md", "x")
	h.write(".hidden/a.md", "x")
	h.write("x.log", "x")
	h.none(800 * time.Millisecond)

	h.write(".gitignore", "# build is in now\n")
	b := h.next(5 * time.Second)
	if !b.Rules || !slices.Contains(b.Paths, ".gitignore") || reloads.Load() != 1 {
		t.Fatalf("batch %+v after a rule change (reloads %d)", b, reloads.Load())
	}
	// The folder the new rules let in is watched now.
	h.write("build/out.md", "y")
	h.gather(5*time.Second, "build/out.md")
}

// errAfter makes the n+1st watch fail the way inotify does when
// fs.inotify.max_user_watches is reached.
func errAfter(n int) func(w *fsnotify.Watcher, dir string) error {
	var added atomic.Int32
	return func(w *fsnotify.Watcher, dir string) error {
		if int(added.Add(1)) > n {
			return fmt.Errorf("inotify_add_watch %s: %w", dir, syscall.ENOSPC)
		}
		return w.Add(dir)
	}
}

// Out of watches at start: periodic scans find changes instead.
func TestFallbackWhenWatchesRunOutAtStart(t *testing.T) {
	h := startWatch(t, func(root string) {
		for i := range 4 {
			os.MkdirAll(filepath.Join(root, fmt.Sprint("d", i)), 0o755)
		}
	}, func(c *Config) { c.addWatch = errAfter(2); c.MinScanEvery = 200 * time.Millisecond })
	if !strings.Contains(h.log.String(), "out of file watches") || !strings.Contains(h.log.String(), "scanning the folder for changes periodically") {
		t.Fatalf("log does not say watches ran out and scans took over:\n%s", h.log)
	}
	h.write("d3/new.md", "x")
	h.gather(5*time.Second, "d3/new.md")
	os.Remove(filepath.Join(h.root, "d3", "new.md"))
	h.gather(5*time.Second, "d3/new.md")
}

// Out of watches later, when a new folder appears: the next batch says All
// (changes may have been missed) and scans carry on.
func TestFallbackWhenWatchesRunOutLater(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.addWatch = errAfter(1); c.MinScanEvery = 200 * time.Millisecond })
	h.write("newdir/a.md", "x")
	if b := h.next(5 * time.Second); !b.All {
		t.Fatalf("batch %+v after losing watches, want All", b)
	}
	if !strings.Contains(h.log.String(), "out of file watches") {
		t.Fatalf("log does not say watches ran out:\n%s", h.log)
	}
	h.write("newdir/b.md", "y")
	h.gather(5*time.Second, "newdir/b.md")
}

func TestFallbackWhenEventsUnavailable(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) {
		c.newWatcher = func() (*fsnotify.Watcher, error) { return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE) }
		c.MinScanEvery = 200 * time.Millisecond
	})
	if !strings.Contains(h.log.String(), "scanning the folder") {
		t.Fatalf("log does not name the fallback:\n%s", h.log)
	}
	h.write("a.md", "x")
	h.gather(5*time.Second, "a.md")
}

// The scan interval keeps scans to the configured share of the time.
func TestScanIntervalFollowsCost(t *testing.T) {
	r := &runner{cfg: Config{ScanShare: 0.05, MinScanEvery: 2 * time.Second}}
	for _, c := range []struct{ cost, want time.Duration }{
		{time.Millisecond, 2 * time.Second},
		{200 * time.Millisecond, 4 * time.Second},
		{time.Second, 20 * time.Second},
	} {
		if got := r.interval(c.cost); got != c.want {
			t.Errorf("interval(%s) = %s, want %s", c.cost, got, c.want)
		}
	}
}
