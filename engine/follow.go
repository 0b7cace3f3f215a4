package engine

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
	"github.com/micro-rag/micro-rag-mcp/pipeline/watch"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// busyRetry is how long an update waits before trying again when another
// process holds the index.
const busyRetry = 2 * time.Second

// An update that failed (the disk was full, say) is tried again over the
// whole folder after retryFirst, then after twice the previous wait up to
// retryMax, until one succeeds: the changes it missed must not wait for
// another file event.
const (
	retryFirst = time.Second
	retryMax   = time.Minute
)

// nextRetry is the wait before the next try after a failure; last is the
// wait before the try that failed, 0 if the one before it succeeded.
func nextRetry(last time.Duration) time.Duration {
	if last <= 0 {
		return retryFirst
	}
	return min(2*last, retryMax)
}

// follow watches the data folder and applies each settled batch of changes
// as an update run over just those paths, through the same pipeline and
// the same run slot as every other run. It returns when ctx ends.
func (e *Engine) follow(ctx context.Context) {
	var rules atomic.Pointer[ignore.Rules]
	reload := func() {
		if r, err := ignore.New(e.cfg.DataFolder, e.scope.Load().Excludes); err == nil {
			rules.Store(r)
		}
	}
	reload()
	cfg := watch.Config{
		Root: e.cfg.DataFolder, Settle: e.cfg.WatchSettle, Logger: e.log,
		RuleFiles: []string{ignore.GitIgnoreFile, ignore.RuleFile},
		Reload:    reload,
		Skip: func(rel string, isDir bool) bool {
			if isDir {
				return filepath.Join(e.cfg.DataFolder, filepath.FromSlash(rel)) == e.cfg.IndexFolder ||
					rules.Load().Ignored(rel, true)
			}
			name := path.Base(rel)
			if ignore.IsRuleFile(name) {
				return false
			}
			return !e.scope.Load().exts[extract.TextExt(name, strings.ToLower(path.Ext(name)))] || rules.Load().Ignored(rel, false)
		},
	}
	batches := make(chan watch.Batch)
	done := make(chan error, 1)
	go func() { done <- watch.Run(ctx, cfg, batches) }()
	var (
		full  bool             // the last update failed: the next one checks everything
		retry <-chan time.Time // set while a failed update waits to be tried again
		wait  time.Duration    // that wait; 0 after a success
	)
	for {
		var b watch.Batch
		select {
		case next, ok := <-batches: // closed when ctx ends
			if !ok {
				if err := <-done; err != nil {
					e.log.Error("watching the data folder stopped", "err", err)
				}
				return
			}
			b = next
		case <-retry:
			// full is set: the whole folder is checked again.
		}
		retry = nil
		var paths []string // nil: the whole folder
		if !b.All && !b.Rules && !full {
			paths = b.Paths
		}
		start := time.Now()
		res, err := e.update(ctx, paths)
		var scopeErr *ScopeError
		switch {
		case err != nil && ctx.Err() != nil:
		case errors.As(err, &scopeErr):
			// Trying again cannot help: the command line must change.
			full, wait = false, 0
			e.log.Error("update after file changes refused", "err", err)
		case err != nil:
			full, wait = true, nextRetry(wait)
			// Until an update succeeds, search says that it may miss the
			// changes (a deleted data folder, an index made read-only).
			e.updateFailed.Store(&runFailure{err: err.Error(), retryAt: time.Now().Add(wait)})
			retry = e.after(wait)
			e.log.Warn("update after file changes failed; trying again over the whole folder", "err", err, "retry_in", wait)
		default:
			full, wait = false, 0
			e.updateFailed.Store(nil)
			e.log.Info("index updated after file changes", "paths", len(paths), "all", paths == nil,
				"added", res.FilesAdded, "updated", res.FilesUpdated, "removed", res.FilesRemoved,
				"failed", res.FilesFailed, "ms", time.Since(start).Milliseconds())
		}
	}
}

// update runs one update over paths (nil: the whole folder), trying again
// while another process holds the index; the watcher keeps gathering
// changes meanwhile.
func (e *Engine) update(ctx context.Context, paths []string) (ReindexResult, error) {
	for {
		res, err := e.run(ctx, ReindexRequest{}, activityWatch, paths, nil)
		if !errors.Is(err, ErrBusy) {
			return res, err
		}
		select {
		case <-ctx.Done():
			return res, err
		case <-time.After(busyRetry):
		}
	}
}
