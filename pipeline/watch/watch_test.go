package watch

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/fsnotify/fsnotify"

	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// hangAfter only breaks hangs: every wait below ends on something the
// watcher does, however slowly the machine runs, and time inside the
// watcher moves only when a test advances its clock.
const hangAfter = 60 * time.Second

// markPrefix names the folders sync makes; the harness skips them.
const markPrefix = ".watch-sync-"

// snapshot is the watcher's state when it last went idle.
type snapshot struct {
	idles     int  // how many times it had gone idle
	marks     int  // the last sync mark it had handled
	quiet     bool // no fired timer was left for it to receive
	pending   bool // a batch was being gathered
	ready     bool // a settled batch waited for the receiver
	scanning  bool
	scanEvery time.Duration
}

type harness struct {
	t      *testing.T
	root   string
	settle time.Duration
	clk    *fakeClock
	out    chan Batch
	log    *testutil.SyncBuffer
	done   chan error
	made   int // sync marks made

	mu    sync.Mutex
	marks int // sync marks the watcher handled
	state snapshot
	wake  chan struct{} // a new state
}

// startWatch runs the watcher on a fresh folder (filled by setup first), on
// a fake clock, and waits until it watches.
func startWatch(t *testing.T, setup func(root string), tweak func(*Config)) *harness {
	t.Helper()
	root := t.TempDir()
	if setup != nil {
		setup(root)
	}
	h := &harness{t: t, root: root, clk: newFakeClock(), out: make(chan Batch), log: &testutil.SyncBuffer{},
		done: make(chan error, 1), wake: make(chan struct{}, 1)}
	cfg := Config{
		Root: root, Settle: time.Second, MaxDelay: 5 * time.Second,
		Logger: slog.New(slog.NewTextHandler(h.log, &slog.HandlerOptions{Level: slog.LevelDebug})),
	}
	if tweak != nil {
		tweak(&cfg)
	}
	h.settle = cfg.Settle
	skip := cfg.Skip
	cfg.Skip = func(rel string, isDir bool) bool {
		return strings.HasPrefix(rel, markPrefix) || skip != nil && skip(rel, isDir)
	}
	cfg.clock = h.clk
	cfg.onEvent = func(ev fsnotify.Event) {
		name, ok := strings.CutPrefix(ev.Name, filepath.Join(root, markPrefix))
		if n, err := strconv.Atoi(name); ok && err == nil {
			h.mu.Lock()
			h.marks = max(h.marks, n)
			h.mu.Unlock()
		}
	}
	cfg.idle = func(r *runner, ready *Batch) {
		h.mu.Lock()
		h.state = snapshot{idles: h.state.idles + 1, marks: h.marks, quiet: !h.clk.waiting(), pending: r.hasPending(),
			ready: ready != nil, scanning: r.scanning, scanEvery: r.scanEvery}
		h.mu.Unlock()
		select {
		case h.wake <- struct{}{}:
		default:
		}
	}
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
	// The loop goes idle once the watches (or the first scan) are in place.
	h.await("started", func(s snapshot) bool { return s.idles > 0 })
	return h
}

func (h *harness) last() snapshot {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.state
}

// await waits until the watcher is idle, with no fired timer left for it,
// in a state that satisfies ok.
func (h *harness) await(what string, ok func(snapshot) bool) snapshot {
	h.t.Helper()
	hang := time.NewTimer(hangAfter)
	defer hang.Stop()
	for {
		s := h.last()
		if s.quiet && ok(s) {
			return s
		}
		select {
		case <-h.wake:
		case err := <-h.done:
			h.done <- err // for the cleanup
			h.t.Fatalf("Run returned before the watcher %s: %v; log:\n%s", what, err, h.log)
		case <-hang.C:
			h.t.Fatalf("the watcher never %s (last state %+v); log:\n%s", what, s, h.log)
		}
	}
}

// sync waits until the watcher has handled the events of everything the
// test did so far: it makes a folder after them, whose event comes after
// theirs (one inotify queue keeps its order), and waits until the watcher
// has handled that and gone idle. Scans see changes only when the clock
// says, so while scanning the watcher is idle already.
func (h *harness) sync() snapshot {
	h.t.Helper()
	if h.last().scanning {
		return h.await("went idle", func(snapshot) bool { return true })
	}
	h.made++
	n := h.made
	if err := os.Mkdir(filepath.Join(h.root, fmt.Sprint(markPrefix, n)), 0o755); err != nil {
		h.t.Fatal(err)
	}
	return h.await(fmt.Sprint("handled sync mark ", n), func(s snapshot) bool { return s.marks >= n })
}

// advance moves the clock on by d once the watcher has caught up, and waits
// until the watcher has handled the timers that fired.
func (h *harness) advance(d time.Duration) snapshot {
	h.t.Helper()
	h.sync()
	h.mu.Lock()
	fired, idles := h.clk.advance(d), h.state.idles
	h.mu.Unlock()
	if !fired {
		return h.last()
	}
	return h.await(fmt.Sprint("handled the timers due in ", d), func(s snapshot) bool { return s.idles > idles })
}

// scan moves the clock on to the next periodic scan and waits until it is
// done.
func (h *harness) scan() {
	h.t.Helper()
	s := h.last()
	if !s.scanning {
		h.t.Fatalf("not scanning; log:\n%s", h.log)
	}
	h.advance(s.scanEvery)
}

// next takes the settled batch; it fails if none is ready.
func (h *harness) next() Batch {
	h.t.Helper()
	if s := h.last(); !s.ready {
		h.t.Fatalf("no batch is ready (state %+v); log:\n%s", s, h.log)
	}
	var b Batch
	select {
	case b = <-h.out:
	case <-time.After(hangAfter):
		h.t.Fatalf("the ready batch was not handed over; log:\n%s", h.log)
	}
	// With the clock standing still no other batch can settle meanwhile.
	h.await("went idle after handing a batch over", func(s snapshot) bool { return !s.ready })
	return b
}

// settleWith lets the changes so far settle and checks that they come as
// one batch naming at least want.
func (h *harness) settleWith(want ...string) Batch {
	h.t.Helper()
	h.advance(h.settle)
	b := h.next()
	for _, w := range want {
		if !slices.Contains(b.Paths, w) {
			h.t.Fatalf("batch %+v lacks %s; log:\n%s", b, w, h.log)
		}
	}
	return b
}

// gathering checks that the watcher holds the changes so far but has not
// let them settle.
func (h *harness) gathering() {
	h.t.Helper()
	s := h.sync()
	if !s.pending || s.ready {
		h.t.Fatalf("want a batch gathered, not settled: state %+v; log:\n%s", s, h.log)
	}
}

// none checks that no batch will come: the watcher has handled every change
// so far and holds no batch, settled or not.
func (h *harness) none() {
	h.t.Helper()
	if s := h.sync(); s.pending || s.ready {
		h.t.Fatalf("want no batch to come: state %+v; log:\n%s", s, h.log)
	}
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

func TestFileWriteIsOneBatchAfterSettling(t *testing.T) {
	h := startWatch(t, func(root string) { os.WriteFile(filepath.Join(root, "a.md"), []byte("one"), 0o644) }, nil)
	h.write("a.md", "two")
	h.gathering()
	h.advance(h.settle - time.Nanosecond)
	h.gathering()
	h.advance(time.Nanosecond)
	b := h.next()
	if !slices.Equal(b.Paths, []string{"a.md"}) || b.All || b.Rules {
		t.Fatalf("batch %+v, want just a.md", b)
	}
	h.none()
}

// An editor writes a temporary file and renames it over the original.
func TestEditorSaveByRename(t *testing.T) {
	h := startWatch(t, func(root string) { os.WriteFile(filepath.Join(root, "notes.md"), []byte("old"), 0o644) }, nil)
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
	h.settleWith("notes.md")
	h.none() // the whole save is one batch
}

// A mass change (a checkout, an unpacked archive) is one batch, not one per
// file.
func TestMassChangeIsOneBatch(t *testing.T) {
	h := startWatch(t, nil, nil)
	const n = 3000
	name := func(i int) (dir, file string) {
		dir = fmt.Sprint("d", i%10)
		return dir, fmt.Sprintf("%s/f%d.md", dir, i)
	}
	for i := range n {
		_, file := name(i)
		h.write(file, "x")
	}
	b := h.settleWith()
	if b.All || len(b.Paths) > n+10 {
		t.Fatalf("batch of %d paths (All %v) for %d written files", len(b.Paths), b.All, n)
	}
	// A file written before its new folder had a watch is in the batch
	// through its folder.
	for i := range n {
		if dir, file := name(i); !slices.Contains(b.Paths, file) && !slices.Contains(b.Paths, dir) {
			t.Fatalf("batch names neither %s nor its folder", file)
		}
	}
	h.none()
}

func TestMaxPathsTurnsIntoAll(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.MaxPaths = 20 })
	for i := range 30 {
		h.write(fmt.Sprintf("f%d.md", i), "x")
	}
	if b := h.settleWith(); !b.All || len(b.Paths) != 0 {
		t.Fatalf("batch %+v, want All", b)
	}
}

// New folders are watched at once, including ones made with their content.
func TestNewFoldersAreWatched(t *testing.T) {
	var deep atomic.Bool // a/b/c has its watch
	h := startWatch(t, nil, func(c *Config) {
		c.addWatch = func(w *fsnotify.Watcher, dir string) error {
			err := w.Add(dir)
			if err == nil && dir == filepath.Join(c.Root, "a", "b", "c") {
				deep.Store(true)
			}
			return err
		}
	})
	h.write("a/b/c/deep.md", "x")
	h.settleWith("a")
	if !deep.Load() {
		t.Fatalf("a/b/c not watched; log:\n%s", h.log)
	}
	h.write("a/b/c/later.md", "y")
	h.settleWith("a/b/c/later.md")
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
	h.settleWith("pack")
	h.write("pack/sub/x.md", "changed")
	h.settleWith("pack/sub/x.md")

	gone := filepath.Join(outside, "old")
	if err := os.Rename(filepath.Join(h.root, "old"), gone); err != nil {
		t.Fatal(err)
	}
	h.settleWith("old")
	// Writes in the moved-away folder are no longer ours.
	os.WriteFile(filepath.Join(gone, "inner", "y.md"), []byte("elsewhere"), 0o644)
	h.none()
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
	h.settleWith("docs")
	h.none()
}

// Under writes that never pause for the settle time, a batch still goes out
// MaxDelay after the first.
func TestSteadyStreamStillDelivers(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.Settle, c.MaxDelay = time.Second, 2*time.Second })
	const every = 500 * time.Millisecond
	for i := 1; ; i++ {
		h.write("log.md", fmt.Sprint(i))
		if !h.advance(every).ready {
			continue
		}
		if waited := time.Duration(i) * every; waited != 2*time.Second {
			t.Fatalf("batch settled %s after the first write, want MaxDelay 2s", waited)
		}
		break
	}
	if b := h.next(); !slices.Equal(b.Paths, []string{"log.md"}) {
		t.Fatalf("batch %+v, want just log.md", b)
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
	h.none()

	h.write(".gitignore", "# build is in now\n")
	if b := h.settleWith(".gitignore"); !b.Rules || reloads.Load() != 1 {
		t.Fatalf("batch %+v after a rule change (reloads %d)", b, reloads.Load())
	}
	// The folder the new rules let in is watched now.
	h.write("build/out.md", "y")
	h.settleWith("build/out.md")
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
	}, func(c *Config) { c.addWatch = errAfter(2) })
	if !strings.Contains(h.log.String(), "out of file watches") || !strings.Contains(h.log.String(), "scanning the folder for changes periodically") {
		t.Fatalf("log does not say watches ran out and scans took over:\n%s", h.log)
	}
	// The watches set before they ran out count as watching that stopped,
	// so the first batch says All.
	if b := h.settleWith(); !b.All {
		t.Fatalf("first batch %+v, want All", b)
	}
	h.write("d3/new.md", "x")
	h.none() // until the next scan
	h.scan()
	h.settleWith("d3/new.md")
	os.Remove(filepath.Join(h.root, "d3", "new.md"))
	h.scan()
	h.settleWith("d3/new.md")
}

// Out of watches later, when a new folder appears: the next batch says All
// (changes may have been missed) and scans carry on.
func TestFallbackWhenWatchesRunOutLater(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) { c.addWatch = errAfter(1) })
	h.write("newdir/a.md", "x")
	h.await("switched to scans", func(s snapshot) bool { return s.scanning })
	if b := h.settleWith(); !b.All {
		t.Fatalf("batch %+v after losing watches, want All", b)
	}
	if !strings.Contains(h.log.String(), "out of file watches") {
		t.Fatalf("log does not say watches ran out:\n%s", h.log)
	}
	h.write("newdir/b.md", "y")
	h.scan()
	h.settleWith("newdir/b.md")
}

func TestFallbackWhenEventsUnavailable(t *testing.T) {
	h := startWatch(t, nil, func(c *Config) {
		c.newWatcher = func() (*fsnotify.Watcher, error) { return nil, fmt.Errorf("inotify_init1: %w", syscall.EMFILE) }
	})
	if !strings.Contains(h.log.String(), "scanning the folder") {
		t.Fatalf("log does not name the fallback:\n%s", h.log)
	}
	h.write("a.md", "x")
	h.scan()
	h.settleWith("a.md")
}

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

// The data folder itself moved away (or deleted) and made again, as a docs
// build that regenerates it does: its watch is gone with it, so scans take
// over and find the new folder's files.
func TestRootMovedAwayAndMadeAgain(t *testing.T) {
	h := startWatch(t, func(root string) {
		os.WriteFile(filepath.Join(root, "a.md"), []byte("a"), 0o644)
	}, nil)
	if err := os.Rename(h.root, filepath.Join(t.TempDir(), "old")); err != nil {
		t.Fatal(err)
	}
	h.await("switched to scans", func(s snapshot) bool { return s.scanning })
	if b := h.settleWith(); !b.All {
		t.Fatalf("batch %+v after the folder went, want All", b)
	}
	testutil.MkdirAll(t, h.root)
	h.write("b.md", "b")
	h.scan()
	h.settleWith("b.md")
}
