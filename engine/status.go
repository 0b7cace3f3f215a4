package engine

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// LastRunFile, in the index folder, keeps the files the latest runs could
// not read, so status can name them without reindexing.
const LastRunFile = "last-run.json"

type lastRun struct {
	At       time.Time        `json:"at"`
	Activity string           `json:"activity"`
	Failures []stages.Failure `json:"failures"`
	// Error is why the latest run failed as a whole ("" once a run
	// succeeds): "2006-01-02T15:04:05Z reindex: <error>".
	Error string `json:"error,omitempty"`
	// NotEnabled is what the latest run over the whole folder skipped for
	// its extension (Engine.NotEnabled), for a search in another process.
	NotEnabled *stages.SkipGroup `json:"not_enabled,omitempty"`
	// Whole is when a run over the whole folder last succeeded: a run
	// that changed nothing commits nothing, so the index cannot say.
	Whole time.Time `json:"whole,omitzero"`
}

// lastReindex is the later of the index's last committed reindex
// (RFC 3339, "" for none) and lr's last successful whole run.
func lastReindex(committed string, lr lastRun) time.Time {
	t, _ := time.Parse(time.RFC3339, committed)
	if w := lr.Whole.Truncate(time.Second); w.After(t) {
		return w
	}
	return t
}

// recordFailure notes in LastRunFile that a run failed, keeping the
// failures recorded before it.
func (e *Engine) recordFailure(activity string, runErr error) {
	prev := e.readLastRunOrWarn()
	prev.Error = time.Now().UTC().Format(time.RFC3339) + " " + activity + ": " + runErr.Error()
	e.writeLastRun(prev)
}

// readLastRun reads LastRunFile: empty when there is none; an error naming
// the file when it is not JSON or not a run's record (null, {}, []).
func (e *Engine) readLastRun() (lastRun, error) {
	var lr *lastRun
	path := filepath.Join(e.cfg.IndexFolder, LastRunFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return lastRun{}, nil
	}
	if err == nil {
		err = json.Unmarshal(b, &lr)
	}
	if err == nil && (lr == nil || lr.At.IsZero() && lr.Activity == "" && lr.Error == "" && lr.Failures == nil) {
		err = errors.New("it records no run")
	}
	if err != nil {
		return lastRun{}, fmt.Errorf("%s is damaged (%v): the failures of earlier runs are not known; the next reindex rewrites it", path, err)
	}
	return *lr, nil
}

// readLastRunOrWarn is readLastRun for a run about to replace the record:
// a damaged one is logged and replaced.
func (e *Engine) readLastRunOrWarn() lastRun {
	lr, err := e.readLastRun()
	if err != nil {
		e.log.Warn("replacing a damaged run record", "err", err)
	}
	return lr
}

func (e *Engine) writeLastRun(lr lastRun) {
	if err := writeRecord(filepath.Join(e.cfg.IndexFolder, LastRunFile), lr, 0o600); err != nil {
		e.log.Warn("could not record the run in "+LastRunFile, "err", err)
	}
}

// recordRun updates LastRunFile after a run: failures inside the run's
// scope, or met again by it (a broken rule file above the scope), are
// replaced by this run's; the others are kept. A failed run's error is
// kept until a run over the whole folder (whole) succeeds: an update of
// one file does not index what the failed run missed.
func (e *Engine) recordRun(activity string, inScope func(string) bool, failures []stages.Failure, whole bool) {
	prev := e.readLastRunOrWarn()
	next := lastRun{At: time.Now().UTC(), Activity: activity, Failures: failures}
	if g := e.notEnabled.Load(); whole && g != nil && g.Count > 0 {
		next.NotEnabled = g
	}
	if !whole {
		next.Error, next.NotEnabled, next.Whole = prev.Error, prev.NotEnabled, prev.Whole
	} else {
		next.Whole = next.At
	}
	again := map[string]bool{}
	for _, f := range failures {
		again[f.Path] = true
	}
	for _, f := range prev.Failures {
		if !inScope(f.Path) && !again[f.Path] {
			next.Failures = append(next.Failures, f)
		}
	}
	slices.SortFunc(next.Failures, func(a, b stages.Failure) int { return cmp.Compare(a.Path, b.Path) })
	e.writeLastRun(next)
}

// readSummary reads the last commit without the model: from the index
// folder, or from the database store.
func (e *Engine) readSummary(ctx context.Context) (index.Summary, error) {
	sum, err := index.ReadStoreSummary(ctx, e.storeURL(), e.namespace())
	if err != nil && !e.cfg.Store.Local() && !index.IsDamaged(err) {
		err = fmt.Errorf("%w. To fix: %s", err, fixStore) // as search says
	}
	return sum, err
}

// DiskChanges counts how the folder differs from the index now (by size
// and modification time, as the reindex filter sees it).
type DiskChanges struct {
	New      int      `json:"new"`
	Modified int      `json:"modified"`
	Deleted  int      `json:"deleted"`
	Examples []string `json:"examples"` // a few changed paths
}

// ReadStatus reports on the index from its files alone: no model, no ONNX
// Runtime, no lock, nothing written. It loads the index with the checks a
// search makes (index.Verify) and walks the data folder with the current
// ignore rules to count what changed since the last commit. A damaged
// index is reported in the Status, not as an error.
func (e *Engine) ReadStatus(ctx context.Context) (Status, error) {
	st := Status{DataFolder: e.cfg.DataFolder, IndexFolder: e.cfg.IndexFolder, Store: e.cfg.Store.Describe(e.namespace()), Integrity: IntegrityOK,
		Failed: []stages.Failure{}, Truncated: []stages.Failure{}, ChangedDisk: DiskChanges{Examples: []string{}}, Skipped: []stages.SkipGroup{}}
	sum, err := e.readSummary(ctx)
	if err == nil {
		err = index.VerifyStore(ctx, e.storeURL(), e.namespace())
	}
	if index.IsDamaged(err) {
		st.Integrity, st.Damage = IntegrityDamaged, err.Error()
	} else if err != nil {
		return st, err
	}
	st.Model, st.Files, st.Chunks, st.Tombstones, st.IndexBytes = sum.Model, len(sum.Files), sum.Chunks, sum.Tombstones, sum.Bytes
	st.VectorIndex, st.Reindexing = sum.VectorIndex, sum.Reindexing
	lr, err := e.readLastRun()
	if err != nil {
		st.LastRunDamage = err.Error()
	}
	st.LastReindex = lastReindex(sum.LastReindex, lr)
	if err := e.folderIDProblem(); err != nil {
		st.FolderProblem = err.Error()
	}
	if lr.Failures != nil {
		st.Failed = lr.Failures
	}
	st.LastRunError = lr.Error
	// Status shows what a run with this command line would see: the
	// record, or what the flags change it to.
	rec, err := readScope(e.cfg.IndexFolder)
	var indexed map[string]*schema.FileEntry
	if damage := (*ScopeDamage)(nil); errors.As(err, &damage) {
		indexed = make(map[string]*schema.FileEntry, len(sum.Files))
		for _, f := range sum.Files {
			indexed[f.Path] = f
		}
		st.ScopeDamage = e.scopeRepair(damage, indexed).Error()
	} else if err != nil {
		return st, err
	}
	req := e.scopeRequest()
	req.ChangeExts, req.ChangeExcludes = true, true
	scope, _ := req.resolve(rec, indexed)
	st.Exts, st.Excludes = isearch.SpelledExts(scope.Exts), scope.Excludes
	rules, err := ignore.New(e.cfg.DataFolder, scope.Excludes)
	if err != nil {
		return st, err
	}
	folder, err := stages.OpenFolder(e.cfg.DataFolder)
	if err != nil {
		return st, err
	}
	defer folder.Close()
	w := stages.Walker{Folder: folder, IndexFolder: e.cfg.IndexFolder, Exts: newActiveScope(scope).exts, Rules: rules,
		TableCap: max(0, e.cfg.TableCap)}
	return st, compareDisk(ctx, &st, w, sum.Files)
}

// compareDisk walks the folder as a run would and counts in st what the
// reindex filter would send to be read, what is gone, and what is skipped.
func compareDisk(ctx context.Context, st *Status, w stages.Walker, files []*schema.FileEntry) error {
	filter := stages.Filter{Before: make(map[string]*schema.FileEntry, len(files))}
	for _, f := range files {
		if f.Truncated != "" {
			st.Truncated = append(st.Truncated, stages.Failure{Path: f.Path, Reason: f.Truncated})
		}
		filter.Before[f.Path] = f
	}
	example := func(p string) {
		if len(st.ChangedDisk.Examples) < 10 {
			st.ChangedDisk.Examples = append(st.ChangedDisk.Examples, p)
		}
	}
	failed := map[string]bool{}
	for _, f := range st.Failed {
		failed[f.Path] = true
	}
	skips := &stages.Skips{}
	w.Skipped = skips.Add
	seen := map[string]bool{}
	var unlisted []string // folders that could not be listed: a run keeps their files
	err := w.Walk(ctx, func(job *stages.FileJob) error {
		if job.Kind == stages.Skipped {
			st.LinksOutside++
			return nil
		}
		if job.Kind == stages.Failed && job.Dir {
			unlisted = append(unlisted, job.Rel+"/")
		}
		seen[job.Rel] = true
		if f := filter.Before[job.Rel]; f != nil && len(f.ChunkIDs) == 0 {
			skips.Add(job.Rel, job.Ext, stages.SkipNoText)
		}
		filter.Apply(job)
		switch {
		case job.Kind != stages.Changed: // unchanged, or could not be examined
		case job.Old == nil && failed[job.Rel]: // reported under Failed
		case job.Old == nil:
			st.ChangedDisk.New++
			example(job.Rel)
		default:
			st.ChangedDisk.Modified++
			example(job.Rel)
		}
		return nil
	})
	if err != nil {
		return err
	}
	for p := range filter.Before {
		under := func(dir string) bool { return strings.HasPrefix(p, dir) }
		if !seen[p] && !slices.ContainsFunc(unlisted, under) {
			st.ChangedDisk.Deleted++
			example(p)
		}
	}
	slices.Sort(st.ChangedDisk.Examples)
	st.Skipped = skips.Groups()
	return nil
}

// IndexSummary is what the committed index's records say (its model,
// files, whether a reindex holds it now), read from the index alone; zero
// when there is none or it cannot be read. LastReindex is status's: a run
// over the whole folder that committed nothing (no file holds text) counts.
func (e *Engine) IndexSummary(ctx context.Context) index.Summary {
	sum, _ := e.readSummary(ctx)
	lr, _ := e.readLastRun()
	if t := lastReindex(sum.LastReindex, lr); !t.IsZero() {
		sum.LastReindex = t.Format(time.RFC3339)
	}
	return sum
}
