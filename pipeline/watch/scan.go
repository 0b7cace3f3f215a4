package watch

import (
	"context"
	"io/fs"
	"path/filepath"
	"time"
)

// stamp is what a scan remembers of a file to notice a change.
type stamp struct {
	mtime int64
	size  int64
}

// startScans switches to periodic scans: one scan now to learn the tree
// and the cost of a scan that finds nothing. When watches were running
// before, changes may have been missed in between, so the next batch says
// All.
func (r *runner) startScans(ctx context.Context) {
	wasWatching := r.watched != nil
	r.scanning, r.watched = true, nil
	files, cost := r.scanTree(ctx)
	r.files = files
	r.scanEvery = r.interval(cost)
	if wasWatching {
		r.markAll(r.now())
	}
	r.cfg.Logger.Warn("scanning the folder for changes periodically", "every", r.scanEvery.Round(time.Millisecond),
		"scan_cost", cost.Round(time.Microsecond), "files", len(files), "cpu_share", r.cfg.ScanShare)
}

// interval keeps scans to ScanShare of the time: a scan that takes cost
// runs at most every cost/ScanShare.
func (r *runner) interval(cost time.Duration) time.Duration {
	return max(r.cfg.MinScanEvery, time.Duration(float64(cost)/r.cfg.ScanShare))
}

// scanOnce compares the tree with the last scan and notes what differs.
func (r *runner) scanOnce(ctx context.Context) {
	files, cost := r.scanTree(ctx)
	if ctx.Err() != nil {
		return
	}
	now := r.now()
	changed := func(rel string) {
		if r.isRuleFile(rel) {
			r.rules = true
		}
		r.note(rel, now)
	}
	for rel, s := range files {
		if old, ok := r.files[rel]; !ok || old != s {
			changed(rel)
		}
	}
	for rel := range r.files {
		if _, ok := files[rel]; !ok {
			changed(rel)
		}
	}
	r.files = files
	// Follow the measured cost, smoothed so one slow scan does not swing it.
	next := (3*r.scanEvery + r.interval(cost)) / 4
	if next > 2*r.scanEvery || next < r.scanEvery/2 {
		r.cfg.Logger.Info("folder scan interval adjusted", "every", next.Round(time.Millisecond), "scan_cost", cost.Round(time.Microsecond))
	}
	r.scanEvery = next
}

// scanTree stats every file Skip allows and reports how long that took on
// the runner's clock (no time at all on a test's clock, which only moves by
// hand).
func (r *runner) scanTree(ctx context.Context) (map[string]stamp, time.Duration) {
	start := r.now()
	files := make(map[string]stamp, len(r.files))
	filepath.WalkDir(r.cfg.Root, func(p string, d fs.DirEntry, err error) error {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if err != nil {
			return nil // vanished or unreadable: skip it
		}
		rel, ok := r.rel(p)
		if !ok {
			return nil // the root itself
		}
		if d.IsDir() {
			if r.cfg.Skip(rel, true) {
				return filepath.SkipDir
			}
			return nil
		}
		if r.cfg.Skip(rel, false) {
			return nil
		}
		if fi, err := d.Info(); err == nil {
			files[rel] = stamp{mtime: fi.ModTime().UnixNano(), size: fi.Size()}
		}
		return nil
	})
	return files, r.now().Sub(start)
}
