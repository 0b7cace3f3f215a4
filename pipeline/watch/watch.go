// Package watch reports changes under a folder as debounced batches of
// relative paths. It watches every folder with fsnotify and falls back to
// periodic scans, paced to a small share of the CPU, when watches run out or
// events are unavailable.
package watch

import (
	"cmp"
	"context"
	"errors"
	"io/fs"
	"log/slog"
	"maps"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/fsnotify/fsnotify"
)

// Batch is one set of changes that settled.
type Batch struct {
	// Paths are slash-separated, relative to the root, sorted and unique.
	// A path may name a file or folder that no longer exists (deleted or
	// moved away) or a whole folder that appeared (created or moved in).
	Paths []string
	// All means changes may have been missed (event queue overflow, a
	// switch to scanning): treat every path as changed.
	All bool
	// Rules is set when a rule file (Config.RuleFiles) changed.
	Rules bool
}

// Config says what to watch and how patiently.
type Config struct {
	Root string // absolute folder to watch
	// Skip reports paths to leave alone: skipped folders are not watched or
	// scanned, skipped files are not reported. nil skips nothing. It may
	// answer differently after Reload.
	Skip func(rel string, isDir bool) bool
	// RuleFiles are base names of files whose change changes Skip. When a
	// batch holding one settles, Reload runs (if set), the tree is walked
	// again for folders to watch, and the batch has Rules set.
	RuleFiles []string
	Reload    func()
	// Settle is the quiet time a batch waits for after its last change;
	// default 1 s. MaxDelay caps how long a steady stream of changes holds a
	// batch back, counted from its first change; default 5 s.
	Settle, MaxDelay time.Duration
	// MaxPaths turns a larger batch into one with All set; default 50,000.
	MaxPaths int
	// ScanShare is the share of time periodic scans may take; default 0.05.
	// MinScanEvery bounds the scan interval from below; default 2 s.
	ScanShare    float64
	MinScanEvery time.Duration
	Logger       *slog.Logger

	// newWatcher and addWatch are replaced by tests to inject failures.
	newWatcher func() (*fsnotify.Watcher, error)
	addWatch   func(w *fsnotify.Watcher, dir string) error
	// clock is the real one unless a test moves time by hand.
	clock clock
	// onEvent, if set, is called with each event before it is handled, and
	// idle each time the loop has handled what came and is about to wait
	// (ready is the settled batch waiting for the receiver, or nil): tests
	// move their clock only once the watcher has caught up with them.
	onEvent func(fsnotify.Event)
	idle    func(r *runner, ready *Batch)
}

func (c *Config) defaults() {
	c.Settle = cmp.Or(max(c.Settle, 0), time.Second)
	c.MaxDelay = cmp.Or(max(c.MaxDelay, 0), 5*time.Second)
	c.MaxDelay = max(c.MaxDelay, c.Settle)
	c.MaxPaths = cmp.Or(max(c.MaxPaths, 0), 50_000)
	c.ScanShare = cmp.Or(max(c.ScanShare, 0), 0.05)
	c.MinScanEvery = cmp.Or(max(c.MinScanEvery, 0), 2*time.Second)
	c.Logger = cmp.Or(c.Logger, slog.New(slog.DiscardHandler))
	if c.Skip == nil {
		c.Skip = func(string, bool) bool { return false }
	}
	if c.newWatcher == nil {
		c.newWatcher = fsnotify.NewWatcher
	}
	if c.addWatch == nil {
		c.addWatch = func(w *fsnotify.Watcher, dir string) error { return w.Add(dir) }
	}
	c.clock = cmp.Or[clock](c.clock, realClock{})
}

// Run watches cfg.Root until ctx ends, sending each settled batch to out.
// It closes out when it returns. While the receiver is busy, newer changes
// join the batch waiting for it, so a slow receiver gets fewer, larger
// batches. Run returns an error only when the root cannot be read.
func Run(ctx context.Context, cfg Config, out chan<- Batch) error {
	defer close(out)
	cfg.defaults()
	r := &runner{cfg: cfg, pending: map[string]bool{}}
	w, err := r.startWatches()
	if err != nil {
		if _, statErr := os.Stat(cfg.Root); statErr != nil {
			return statErr
		}
		r.giveUp(err)
	}
	return r.loop(ctx, w, out)
}

type runner struct {
	cfg     Config
	watched map[string]bool // absolute folders with a watch

	// The batch being gathered.
	pending     map[string]bool
	all, rules  bool
	first, last time.Time // its first and latest change

	// Periodic scans, once watches failed.
	scanning  bool
	files     map[string]stamp // what the last scan saw
	scanEvery time.Duration
}

// startWatches creates the watcher and watches the tree.
func (r *runner) startWatches() (*fsnotify.Watcher, error) {
	w, err := r.cfg.newWatcher()
	if err != nil {
		return nil, err
	}
	r.watched = map[string]bool{}
	if err := r.addTree(w, r.cfg.Root); err != nil {
		w.Close()
		return nil, err
	}
	r.cfg.Logger.Debug("watching for changes", "folders", len(r.watched))
	return w, nil
}

// loop gathers changes from w (or from scans once w is nil) and hands
// settled batches to out.
func (r *runner) loop(ctx context.Context, w *fsnotify.Watcher, out chan<- Batch) error {
	var (
		ready   *Batch // settled, waiting for the receiver
		timer   = r.cfg.clock.NewTimer(r.now().Add(time.Hour))
		events  <-chan fsnotify.Event
		errs    <-chan error
		closeW  = func() {}
		scanDue <-chan time.Time
	)
	defer timer.Stop()
	defer func() { closeW() }()
	useWatcher := func() {
		events, errs, closeW = w.Events, w.Errors, func() { w.Close() }
	}
	startScans := func() {
		closeW()
		closeW, events, errs, w = func() {}, nil, nil, nil
		r.startScans(ctx)
		scanDue = r.after(r.scanEvery)
	}
	if w != nil {
		useWatcher()
	} else {
		startScans()
	}
	for {
		if r.hasPending() && !r.now().Before(r.due()) {
			var err error
			if ready, err = r.settle(w, ready); err != nil {
				r.giveUp(err)
				startScans()
			}
		}
		var send chan<- Batch
		var batch Batch
		if ready != nil {
			send, batch = out, *ready
		}
		timer.Stop()
		if r.hasPending() {
			timer.Reset(r.due())
		}
		if r.cfg.idle != nil {
			r.cfg.idle(r, ready)
		}
		select {
		case <-ctx.Done():
			return nil
		case send <- batch:
			ready = nil
		case ev, ok := <-events:
			if !ok {
				r.giveUp(errors.New("event channel closed"))
				startScans()
				continue
			}
			if err := r.event(w, ev); err != nil {
				r.giveUp(err)
				startScans()
			}
		case err, ok := <-errs:
			if !ok {
				r.giveUp(errors.New("error channel closed"))
				startScans()
				continue
			}
			r.watchError(err)
		case <-scanDue:
			r.scanOnce(ctx)
			scanDue = r.after(r.scanEvery)
		case <-timer.C():
		}
	}
}

// settle takes the pending changes, now due, and joins them to ready. A
// change of rules reloads them and, with a watcher w, watches the folders
// they may have let in; an error doing so means w must be given up.
func (r *runner) settle(w *fsnotify.Watcher, ready *Batch) (*Batch, error) {
	b := r.take()
	if b.Rules && r.cfg.Reload != nil {
		r.cfg.Reload()
	}
	var err error
	if b.Rules && w != nil {
		// Folders the old rules skipped may be in now.
		err = r.addTree(w, r.cfg.Root)
	}
	return merge(ready, &b, r.cfg.MaxPaths), err
}

// watchError handles an error the watcher reports: an overflow means
// changes were lost, so the whole folder is checked.
func (r *runner) watchError(err error) {
	if errors.Is(err, fsnotify.ErrEventOverflow) {
		r.cfg.Logger.Warn("too many file changes at once: checking the whole folder", "err", err)
		r.markAll(r.now())
		return
	}
	r.cfg.Logger.Warn("file watch error", "err", err)
}

// merge joins two batches; a is nil or already handed out of the gatherer.
func merge(a, b *Batch, maxPaths int) *Batch {
	if a == nil {
		return b
	}
	m := &Batch{All: a.All || b.All, Rules: a.Rules || b.Rules}
	if !m.All {
		m.Paths = append(slices.Clone(a.Paths), b.Paths...)
		slices.Sort(m.Paths)
		m.Paths = slices.Compact(m.Paths)
		if len(m.Paths) > maxPaths {
			m.All, m.Paths = true, nil
		}
	}
	return m
}

func (r *runner) now() time.Time { return r.cfg.clock.Now() }

// after is time.After on the runner's clock.
func (r *runner) after(d time.Duration) <-chan time.Time {
	return r.cfg.clock.NewTimer(r.now().Add(d)).C()
}

func (r *runner) rel(abs string) (string, bool) {
	rel, err := filepath.Rel(r.cfg.Root, abs)
	if err != nil || rel == "." || rel == ".." || strings.HasPrefix(rel, ".."+string(filepath.Separator)) {
		return "", false
	}
	return filepath.ToSlash(rel), true
}

func (r *runner) note(rel string, now time.Time) {
	if r.first.IsZero() {
		r.first = now
	}
	r.last = now
	if r.all {
		return
	}
	r.pending[rel] = true
	if len(r.pending) > r.cfg.MaxPaths {
		r.all, r.pending = true, map[string]bool{}
	}
}

func (r *runner) markAll(now time.Time) {
	r.note("", now)
	r.all, r.pending = true, map[string]bool{}
}

// due is when the pending batch settles: after Settle of quiet, or
// MaxDelay after its first change, whichever comes first.
func (r *runner) due() time.Time {
	a, b := r.last.Add(r.cfg.Settle), r.first.Add(r.cfg.MaxDelay)
	if a.Before(b) {
		return a
	}
	return b
}

func (r *runner) hasPending() bool { return !r.first.IsZero() }

// take empties the pending batch.
func (r *runner) take() Batch {
	b := Batch{All: r.all, Rules: r.rules}
	if !r.all {
		b.Paths = slices.AppendSeq(make([]string, 0, len(r.pending)), maps.Keys(r.pending))
		slices.Sort(b.Paths)
	}
	r.pending, r.all, r.rules, r.first, r.last = map[string]bool{}, false, false, time.Time{}, time.Time{}
	return b
}

func (r *runner) isRuleFile(rel string) bool {
	return slices.Contains(r.cfg.RuleFiles, path.Base(rel))
}

// giveUp logs why watching stopped; the caller switches to scans.
func (r *runner) giveUp(err error) {
	if errors.Is(err, syscall.ENOSPC) || errors.Is(err, syscall.EMFILE) {
		r.cfg.Logger.Warn("out of file watches (raise fs.inotify.max_user_watches to fix): scanning the folder periodically instead",
			"err", err, "folders_watched", len(r.watched))
	} else {
		r.cfg.Logger.Warn("file watches failed: scanning the folder periodically instead", "err", err)
	}
}

var errRootGone = errors.New("the data folder was deleted or moved away")

// event records one fsnotify event; a returned error means watches can no
// longer be trusted.
func (r *runner) event(w *fsnotify.Watcher, ev fsnotify.Event) error {
	if r.cfg.onEvent != nil {
		r.cfg.onEvent(ev)
	}
	if ev.Name == r.cfg.Root && (ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename)) {
		// No watch sees a folder made again at this path; scans do.
		return errRootGone
	}
	rel, ok := r.rel(ev.Name)
	if !ok {
		return nil
	}
	now := r.now()
	fi, statErr := os.Lstat(ev.Name)
	// A folder deleted or moved away can no longer be asked; its watch says.
	isDir := statErr == nil && fi.IsDir() || statErr != nil && r.watched[ev.Name]
	if ev.Has(fsnotify.Remove) || ev.Has(fsnotify.Rename) {
		// The folder (if it was one) is gone from here: drop its watches
		// and every watch below it.
		r.unwatch(w, ev.Name)
	}
	if r.cfg.Skip(rel, isDir) && !r.isRuleFile(rel) {
		return nil
	}
	if r.isRuleFile(rel) {
		r.rules = true // the rules are read again once the batch settles
	}
	if isDir && ev.Has(fsnotify.Create) {
		// A new or moved-in folder: watch it and everything in it. Files
		// written before its watch existed are found by the run, which
		// walks the whole folder.
		if err := r.addTree(w, ev.Name); err != nil {
			return err
		}
	}
	r.note(rel, now)
	return nil
}

// addTree watches dir and the folders below it that Skip allows.
func (r *runner) addTree(w *fsnotify.Watcher, dir string) error {
	return filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == dir && p == r.cfg.Root {
				return err
			}
			return nil // vanished or unreadable: nothing to watch
		}
		if !d.IsDir() {
			return nil
		}
		if rel, ok := r.rel(p); ok && r.cfg.Skip(rel, true) {
			return filepath.SkipDir
		}
		if r.watched[p] {
			return nil
		}
		if err := r.cfg.addWatch(w, p); err != nil {
			if errors.Is(err, fs.ErrNotExist) {
				return filepath.SkipDir
			}
			return err
		}
		r.watched[p] = true
		return nil
	})
}

// unwatch drops the watches of dir and everything below it.
func (r *runner) unwatch(w *fsnotify.Watcher, dir string) {
	prefix := dir + string(filepath.Separator)
	for p := range r.watched {
		if p == dir || strings.HasPrefix(p, prefix) {
			delete(r.watched, p)
			// fsnotify may have dropped it already (deleted folder).
			_ = w.Remove(p)
		}
	}
}
