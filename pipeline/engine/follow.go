package engine

import (
	"context"
	"errors"
	"path"
	"path/filepath"
	"strings"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline/watch"
	"github.com/micro-rag/micro-rag-mcp/stages/ignore"
)

// busyRetry is how long an update waits before trying again when another
// process holds the index.
const busyRetry = 2 * time.Second

// follow watches the data folder and applies each settled batch of changes
// as an update run over just those paths, through the same pipeline and
// the same run slot as every other run. It returns when ctx ends.
func (e *Engine) follow(ctx context.Context) {
	var rules atomic.Pointer[ignore.Rules]
	reload := func() {
		if r, err := ignore.New(e.cfg.DataFolder, e.cfg.Excludes); err == nil {
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
			return !e.exts[strings.ToLower(path.Ext(name))] || rules.Load().Ignored(rel, false)
		},
	}
	batches := make(chan watch.Batch)
	done := make(chan error, 1)
	go func() { done <- watch.Run(ctx, cfg, batches) }()
	full := false // the last update failed: the next one checks everything
	for b := range batches {
		var paths []string // nil: the whole folder
		if !b.All && !b.Rules && !full {
			paths = b.Paths
		}
		start := time.Now()
		for {
			res, err := e.run(ctx, ReindexRequest{}, activityWatch, paths, nil)
			switch {
			case errors.Is(err, ErrBusy):
				// Another process holds the index: try again shortly; the
				// watcher keeps gathering changes meanwhile.
				select {
				case <-ctx.Done():
				case <-time.After(busyRetry):
					continue
				}
			case err != nil && ctx.Err() != nil:
			case err != nil:
				full = true
				e.log.Warn("update after file changes failed; the next one checks the whole folder", "err", err)
			default:
				full = false
				e.log.Info("index updated after file changes", "paths", len(b.Paths), "all", b.All || b.Rules,
					"added", res.FilesAdded, "updated", res.FilesUpdated, "removed", res.FilesRemoved,
					"failed", res.FilesFailed, "ms", time.Since(start).Milliseconds())
			}
			break
		}
	}
	if err := <-done; err != nil {
		e.log.Error("watching the data folder stopped", "err", err)
	}
}
