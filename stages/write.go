package stages

import (
	"cmp"
	"log/slog"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

// Index is what the write stage needs of an index writer (a subset of
// index.Updater).
type Index interface {
	Before() map[string]*schema.FileEntry
	PutFile(f schema.FileEntry, chunks []schema.Record, vectors []float32) error
	TouchFile(path string, mtime float64, size int64)
	RemoveFile(path string)
	Commit(end schema.RunEnd) error
	Chunks() int
}

// Tally counts what a reindex did to the index.
type Tally struct {
	FilesAdded, FilesUpdated, FilesRemoved, FilesFailed, FilesTouched, FilesTruncated int
	LinksOutside                                                                      int // links leading outside the data folder, not followed
	ChunksTotal, ChunksEmbedded, ChunksReused                                         int
}

// Failure is a file or folder a run could not read.
type Failure struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

// Writer is the write stage, the only one that changes the index: Apply
// for each file, then Finish once every file has arrived. A Writer is used
// by one goroutine.
type Writer struct {
	Index      Index
	Glob       *glob.Glob            // the run's scope: only files it matches can be removed
	InScope    func(rel string) bool // narrows the scope further (a run over some paths); nil = all
	Checkpoint time.Duration         // commit this often so early results become searchable; 0 = never before Finish
	// FirstCheckpoint, when shorter, times the first commit of a run that
	// starts on an empty index: its first files become searchable within
	// seconds instead of a Checkpoint later (a search waits for them).
	FirstCheckpoint time.Duration
	Logger          *slog.Logger     // warnings about skipped files and parts; nil = none
	Now             func() time.Time // the clock checkpoints are timed by; nil = time.Now
	Tally           Tally

	Failures  []Failure // what could not be read this run, and why
	Truncated []Failure // what this run indexed only in part (MaxFileChunks), and why

	seen        map[string]bool
	kept        []string // folders that could not be listed, with a trailing "/"
	lastCommit  time.Time
	uncommitted bool // files applied since the last commit
	firstDue    bool // the first commit is timed by FirstCheckpoint
}

func (w *Writer) init() {
	if w.Now == nil {
		w.Now = time.Now
	}
	if w.seen == nil {
		w.seen = map[string]bool{}
		w.lastCommit = w.Now()
		w.Logger = cmp.Or(w.Logger, slog.New(slog.DiscardHandler))
		w.firstDue = w.FirstCheckpoint > 0 && len(w.Index.Before()) == 0
	}
}

// Apply records one file in the index and commits when a checkpoint is due.
func (w *Writer) Apply(job *FileJob) error {
	w.init()
	if job.Kind == Skipped {
		// Not seen: a file that became such a link leaves the index.
		w.Tally.LinksOutside++
		w.Logger.Info("link leads outside the data folder; not followed", "path", job.Rel)
		return nil
	}
	if job.Kind == Failed && w.seen[job.Rel] {
		return nil // a broken rule file, met again by a scoped run under its folder
	}
	w.seen[job.Rel] = true
	switch job.Kind {
	case Touched:
		w.Index.TouchFile(job.Rel, job.Mtime, job.Size)
		w.Tally.FilesTouched++
	case Gone:
		if job.Old != nil {
			w.Index.RemoveFile(job.Rel)
			w.Tally.FilesRemoved++
		}
	case Failed:
		w.Tally.FilesFailed++
		// The record names the path; the reason need not repeat it.
		w.Failures = append(w.Failures, Failure{Path: job.Rel, Reason: strings.TrimPrefix(job.Err.Error(), job.Rel+": ")})
		if job.Dir {
			// Its files are unknown this run: keep what the index has.
			w.kept = append(w.kept, job.Rel+"/")
			w.Logger.Warn("folder skipped; its indexed files are kept", "path", job.Rel, "err", job.Err)
		} else {
			w.Logger.Warn("file skipped", "path", job.Rel, "err", job.Err)
		}
	case Changed:
		if err := w.Index.PutFile(fileEntry(job), records(job.Chunks), job.Vectors); err != nil {
			return err
		}
		if job.Old == nil {
			w.Tally.FilesAdded++
		} else {
			w.Tally.FilesUpdated++
		}
		w.Tally.ChunksEmbedded += len(job.Chunks) - job.Reused
		w.Tally.ChunksReused += job.Reused
		if job.Truncated != "" {
			w.Tally.FilesTruncated++
			w.Truncated = append(w.Truncated, Failure{Path: job.Rel, Reason: job.Truncated})
			w.Logger.Warn("file truncated", "path", job.Rel, "reason", job.Truncated)
		}
		for _, s := range job.Doc.Skipped {
			w.Logger.Warn("part of file skipped", "path", job.Rel, "reason", s)
		}
	}
	w.uncommitted = true
	return w.Tick()
}

// Tick commits what was applied since the last commit once a checkpoint is
// due. The pipeline calls it between files too, so files finished before
// one that takes hours to embed are committed without waiting for it.
func (w *Writer) Tick() error {
	w.init()
	every := w.Checkpoint
	if w.firstDue {
		every = min(every, w.FirstCheckpoint)
	}
	if every <= 0 || w.Now().Sub(w.lastCommit) < every {
		return nil
	}
	return w.Save()
}

// Save commits what was applied since the last commit, due or not: a run
// stopped by its caller keeps every file it finished, as a checkpoint
// would, instead of losing up to a checkpoint interval of work.
func (w *Writer) Save() error {
	w.init()
	if !w.uncommitted {
		return nil
	}
	if err := w.Index.Commit(schema.MidRun); err != nil {
		return err
	}
	w.lastCommit, w.uncommitted, w.firstDue = w.Now(), false, false
	return nil
}

// Finish removes the files in scope that the run did not see and makes
// the final commit. Call it only after a complete walk: after an error or
// cancel it would remove files that were merely not reached.
func (w *Writer) Finish() error {
	var gone []string
	for rel := range w.Index.Before() {
		if !w.seen[rel] && !w.inKept(rel) && w.Glob.Match(rel) && (w.InScope == nil || w.InScope(rel)) {
			gone = append(gone, rel)
		}
	}
	// In path order, so the index's tombstones do not follow map order.
	slices.Sort(gone)
	for _, rel := range gone {
		w.Index.RemoveFile(rel)
		w.Tally.FilesRemoved++
	}
	if err := w.Index.Commit(schema.EndOfRun); err != nil {
		return err
	}
	w.Tally.ChunksTotal = w.Index.Chunks()
	return nil
}

func (w *Writer) inKept(rel string) bool {
	return slices.ContainsFunc(w.kept, func(dir string) bool { return strings.HasPrefix(rel, dir) })
}

func fileEntry(job *FileJob) schema.FileEntry {
	return schema.FileEntry{Path: job.Rel, Mtime: job.Mtime, Size: job.Size, Checksum: job.Checksum, Ext: job.Ext, PageStarts: job.Doc.PageStarts, Truncated: job.Truncated}
}

func records(chunks []chunk.Chunk) []schema.Record {
	out := make([]schema.Record, len(chunks))
	for i, c := range chunks {
		out[i] = schema.Record{
			ChunkIndex: c.Index, CharStart: c.CharStart, CharEnd: c.CharEnd,
			Page: c.Page, LineStart: c.LineStart, LineEnd: c.LineEnd, Text: c.Text, Headings: c.Headings,
		}
	}
	return out
}
