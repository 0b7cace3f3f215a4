package engine

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
	"github.com/micro-rag/micro-rag-mcp/internal/confine"
	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// DefaultExts are the file types a new index covers unless --exts says
// otherwise: documents people write and read (office formats, web pages,
// books, plain-text markups), tables (CSV and TSV up to
// stages.DefaultTableCap) and, as "", files without an extension that look
// like text (README, LICENSE, copyright). Source code and configuration
// are left to --add-exts (ExtGroups), so a document folder that holds a
// project's files is not flooded with them.
var DefaultExts = []string{".txt", ".md", ".pdf", ".docx", ".odt", ".rtf", ".epub", ".html", ".htm", ".pptx", ".odp",
	".xlsx", ".ods", ".csv", ".tsv", ".rst", ".adoc", ".asciidoc", ".org", ".tex", ".markdown", ""}

// ExtGroups name lists of extensions that --exts and --add-exts take whole.
var ExtGroups = map[string][]string{
	"code":   extract.CodeExts,
	"config": extract.ConfigExts,
	"markup": extract.MarkupExts,
}

// NoExt names, in extension lists, files without an extension (README,
// LICENSE, Makefile): read as text when they look like text.
const NoExt = isearch.NoExt

// DefaultMaxFileChunks is the per-file chunk cap. At the 25 chunks/s that
// two cores embed (BENCHMARKS.md, EmbedRaw) one file at the cap costs about
// 7 minutes and some 30 MB in the pipeline; it holds 6 to 8 MB of text,
// twice the longest novels, so ordinary documents are never cut, while a
// 60 MB text (175,000 chunks, two hours) is.
const DefaultMaxFileChunks = 10_000

// ModelWait is how long a search waits for the model before answering empty.
const ModelWait = 5 * time.Second

// Config names the folders and files one engine works on.
type Config struct {
	DataFolder  string
	IndexFolder string // default <DataFolder>/index
	// Store is where the index lives: the zero value is IndexFolder; a
	// database URL (--store) keeps chunks, vectors and the keyword side
	// there, and IndexFolder holds only this machine's scope record and
	// notes of its last run.
	Store index.StoreURL
	// Exts replaces the extensions recorded in the index (ScopeFile); nil
	// keeps them, and a new index takes DefaultExts. With dots, lower case.
	Exts []string
	// AddExts are added to the recorded (or given) extensions.
	AddExts []string
	// ChangeExts lets Exts leave out recorded extensions, whose files then
	// leave the index; without it such a run fails with a *ScopeError.
	ChangeExts bool
	// Model names the embedding model (model.Models); "" = the default,
	// all-MiniLM-L6-v2-q8. Switching models rebuilds the index.
	Model      string
	ModelDir   string // folder holding model.onnx and tokenizer.json; "" = cache
	ORTLibrary string // path of libonnxruntime; "" = cache
	// Watch makes Start follow file changes in the data folder and apply
	// them as updates through the same pipeline (the server turns it on).
	Watch bool
	// WatchSettle is how long changes must be quiet before an update; 0 = 1 s.
	WatchSettle time.Duration
	// Excludes are extra ignore patterns in gitignore syntax (--exclude),
	// on top of .gitignore and .micro-rag-ignore files. They replace the
	// recorded ones; nil keeps those.
	Excludes []string
	// ChangeExcludes lets Excludes add patterns the record lacks (their
	// files leave the index); without it such a run is a *ScopeError.
	ChangeExcludes bool
	// NoInitialReindex stops Start from reindexing once the model is ready
	// (the CLI's one-shot commands reindex or search explicitly).
	NoInitialReindex bool
	// IdleRelease is how long the engine waits, with no search or run
	// needing the model, before it releases the model and ONNX Runtime's
	// memory; the next search or run loads them again. 0 = never.
	IdleRelease time.Duration
	// RefreshEvery is how often the engine looks for commits made by another
	// process on the same index folder; 0 = 2 s.
	RefreshEvery time.Duration
	// Checkpoint is how often a long reindex commits; 0 = 30 s.
	Checkpoint time.Duration
	// MaxFileChunks caps the chunks indexed of one file; the rest is left
	// out and the file marked truncated. 0 = DefaultMaxFileChunks, < 0 = no cap.
	MaxFileChunks int
	// TableCap is the largest CSV or TSV file a run reads, in bytes; a
	// larger one is reported as stages.SkipLargeTable. 0 =
	// stages.DefaultTableCap, < 0 = no cap.
	TableCap int64
	// ReadOnly engines (the CLI's search and status) never create the index
	// folder or any file in it, and cannot reindex.
	ReadOnly bool
	// Index tunes the store: compaction, merges, scan codes. Zero fields
	// take index.DefaultOptions; Logger and ReadOnly come from this Config.
	Index index.Options
	// SearchMode is the ranking searches use; "" = SearchHybrid.
	SearchMode isearch.Mode

	Logger *slog.Logger
}

// Status describes the index for humans (the CLI's status command, whose
// --json prints it: every field is always there, lists empty rather than
// left out).
type Status struct {
	DataFolder  string `json:"data_folder"`
	IndexFolder string `json:"index_folder"`
	// Store is the database URL of the index with its password redacted
	// and the schema it uses, "" for the local index folder.
	Store       string    `json:"store"`
	ModelReady  bool      `json:"-"` // Status of a running engine only
	Model       string    `json:"model"`
	Files       int       `json:"files"`
	Chunks      int       `json:"chunks"`
	Tombstones  int       `json:"tombstones"`
	IndexBytes  int64     `json:"index_bytes"`
	VectorIndex string    `json:"vector_index"` // how kNN finds neighbours
	LastReindex time.Time `json:"last_reindex"`
	Reindexing  bool      `json:"reindexing"` // a reindex runs (ReadStatus: in another process)
	// What ReadStatus adds: files that could not be read (from the runs
	// that last looked at them), how the folder differs from the index,
	// and whether the index passes the checks a search makes on it.
	Failed []stages.Failure `json:"failed"`
	// Truncated are the files indexed only up to the per-file chunk cap,
	// with what part of them is searchable.
	Truncated []stages.Failure `json:"truncated"`
	// LinksOutside counts the symlinks in the folder that lead outside it
	// (never followed).
	LinksOutside int `json:"links_outside"`
	// LastRunError is why the latest reindex or update failed as a whole
	// (time, activity, error), "" when it succeeded.
	LastRunError string `json:"last_run_error"`
	// LastRunDamage says that LastRunFile cannot be read (the failures
	// of earlier runs are then unknown) and that the next run rewrites it.
	LastRunDamage string `json:"last_run_damage,omitempty"`
	// FolderProblem is why a reindex would be refused: FolderIDFile is
	// damaged or names another folder (with the fix).
	FolderProblem string      `json:"folder_problem,omitempty"`
	ChangedDisk   DiskChanges `json:"changed_on_disk"`
	// Integrity is IntegrityOK, IntegrityDamaged (Damage says what failed)
	// or "" when the index was not checked (Status of a running engine).
	Integrity string `json:"integrity"`
	Damage    string `json:"damage"`
	// Exts and Excludes are the scope a run with the same flags would use:
	// the one recorded in the index (ScopeFile), as the flags change it.
	Exts     []string `json:"exts"`
	Excludes []string `json:"excludes"`
	// ScopeDamage says that the scope record is damaged and how to record
	// it again; Exts are then the defaults and the indexed files' own.
	ScopeDamage string `json:"scope_damage,omitempty"`
	// Skipped counts, by reason, the files on disk the index holds no text
	// of (unchanged since the last run; a changed file is counted once read).
	Skipped []stages.SkipGroup `json:"skipped"`
}

// Integrity values of a Status.
const (
	// IntegrityOK: the index loaded with every check a search makes
	// (sizes and checksums of its files, their agreement, unit-length
	// vectors), or there is no index yet.
	IntegrityOK = "ok"
	// IntegrityDamaged: a check failed; search refuses the index until a
	// reindex with force rebuilds it.
	IntegrityDamaged = "damaged"
)

// IndexSize is IndexBytes for people, such as "1.5 MB".
func (s Status) IndexSize() string { return bytesize.Format(s.IndexBytes) }

// Engine serves one data folder. Create with New, then Start; Close when done.
type Engine struct {
	cfg   Config
	log   *slog.Logger
	scope atomic.Pointer[activeScope] // what the latest run (or New) resolved

	ready   chan struct{} // closed when the model and store are loaded (or failed for good)
	loadErr error
	// While a load that may succeed later is retried: the last failure,
	// failed closed at the first one, nudge asking for a try now.
	failure    atomic.Pointer[loadFailure]
	failed     chan struct{}
	failedOnce sync.Once
	nudge      chan struct{}
	version    schema.Version // of the loaded model
	embedder   *embed.Embedder
	// queries embeds search queries when the model names a query model
	// (model.Model.Queries) that could be had; nil: embedder does.
	queries    *embed.Embedder
	queryModel string // the model queries are embedded by
	store      index.Backend
	model      string
	null       isearch.NullCosine // the model's null cosine (model.Model.Null)
	// isearch.NullQueries embedded by the model: the folder's noise level
	nullQueries [][]float32
	chunking    chunk.Config // chunk.Default within the model's window
	pdf         *extract.PDFEngine

	reindexing atomic.Bool
	runs       runSlot
	idle       idleState
	// notEnabled is what the latest whole-folder run skipped for its
	// extension (SkipNotEnabled), for search's hint; nil before one.
	notEnabled atomic.Pointer[stages.SkipGroup]
	stop       context.CancelFunc
	bg         sync.WaitGroup

	waitingLogged bool                       // the initial reindex said once that it waits for another process
	waiting       atomic.Bool                // the initial reindex waits for another process's lock
	initialDue    atomic.Bool                // the initial reindex is planned and has not run yet
	initialFailed atomic.Pointer[runFailure] // the initial reindex failed; retried
	updateFailed  atomic.Pointer[runFailure] // the last update after file changes failed; retried

	// after paces retries of failed updates (time.After); tests fire them
	// by hand.
	after func(time.Duration) <-chan time.Time
}

// New checks the configuration; it loads nothing (Start does, in the background).
func New(cfg Config) (*Engine, error) {
	cfg.Logger = cmp.Or(cfg.Logger, slog.New(slog.DiscardHandler))
	data, err := CheckDataFolder(cfg.DataFolder)
	if err != nil {
		return nil, err
	}
	cfg.DataFolder = data
	if cfg.IndexFolder, err = checkIndexFolder(data, cfg.IndexFolder, cfg.ReadOnly, cfg.Store.Local()); err != nil {
		return nil, err
	}
	if err := index.CheckBackend(cfg.Store); err != nil {
		return nil, err
	}
	if cfg.Exts != nil {
		if cfg.Exts, err = normaliseExts(cfg.Exts); err != nil {
			return nil, err
		}
	}
	if len(cfg.AddExts) > 0 {
		if cfg.AddExts, err = normaliseExts(cfg.AddExts); err != nil {
			return nil, err
		}
	}
	if cfg.SearchMode, err = isearch.ParseMode(string(cfg.SearchMode)); err != nil {
		return nil, err
	}
	cfg.MaxFileChunks = cmp.Or(cfg.MaxFileChunks, DefaultMaxFileChunks)
	cfg.TableCap = cmp.Or(cfg.TableCap, stages.DefaultTableCap)
	cfg.RefreshEvery = cmp.Or(max(cfg.RefreshEvery, 0), 2*time.Second)
	if _, err := ignore.New(data, cfg.Excludes); err != nil {
		return nil, err
	}
	e := &Engine{runs: newRunSlot(), cfg: cfg, log: cfg.Logger, ready: make(chan struct{}), stop: func() {}, after: time.After,
		failed: make(chan struct{}), nudge: make(chan struct{}, 1),
		pdf: extract.NewPDFEngine(extract.PDFOptions{}, cfg.Logger)}
	// Until a run resolves it against the index's files, the watcher and
	// status use the record as the request changes it.
	rec, err := readScope(cfg.IndexFolder)
	if damage := (*ScopeDamage)(nil); errors.As(err, &damage) {
		// Search, status and list do not need it; a reindex says how to fix it.
		e.log.Warn("scope record damaged: a reindex will say how to repair it", "err", err)
	} else if err != nil {
		return nil, err
	}
	sc, _ := e.scopeRequest().resolve(rec, nil)
	e.scope.Store(newActiveScope(sc))
	return e, nil
}

// ParseExts normalises file extensions: lower case, with a leading dot,
// each once; NoExt is "", a group name (ExtGroups) its extensions. It
// refuses an extension without a reader, and an empty list.
func ParseExts(list []string) ([]string, error) {
	var out []string
	for _, e := range list {
		e = strings.ToLower(strings.TrimSpace(e))
		if e == "" {
			continue
		}
		if group, ok := ExtGroups[strings.TrimPrefix(e, ".")]; ok {
			out = appendNew(out, group...)
			continue
		}
		if e == NoExt || e == "."+NoExt {
			e = ""
		} else if !strings.HasPrefix(e, ".") {
			e = "." + e
		}
		if !extract.Supported(e) {
			return nil, fmt.Errorf("no reader for %q", e)
		}
		out = appendNew(out, e)
	}
	if len(out) == 0 {
		return nil, errors.New("no file extensions given")
	}
	return out, nil
}

// CheckDataFolder returns dir absolute with symlinks resolved, or an error
// saying whether it is missing, not a folder or not readable.
func CheckDataFolder(dir string) (string, error) {
	if dir == "" {
		return "", errors.New("data folder not set")
	}
	abs, err := filepath.Abs(dir)
	if err != nil {
		return "", err
	}
	fi, err := os.Stat(abs)
	switch {
	case errors.Is(err, os.ErrNotExist):
		return "", fmt.Errorf("data folder %s does not exist", abs)
	case err != nil:
		return "", fmt.Errorf("data folder %s: %w", abs, err)
	case !fi.IsDir():
		return "", fmt.Errorf("data folder %s is not a directory", abs)
	}
	f, err := os.Open(abs)
	if err != nil {
		return "", fmt.Errorf("data folder %s is not readable: %w", abs, err)
	}
	defer f.Close()
	if _, err := f.Readdirnames(1); err != nil && !errors.Is(err, io.EOF) {
		return "", fmt.Errorf("data folder %s is not readable: %w", abs, err)
	}
	if abs, err = filepath.EvalSymlinks(abs); err != nil {
		return "", fmt.Errorf("data folder: %w", err)
	}
	return abs, nil
}

// checkIndexFolder resolves the index folder (default <data>/index) and
// refuses one that would overwrite or swallow the user's files: the data
// folder itself, a folder containing it, or a folder of other files. It
// creates the folder unless readOnly. With a database store (local false)
// the folder holds only the engine's own files, which it also accepts.
func checkIndexFolder(data, dir string, readOnly, local bool) (string, error) {
	explicit := dir != ""
	dir, err := filepath.Abs(cmp.Or(dir, filepath.Join(data, "index")))
	if err != nil {
		return "", err
	}
	if _, err := os.Lstat(dir); errors.Is(err, fs.ErrNotExist) {
		if readOnly {
			return dir, nil
		}
		// Private: the index holds the text of every document.
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return "", fmt.Errorf("index folder: %w", err)
		}
	}
	if fi, err := os.Stat(dir); !explicit && err == nil && !fi.IsDir() {
		// A user's file named index (a text file without an extension).
		return "", fmt.Errorf("%s exists and is not a folder, so it is treated as your documents and left alone; put the index elsewhere with --index-folder DIR", dir)
	}
	resolved, err := filepath.EvalSymlinks(dir)
	var fi fs.FileInfo
	if err == nil {
		fi, err = os.Stat(resolved)
	}
	if err == nil && !fi.IsDir() {
		err = fmt.Errorf("%s is not a folder", resolved)
	}
	if err != nil {
		return "", fmt.Errorf("index folder: %w", err)
	}
	if resolved == data {
		return "", fmt.Errorf("index folder %s is the data folder: the index would overwrite your files; choose another folder with --index-folder", dir)
	}
	if confine.Within(resolved, data) {
		return "", fmt.Errorf("index folder %s contains the data folder %s: choose a folder outside it with --index-folder", dir, data)
	}
	if err := index.CheckIndexFolder(resolved); err != nil {
		if !errors.Is(err, index.ErrNotIndex) {
			return "", fmt.Errorf("index folder: %w", err)
		}
		if !local && onlyEngineFiles(resolved) {
			return resolved, nil
		}
		if !explicit {
			return "", fmt.Errorf("%s exists and is not a micro-rag-mcp index, so it is treated as your documents and left alone; put the index elsewhere with --index-folder DIR (%w)", dir, err)
		}
		return "", fmt.Errorf("index folder %s is not empty and holds no micro-rag-mcp index; give --index-folder an empty or new folder (%w)", dir, err)
	}
	return resolved, nil
}

// onlyEngineFiles reports whether dir holds nothing but what the engine
// writes beside a database store: the scope and data folder records and
// the last run.
func onlyEngineFiles(dir string) bool {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return false
	}
	for _, e := range entries {
		switch strings.TrimSuffix(e.Name(), ".tmp") {
		case ScopeFile, LastRunFile, FolderIDFile:
		default:
			return false
		}
	}
	return true
}

// Start locates (or downloads) and loads the model in the background, then
// runs the initial reindex unless NoInitialReindex. It returns at once. A
// load that fails for a reason that may pass (no network for the model's
// download, the database of --store down) is tried again with backoff.
func (e *Engine) Start(ctx context.Context) {
	ctx, e.stop = context.WithCancel(ctx)
	e.bg.Go(func() {
		e.loadErr = e.loadRetrying(ctx)
		// Set before ready: a search answered between the model loading and
		// the run starting must still know that the run is coming.
		e.initialDue.Store(e.loadErr == nil && !e.cfg.NoInitialReindex)
		close(e.ready)
		if e.loadErr != nil {
			e.log.Error("not ready: search and reindex will answer with this error", "err", e.loadErr)
			return
		}
		if e.cfg.IdleRelease > 0 {
			e.bg.Go(func() { e.releaseWhenIdle(ctx) })
		}
		if e.cfg.Watch {
			// Before the initial reindex, so changes made during it are not missed.
			e.bg.Go(func() { e.follow(ctx) })
		}
		if !e.cfg.NoInitialReindex && !e.initialReindex(ctx) {
			// Another process holds the index, or the run failed: try
			// again (while following another process's commits, so the
			// folder is indexed once the lock is free even if that process
			// died before finishing).
			e.bg.Go(func() { e.retryInitial(ctx) })
		}
		e.watch(ctx)
	})
}

// Loading that failed for a reason that may pass is tried again after
// loadRetryFirst, then after twice the previous wait up to loadRetryMax
// (the database's return is noticed within that), and sooner when a
// search or reindex asks once loadRetryFirst has passed since the last try.
const (
	loadRetryFirst = time.Second
	loadRetryMax   = 5 * time.Second
)

// loadFailure is a failed load that will be tried again.
type loadFailure struct {
	err     *LoadError
	attempt int
	retryAt time.Time
}

// Error is the load error with when it is tried again.
func (f *loadFailure) Error() string {
	le := *f.err
	le.Retry = fmt.Sprintf("Tried %d times; trying again at %s (in %s), and at the next search or reindex after that",
		f.attempt, f.retryAt.Local().Format("15:04:05"), max(0, time.Until(f.retryAt)).Round(time.Second))
	return le.Error()
}

func (f *loadFailure) Unwrap() error { return f.err }

// loadRetrying loads the model and the store, trying again while the
// failure is one that may pass; it returns nil once loaded, or the error
// that trying again cannot fix (or ctx's).
func (e *Engine) loadRetrying(ctx context.Context) error {
	wait := time.Duration(0)
	for attempt := 1; ; attempt++ {
		last := time.Now()
		err := e.load(ctx)
		var le *LoadError
		// A one-shot command (no initial reindex) reports the failure and exits.
		if err == nil || ctx.Err() != nil || !errors.As(err, &le) || !le.retry || e.cfg.NoInitialReindex {
			e.failure.Store(nil)
			return err
		}
		wait = min(max(2*wait, loadRetryFirst), loadRetryMax)
		f := &loadFailure{err: le, attempt: attempt, retryAt: last.Add(wait)}
		e.failure.Store(f)
		e.failedOnce.Do(func() { close(e.failed) })
		e.log.Warn("loading failed; trying again", "err", le, "retry_in", wait)
		timer := time.NewTimer(wait)
	waiting:
		for {
			select {
			case <-ctx.Done():
				timer.Stop()
				return ctx.Err()
			case <-timer.C:
				break waiting
			case <-e.nudge:
				if time.Since(last) >= loadRetryFirst {
					timer.Stop()
					break waiting
				}
			}
		}
	}
}

// retryInitial tries the start-up reindex again until it has run: every
// RefreshEvery while another process holds the lock, with backoff
// (nextRetry) after a failure, which IndexState reports meanwhile.
func (e *Engine) retryInitial(ctx context.Context) {
	var wait time.Duration
	for {
		if f := e.initialFailed.Load(); f != nil {
			wait = nextRetry(wait)
			e.initialFailed.Store(&runFailure{err: f.err, retryAt: time.Now().Add(wait)})
		} else {
			wait = e.cfg.RefreshEvery
		}
		select {
		case <-ctx.Done():
			return
		case <-e.after(wait):
		}
		if e.initialReindex(ctx) {
			return
		}
	}
}

// runFailure is a failed start-up reindex that will be tried again.
type runFailure struct {
	err     string
	retryAt time.Time
}

// initialReindex runs the start-up reindex and logs how it went. It
// reports false when it could not run because another process holds the
// index lock, or when it failed (the caller tries again later).
func (e *Engine) initialReindex(ctx context.Context) bool {
	res, err := e.run(ctx, ReindexRequest{}, activityInitial, nil, nil)
	e.initialDue.Store(false)
	e.initialFailed.Store(nil)
	var busy *BusyError
	if errors.As(err, &busy) && !busy.State.Indexing {
		e.waiting.Store(true)
		if !e.waitingLogged {
			e.waitingLogged = true
			e.log.Info("initial reindex waits: another process is reindexing this index; it runs once the lock is free", "err", err)
		}
		return false
	}
	e.waiting.Store(false)
	switch {
	case errors.Is(err, ErrBusy):
		e.log.Info("initial reindex skipped: a reindex in this process runs", "err", err)
	case err != nil && ctx.Err() != nil:
		e.log.Info("initial reindex cancelled; the index keeps its last commit")
	case err != nil:
		e.log.Error("initial reindex failed; trying again", "err", err)
		e.initialFailed.Store(&runFailure{err: err.Error()})
		return false
	default:
		e.log.Info("initial reindex done", "added", res.FilesAdded, "updated", res.FilesUpdated,
			"removed", res.FilesRemoved, "failed", res.FilesFailed, "chunks", res.ChunksTotal, "ms", res.ElapsedMS)
	}
	return true
}

// load loads the model (once) and opens the store. Each part is kept
// once loaded, so a retry after a store failure does not reload the model.
func (e *Engine) load(ctx context.Context) error {
	if e.embedder == nil {
		if err := e.loadModel(ctx); err != nil {
			return err
		}
	}
	store, err := e.openStore(ctx, e.version)
	if err != nil {
		return err
	}
	e.store = store
	e.log.Info("model ready", "model", e.version.Model)
	return nil
}

// loadModel locates (or downloads) the model and starts the embedder.
func (e *Engine) loadModel(ctx context.Context) error {
	start := time.Now()
	m, err := e.resolveModel()
	if err != nil {
		return err
	}
	files, err := m.Locate(e.cfg.ModelDir)
	downloaded := err != nil
	if err != nil {
		if e.cfg.ModelDir != "" || os.Getenv(model.EnvModelDir) != "" {
			return loadErr(err, fixModelDir)
		}
		e.log.Info("model not cached: downloading it once", "model", m.Name, "dir", m.Dir())
		if files, err = model.Ensure(ctx, m.Dir(), hubOf(m), e.log); err != nil {
			if ctx.Err() != nil {
				return err
			}
			return retryLoadErr(fmt.Errorf("download model: %w", err), fixDownloadOf(m))
		}
	}
	lib, err := model.ORTLibrary(e.cfg.ORTLibrary)
	var notFound *model.ORTNotFoundError
	if errors.As(err, &notFound) {
		return loadErr(errors.New(notFound.Cause()), fixORT) // the fix once, from fixORT
	}
	if err != nil {
		return loadErr(err, fixORT)
	}
	// The query model loads on the other core meanwhile: at start-up
	// nothing else runs, and it cost a fifth of a CLI search's time.
	queryLoad := make(chan *embed.Embedder, 1)
	go func() { queryLoad <- e.loadQueryModel(ctx, m, lib, downloaded) }()
	emb, err := embed.New(embed.Config{ModelPath: files.ONNX, TokenizerPath: files.Tokenizer, ORTLibrary: lib, Spec: m.Spec,
		Reloaded: func(took time.Duration) {
			e.log.Info("model loaded again after idle", "ms", took.Milliseconds())
		}})
	queries := <-queryLoad
	if err != nil {
		if queries != nil {
			queries.Close()
		}
		if errors.Is(err, embed.ErrRuntime) {
			return loadErr(err, fixORT)
		}
		return loadErr(err, fixEmbedder)
	}
	if queries != nil && queries.Dim() != emb.Dim() {
		e.log.Warn("queries are embedded by the model itself: its query model does not fit", "model", m.Name, "query_model", m.Queries,
			"err", fmt.Sprintf("its vectors have %d dimensions, the model's %d", queries.Dim(), emb.Dim()))
		queries.Close()
		queries = nil
	}
	// Chunks no longer than the model's window, less its passage prefix.
	chunking := chunk.Default
	chunking.MaxTokens = min(chunking.MaxTokens, emb.PassageTokens())
	version, err := indexVersion(m, files.ONNX, emb.Dim(), chunking)
	if err != nil {
		emb.Close()
		if queries != nil {
			queries.Close()
		}
		return loadErr(err, fixModel)
	}
	queryEmb, queryModel := emb, m.Name
	if queries != nil {
		queryEmb, queryModel = queries, m.Queries
	}
	nullQueries, err := embedNullQueries(queryEmb)
	if err != nil {
		emb.Close()
		if queries != nil {
			queries.Close()
		}
		return loadErr(err, fixEmbedder)
	}
	e.embedder, e.queries, e.queryModel, e.version, e.model, e.chunking = emb, queries, queryModel, version, version.Model, chunking
	e.null, e.nullQueries = isearch.NullCosine(m.Null), nullQueries
	ortVersion := embed.RuntimeVersion()
	e.log.Info("model loaded", "model", version.Model, "queries", queryModel, "onnxruntime", ortVersion, "ms", time.Since(start).Milliseconds())
	if advice := model.ORTAdvice(ortVersion); advice != "" {
		e.log.Warn(advice)
	}
	return nil
}

// loadQueryModel starts the embedder of m's query model (model.Model.Queries:
// the q8 file's fp32 original) from the cache, or downloads it once when
// m itself was just downloaded (a first run); a model found in place
// (unpacked offline, or given by hand) never makes it fetch anything.
// Nil when m names none or it cannot be had: m then embeds its own
// queries, as the log says. With the q8 passages, fp32 queries kept every small
// set's hybrid hit@5 and answer@5 at fp32's, where q8 queries lost 4
// questions (docs/int8.md, "Queries in fp32").
func (e *Engine) loadQueryModel(ctx context.Context, m model.Model, lib string, withModel bool) *embed.Embedder {
	if m.Queries == "" || m.User {
		return nil
	}
	qm, err := model.Lookup(m.Queries)
	if err != nil {
		e.log.Warn("queries are embedded by the model itself", "model", m.Name, "err", err)
		return nil
	}
	var files model.Files
	if e.cfg.ModelDir != "" || os.Getenv(model.EnvModelDir) != "" {
		// Model files placed by hand: the query model only from the
		// cache, never downloaded.
		files, err = model.FilesIn(qm.Dir())
	} else if files, err = qm.Locate(""); err != nil && withModel {
		e.log.Info("query model not cached: downloading it once", "model", qm.Name, "dir", qm.Dir())
		files, err = model.EnsureOnce(ctx, qm.Dir(), hubOf(qm), e.log)
	}
	if err != nil {
		e.log.Warn("queries are embedded by the model itself: its query model is not there", "model", m.Name, "query_model", qm.Name, "err", err)
		return nil
	}
	emb, err := embed.New(embed.Config{ModelPath: files.ONNX, TokenizerPath: files.Tokenizer, ORTLibrary: lib, Spec: qm.Spec,
		Reloaded: func(took time.Duration) {
			e.log.Info("query model loaded again after idle", "ms", took.Milliseconds())
		}})
	if errors.Is(err, embed.ErrRuntime) {
		return nil // the passage model's load, beside this one, reports it
	}
	if err != nil {
		e.log.Warn("queries are embedded by the model itself: its query model does not load", "model", m.Name, "query_model", qm.Name, "err", err)
		return nil
	}
	return emb
}

// queryEmbedder embeds search queries: the query model's, else the model's.
func (e *Engine) queryEmbedder() *embed.Embedder {
	if e.queries != nil {
		return e.queries
	}
	return e.embedder
}

// embedNullQueries embeds isearch.NullQueries as queries, once per model,
// in one batched call (one at a time they took a second of a CLI search).
func embedNullQueries(emb *embed.Embedder) ([][]float32, error) {
	flat, err := emb.EmbedQueries(nil, isearch.NullQueries)
	if err != nil {
		return nil, fmt.Errorf("embed the null queries: %w", err)
	}
	dim := emb.Dim()
	vecs := make([][]float32, len(isearch.NullQueries))
	for i := range vecs {
		vecs[i] = flat[i*dim : (i+1)*dim : (i+1)*dim]
	}
	return vecs, nil
}

// hubOf is where the model m is downloaded from (tests serve it locally).
var hubOf = func(m model.Model) model.Source { return m.Hub }

// fixDownloadOf is the fix for a failed download of m. The project's own
// model also comes by hand from its release page, from the release's model
// asset or from make models, and has the fp32 model as its fallback.
func fixDownloadOf(m model.Model) string {
	if !m.Hub.Release {
		return fixDownload
	}
	return fmt.Sprintf(fixBuiltModel, m.Name, cachedir.Path(), m.Hub.Page())
}

// openStore opens the index where Config.Store says.
func (e *Engine) openStore(ctx context.Context, version schema.Version) (index.Backend, error) {
	opts := e.cfg.Index
	opts.Logger, opts.ReadOnly = e.log, e.cfg.ReadOnly
	store, err := index.OpenBackend(ctx, e.storeURL(), e.namespace(), version, opts)
	if err != nil && e.cfg.Store.Local() {
		return nil, loadErr(fmt.Errorf("open index: %w", err), fixIndex)
	}
	if err != nil {
		return nil, retryLoadErr(fmt.Errorf("open index: %w", e.scrub(err)), fixStore)
	}
	if !e.cfg.Store.Local() {
		e.log.Info("index store", "store", e.cfg.Store.String())
	}
	return store, nil
}

// storeURL is where the index lives, the local folder's with its path.
func (e *Engine) storeURL() index.StoreURL { return e.cfg.Store.InFolder(e.cfg.IndexFolder) }

// namespace is the data folder's schema in a database store.
func (e *Engine) namespace() string { return index.Namespace(e.cfg.DataFolder) }

// scrub takes the store's password out of an error's message.
func (e *Engine) scrub(err error) error { return e.cfg.Store.ScrubErr(err) }

// resolveModel is the model of the configuration: the model.json of
// --model-dir (or $MICRO_RAG_MODEL_DIR) when there is one, else --model
// from the table.
func (e *Engine) resolveModel() (model.Model, error) {
	if dir := cmp.Or(e.cfg.ModelDir, os.Getenv(model.EnvModelDir)); dir != "" {
		m, found, err := model.FromDir(dir)
		if err != nil {
			return m, loadErr(err, fixModelJSON)
		}
		if found {
			if e.cfg.Model != "" && e.cfg.Model != DefaultModel {
				e.log.Warn("--model is ignored: the model folder describes its own model", "model", e.cfg.Model, "model_json", filepath.Join(dir, model.SpecName))
			}
			return m, nil
		}
	}
	m, err := model.Lookup(e.cfg.Model)
	if err != nil {
		return m, loadErr(err, fixModelName)
	}
	return m, nil
}

// IndexVersion is the version stamp of an index built with the model
// modelName from the table (one of 384 dimensions), whose weights are in
// onnxPath, and the default chunking.
func IndexVersion(modelName, onnxPath string) (schema.Version, error) {
	m, err := model.Lookup(modelName)
	if err != nil {
		return schema.Version{}, err
	}
	return indexVersion(m, onnxPath, embed.Dim, chunk.Default)
}

// indexVersion stamps an index built with m, whose weights are in onnxPath
// and whose vectors have dim floats, and chunking c. The model is also named by the hash of its ONNX file, so
// an index built with other weights (the int8 model, say) is never mixed
// with this one's vectors; a model a user describes in model.json is named
// by its spec too, since pooling and prefixes change the vectors.
func indexVersion(m model.Model, onnxPath string, dim int, c chunk.Config) (schema.Version, error) {
	sum, err := model.FileSHA256(onnxPath)
	if err != nil {
		return schema.Version{}, err
	}
	name := m.Name + " sha256:" + sum[:16]
	if m.User {
		raw, err := json.Marshal(m.Spec)
		if err != nil {
			return schema.Version{}, err
		}
		h := sha256.Sum256(raw)
		name += " spec:" + hex.EncodeToString(h[:4])
	}
	return schema.Version{
		Schema: schema.SchemaVersion, Model: name, Dim: dim,
		ChunkSize: c.Size, ChunkOverlap: c.Overlap, MaxTokens: c.MaxTokens,
	}, nil
}

// watch picks up commits made by another process on the same index folder.
func (e *Engine) watch(ctx context.Context) {
	every(ctx, e.cfg.RefreshEvery, func() {
		if changed, err := e.store.Refresh(); err != nil {
			e.log.Debug("index refresh", "err", e.scrub(err))
		} else if changed {
			e.log.Info("loaded index committed by another process")
		}
	})
}

// every calls f every d until ctx ends.
func every(ctx context.Context, d time.Duration, f func()) {
	t := time.NewTicker(d)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			f()
		}
	}
}

// loaded reports whether loading the model and the store has ended;
// loadErr says how.
func (e *Engine) loaded() bool {
	select {
	case <-e.ready:
		return true
	default:
		return false
	}
}

// WaitModel waits until the model is loaded or ctx ends. While a failed
// load waits to be tried again it returns that failure at once (with when
// the next try is) and asks for the try to come sooner.
func (e *Engine) WaitModel(ctx context.Context) error {
	if err := e.retrying(); err != nil {
		return err
	}
	select {
	case <-e.ready:
		return e.loadErr
	case <-e.failed:
		if err := e.retrying(); err != nil {
			return err
		}
		return e.WaitModel(ctx) // loaded since
	case <-ctx.Done():
		return ctx.Err()
	}
}

// retrying returns the failure of a load that will be tried again, and
// nudges that try; nil once loaded or failed for good.
func (e *Engine) retrying() error {
	f := e.failure.Load()
	if e.loaded() || f == nil {
		return nil
	}
	select {
	case e.nudge <- struct{}{}:
	default:
	}
	return f
}

// Reindex runs one incremental reindex. It fails at once with ErrBusy when
// another reindex (in this process or another) holds the index lock.
// progress may be nil.
func (e *Engine) Reindex(ctx context.Context, req ReindexRequest, progress func(pipeline.Progress)) (ReindexResult, error) {
	return e.run(ctx, req, activityReindex, nil, progress)
}

// run is one reindex: activity names it for IndexState and busy errors,
// paths (when not nil) limit it to those files and folders.
func (e *Engine) run(ctx context.Context, req ReindexRequest, activity string, paths []string, progress func(pipeline.Progress)) (ReindexResult, error) {
	res, err := e.runScrubbed(ctx, req, activity, paths, progress)
	return res, e.scrub(err)
}

func (e *Engine) runScrubbed(ctx context.Context, req ReindexRequest, activity string, paths []string, progress func(pipeline.Progress)) (ReindexResult, error) {
	start := time.Now()
	pathGlob, err := glob.Parse(req.PathGlob)
	if err != nil {
		return ReindexResult{}, err
	}
	if err := e.WaitModel(ctx); err != nil {
		if le := (*LoadError)(nil); errors.As(err, &le) {
			return ReindexResult{}, err
		}
		return ReindexResult{}, fmt.Errorf("model not ready: %w", err)
	}
	// The model, if released while idle, loads again at the first chunk
	// to embed; a run that changes nothing does not load it.
	done := e.working()
	defer done()
	run, release, err := e.runs.acquire(ctx, activity, progress)
	if err != nil {
		return ReindexResult{}, e.busy(err)
	}
	defer release()
	waited := time.Since(start)
	progress = run.track(progress)
	w, err := e.begin()
	if err != nil {
		return ReindexResult{}, err
	}
	defer w.Close()
	scope, err := e.resolveScope(w.Before())
	if err != nil {
		return ReindexResult{}, err
	}
	// Rules are read afresh each run, so a changed rule file takes effect.
	rules, err := ignore.New(e.cfg.DataFolder, scope.Excludes)
	if err != nil {
		return ReindexResult{}, err
	}
	e.reindexing.Store(true)
	defer e.reindexing.Store(false)
	folder, err := stages.OpenFolder(e.cfg.DataFolder)
	if err != nil {
		return ReindexResult{}, fmt.Errorf("data folder: %w", err)
	}
	defer folder.Close()
	cfg := e.pipelineConfig(stages.Walker{Folder: folder, IndexFolder: e.cfg.IndexFolder, Exts: scope.exts, Glob: pathGlob,
		Rules: rules, Paths: paths, TableCap: max(0, e.cfg.TableCap)}, req.Force, progress)
	res, err := pipeline.Reindex(ctx, cfg, w)
	if err != nil {
		if ctx.Err() == nil {
			w.Close() // first: it frees what the failed commit left on disk
			e.recordFailure(activity, e.scrub(err))
		}
		return ReindexResult{}, err
	}
	whole := pathGlob == nil && paths == nil
	if whole {
		e.noteNotEnabled(res.Skipped)
		e.updateFailed.Store(nil) // what a failed update missed is in now
	}
	e.recordRun(activity, cfg.Walker.InScope, res.Failures, whole)
	out := reindexResult(res, scope, time.Since(start))
	out.WaitedMS = waited.Milliseconds()
	if pathGlob != nil && res.Stats.Out(pipeline.WalkStage) == 0 && out.FilesSkipped == 0 && out.FilesRemoved == 0 {
		out.Note = fmt.Sprintf("path_glob %q matched no file in the data folder of the extensions the index covers, indexed or not: nothing was read. "+
			"The pattern is relative to the data folder (e.g. \"docs/*.md\", \"**/*.pdf\").", req.PathGlob)
	}
	e.log.Info("reindex done", "added", out.FilesAdded, "updated", out.FilesUpdated, "removed", out.FilesRemoved,
		"failed", out.FilesFailed, "skipped", out.FilesSkipped, "touched", res.FilesTouched, "embedded", res.ChunksEmbedded, "reused", res.ChunksReused,
		"chunks", out.ChunksTotal, "ms", out.ElapsedMS, "waited_ms", out.WaitedMS)
	return out, nil
}

// begin opens the index for writing; a lock held by another process is a
// busy error, and the view is refreshed to that process's commits.
func (e *Engine) begin() (index.Updater, error) {
	w, err := e.store.Begin()
	if errors.Is(err, index.ErrLocked) {
		if _, rerr := e.store.Refresh(); rerr != nil {
			e.log.Debug("index refresh", "err", e.scrub(rerr))
		}
		return nil, e.busy(&BusyError{})
	}
	return w, err
}

// pipelineConfig is one run's pipeline over the files walker finds, its
// skips counted.
func (e *Engine) pipelineConfig(walker stages.Walker, force bool, progress func(pipeline.Progress)) pipeline.Config {
	cfg := pipeline.Config{
		Walker: walker, Force: force, Chunking: e.chunking, Tokens: e.embedder.Tokenizer(), Embedder: e.embedder,
		Dim: e.embedder.Dim(), Limits: extract.DefaultLimits, PDF: e.pdf, Checkpoint: e.cfg.Checkpoint, Logger: e.log,
		MaxFileChunks: max(0, e.cfg.MaxFileChunks), Progress: progress,
	}
	skips := &stages.Skips{}
	cfg.Skips, cfg.Walker.Skipped = skips, skips.Add
	return cfg
}

// noteNotEnabled keeps what a run over the whole folder skipped because
// its format is not enabled (NotEnabled).
func (e *Engine) noteNotEnabled(skipped []stages.SkipGroup) {
	g := stages.SkipGroup{}
	if i := slices.IndexFunc(skipped, func(sg stages.SkipGroup) bool { return sg.Reason == stages.SkipNotEnabled }); i >= 0 {
		g = skipped[i] // Skips.Groups has one group per reason
	}
	e.notEnabled.Store(&g)
}

// reindexResult is what a run that took elapsed reports of res, under scope.
func reindexResult(res pipeline.Result, scope *activeScope, elapsed time.Duration) ReindexResult {
	out := ReindexResult{
		FilesAdded: res.FilesAdded, FilesUpdated: res.FilesUpdated, FilesRemoved: res.FilesRemoved,
		FilesFailed: res.FilesFailed, ChunksTotal: res.ChunksTotal, ChunksEmbedded: res.ChunksEmbedded,
		ElapsedMS: elapsed.Milliseconds(), Stats: res.Stats,
		Exts: isearch.SpelledExts(scope.Exts), Excludes: scope.Excludes, Skipped: res.Skipped,
	}
	out.FilesSkipped = stages.SkipTotal(out.Skipped)
	out.Failed, out.FilesTruncated, out.Truncated = listed(res.Failures), res.FilesTruncated, listed(res.Truncated)
	return out
}

// listed is the first MaxListedFailures of fs by path: [] in JSON, never null.
func listed(fs []stages.Failure) []stages.Failure {
	byPath := slices.SortedFunc(slices.Values(fs), func(a, b stages.Failure) int { return cmp.Compare(a.Path, b.Path) })
	return append([]stages.Failure{}, byPath[:min(len(byPath), MaxListedFailures)]...)
}

// NotEnabled is what the latest run over the whole folder skipped because
// the file's extension is not in the list though a reader exists (Count 0
// for none), so that a search that finds little can say where else the
// answer may be.
func (e *Engine) NotEnabled() stages.SkipGroup {
	g := e.notEnabled.Load()
	if g == nil {
		// No run yet in this process (a CLI search): the latest recorded.
		// A damaged record is reported by status; here it means no hint.
		lr, _ := e.readLastRun()
		g = lr.NotEnabled
	}
	if g == nil {
		return stages.SkipGroup{}
	}
	return *g
}

// Status reports what the index holds.
func (e *Engine) Status() Status {
	st := Status{DataFolder: e.cfg.DataFolder, IndexFolder: e.cfg.IndexFolder, Store: e.cfg.Store.Describe(e.namespace()), Reindexing: e.reindexing.Load()}
	if !e.loaded() || e.loadErr != nil {
		return st
	}
	st.ModelReady, st.Model = true, e.model
	if snap := e.store.Acquire(); snap != nil {
		st.Files, st.Chunks, st.Tombstones = snap.Files(), snap.Chunks(), snap.Tombstones()
		lr, _ := e.readLastRun() // a damaged record is status's to report
		st.LastReindex = lastReindex(snap.LastReindex(), lr)
		snap.Release()
	}
	if !e.cfg.Store.Local() {
		return st // the database's size is the database's to tell
	}
	// Every file counts: faiss.index, the manifest, files.json and the
	// vector and lexical segments.
	entries, _ := os.ReadDir(e.cfg.IndexFolder)
	for _, ent := range entries {
		if fi, err := ent.Info(); err == nil && fi.Mode().IsRegular() {
			st.IndexBytes += fi.Size()
		}
	}
	return st
}

// IndexErr says why the index committed on disk is not what this engine
// serves (index.Backend.OpenErr): damage (index.IsDamaged), another model's
// index (index.ErrOtherVersion), a file it could not read. It is nil while
// the model loads, and once a reindex has replaced that index.
func (e *Engine) IndexErr() error {
	if !e.loaded() || e.store == nil {
		return nil
	}
	return e.scrub(e.store.OpenErr())
}

// Close stops background work and frees the model and index.
func (e *Engine) Close() error {
	e.stop()
	e.bg.Wait()
	if err := e.pdf.Close(); err != nil {
		e.log.Warn("closing the PDF engine", "err", err)
	}
	if !e.loaded() {
		return nil
	}
	if e.store != nil {
		e.store.Close()
	}
	if e.queries != nil {
		e.queries.Close()
	}
	if e.embedder != nil {
		return e.embedder.Close()
	}
	return nil
}

// CommitID names the commit search answers from: it changes whenever a
// commit adds, changes or removes documents ("" until the index is loaded).
// Not the index's version stamp (IndexVersion), which names the model and
// chunking it was built with.
func (e *Engine) CommitID() string {
	if !e.loaded() || e.loadErr != nil || e.store == nil {
		return ""
	}
	snap := e.store.Acquire()
	if snap == nil {
		return ""
	}
	defer snap.Release()
	return fmt.Sprintf("%s/%d/%d/%d", snap.LastReindex(), snap.Files(), snap.Chunks(), snap.Tombstones())
}
