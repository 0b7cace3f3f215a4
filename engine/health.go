package engine

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// LoadError says why the model or index could not be loaded and what the
// user can do about it. Search and reindex return it once loading failed,
// so a broken install is never mistaken for "nothing matched".
type LoadError struct {
	Cause error
	Fix   string
	// Retry says when loading is tried again ("" when it is not).
	Retry string
	retry bool // the cause may pass by itself: the engine tries again
}

func (e *LoadError) Error() string {
	msg := fmt.Sprintf("the search engine could not start: %v. To fix: %s", e.Cause, e.Fix)
	if e.Retry != "" {
		msg += ". " + e.Retry
	}
	return msg
}

func (e *LoadError) Unwrap() error { return e.Cause }

// Fixes for the ways loading fails.
const (
	fixModelDir   = "point --model-dir (or $MICRO_RAG_MODEL_DIR) at a folder holding model.onnx and tokenizer.json, or unset it to use the cached model"
	fixDownload   = "let this machine reach the network once so the model can be downloaded, or pass --model-dir with a folder holding model.onnx and tokenizer.json"
	fixBuiltModel = "let this machine reach the network once so the model can be downloaded; offline, put model.onnx and tokenizer.json of %[3]s into %[2]s/models/%[1]s/, or unpack the release's asset for this model into the cache folder (mkdir -p %[2]s && tar -xzf micro-rag-mcp-VERSION-model-%[1]s.tar.gz -C %[2]s); in a source checkout, `make models` builds it from the fp32 one (scripts/quantize.sh); or pass --model all-MiniLM-L6-v2 (fp32, downloaded from the hub)"
	fixORT        = "run `make setup` to install ONNX Runtime, or pass --ort-lib with the path of libonnxruntime.so (version 1.24 or newer)"
	fixModelName  = "pass --model with one of the known names, or --model-dir with a folder holding model.onnx, tokenizer.json and a model.json"
	fixModelJSON  = "fix model.json in the model folder: {\"pooling\": \"mean\" or \"cls\", \"max_length\": 512, \"query_prefix\": \"...\", \"passage_prefix\": \"...\", \"lowercase\": true or false, \"name\": \"...\"}"
	fixModel      = "check that the model files are readable and complete; delete them to have them downloaded again, or pass --model-dir"
	fixEmbedder   = "check that model.onnx and tokenizer.json are complete (delete them to have them downloaded again) and that ONNX Runtime is 1.24 or newer"
	fixIndex      = "check that the index folder is readable and writable (--index-folder), or move it away to have it rebuilt"
	fixStore      = "check that the database of --store (or MICRO_RAG_STORE) is reachable, that the URL's user, password, database and sslmode are right, and that the role may use the schema (docs/storage-layout.md, Storage backends)"
)

func loadErr(cause error, fix string) error { return &LoadError{Cause: cause, Fix: fix} }

// retryLoadErr is a LoadError whose cause may pass (a network, a database):
// the engine tries again.
func retryLoadErr(cause error, fix string) error {
	return &LoadError{Cause: cause, Fix: fix, retry: true}
}

// Activities a run can be, as IndexState and busy errors name them.
const (
	activityInitial = "initial indexing"
	activityReindex = "reindex"
	activityWatch   = "update after file changes"
	// The initial indexing while another process holds the index lock.
	activityWaiting = "initial indexing, waiting for another process that is reindexing this index"
)

// IndexState says whether this process is indexing and how far it got.
type IndexState struct {
	Indexing     bool      `json:"indexing"`
	ModelLoading bool      `json:"model_loading,omitempty"`
	Activity     string    `json:"activity,omitempty"`
	Since        time.Time `json:"since,omitzero"`
	FilesDone    int       `json:"files_done"`
	FilesTotal   int       `json:"files_total"`
	ChunksDone   int       `json:"chunks_done"`
	ChunksTotal  int       `json:"chunks_total"`
	// Pending: the run has files left to read or chunks left to embed, so
	// search may miss what they hold. A run that finds nothing changed has
	// none; one still listing files has none known unless nothing is
	// committed at all (a first run: everything is still to come).
	Pending bool `json:"pending"`
	// What search answers from meanwhile: the last commit. Files done are
	// committed only at the next checkpoint.
	SearchableFiles  int `json:"searchable_files"`
	SearchableChunks int `json:"searchable_chunks"`
	// LastRunError is why the start-up indexing, or the last update after
	// file changes, failed, and RetryAt when it is tried again ("" and zero
	// unless it failed).
	LastRunError string    `json:"last_run_error,omitempty"`
	RetryAt      time.Time `json:"retry_at,omitzero"`
}

// Describe is a short account for people and models: "initial indexing,
// 340 of 1,200 files, running for 2m5s".
func (s IndexState) Describe() string {
	var b strings.Builder
	b.WriteString(s.Activity)
	if s.FilesTotal > 0 {
		fmt.Fprintf(&b, ", %s of %s files", Thousands(s.FilesDone), Thousands(s.FilesTotal))
	}
	if !s.Since.IsZero() {
		fmt.Fprintf(&b, ", running for %s (since %s)", time.Since(s.Since).Round(time.Second), s.Since.Local().Format("15:04:05"))
	}
	return b.String()
}

// Searchable says what search answers from while indexing runs.
func (s IndexState) Searchable() string {
	if s.SearchableFiles == 0 {
		return "nothing is committed yet, so search finds nothing until the run commits its first finished files (from 2 s in on an empty index, else at the first checkpoint: every 30 s by default)"
	}
	return fmt.Sprintf("search answers from the %s files (%s chunks) committed so far", Thousands(s.SearchableFiles), Thousands(s.SearchableChunks))
}

// Thousands writes n with thousands separators (1,200).
func Thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0 && s[i-1] != '-'; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// BusyError is ErrBusy with what is running. State is zero when another
// process holds the index.
type BusyError struct {
	State IndexState
}

func (e *BusyError) Error() string {
	if !e.State.Indexing {
		return "another process is reindexing this index; " + e.State.Searchable()
	}
	return e.State.Describe() + "; " + e.State.Searchable()
}

func (e *BusyError) Is(target error) bool { return target == ErrBusy }

// run is one reindex in progress in this process.
type run struct {
	activity string
	since    time.Time
	progress atomic.Pointer[pipeline.Progress]
}

// runSlot lets one run at a time use the index writer in this process.
// Updates after file changes queue behind any run; an explicit reindex
// waits behind such an update or the start-up indexing (a client that
// connects and reindexes at once must not be refused), and is refused as
// busy while another explicit reindex runs or waits its turn.
type runSlot struct {
	sem     chan struct{}
	current atomic.Pointer[run]
	// reindexCalled: an explicit reindex runs or waits for the slot.
	reindexCalled atomic.Bool
}

func newRunSlot() runSlot { return runSlot{sem: make(chan struct{}, 1)} }

// waitReportEvery is how often a run waiting for the slot passes on the
// progress of the run it waits for: a client that hears nothing may give
// up on a reindex call made during a long start-up indexing.
const waitReportEvery = 500 * time.Millisecond

// acquire takes the slot for a run of the given activity; release frees
// it. While it waits, waiting (if not nil) gets the running run's progress.
func (s *runSlot) acquire(ctx context.Context, activity string, waiting func(pipeline.Progress)) (r *run, release func(), err error) {
	if activity != activityReindex {
		return s.take(ctx, activity, waiting)
	}
	if !s.reindexCalled.CompareAndSwap(false, true) {
		return nil, nil, &BusyError{State: s.reindexState()}
	}
	r, free, err := s.take(ctx, activity, waiting)
	if err != nil {
		s.reindexCalled.Store(false)
		return nil, nil, err
	}
	return r, func() { free(); s.reindexCalled.Store(false) }, nil
}

func (s *runSlot) take(ctx context.Context, activity string, waiting func(pipeline.Progress)) (r *run, release func(), err error) {
	take := func() (*run, func(), error) {
		r := &run{activity: activity, since: time.Now()}
		s.current.Store(r)
		return r, func() { s.current.Store(nil); <-s.sem }, nil
	}
	select {
	case s.sem <- struct{}{}:
		return take()
	default:
	}
	if cur := s.current.Load(); activity != activityWatch && cur != nil && !queuesBehind(activity, cur.activity) {
		return nil, nil, &BusyError{State: cur.state()}
	}
	// Behind an update after file changes (short) or the start-up indexing,
	// or an update behind anything.
	tick := time.NewTicker(waitReportEvery)
	defer tick.Stop()
	for {
		select {
		case s.sem <- struct{}{}:
			return take()
		case <-ctx.Done():
			return nil, nil, context.Cause(ctx)
		case <-tick.C:
			if cur := s.current.Load(); waiting != nil && cur != nil {
				p := pipeline.Progress{}
				if q := cur.progress.Load(); q != nil {
					p = *q
				}
				p.WaitingFor = cur.activity
				waiting(p)
			}
		}
	}
}

// reindexState is what a second reindex call is told: the explicit
// reindex running, or the run it waits for.
func (s *runSlot) reindexState() IndexState {
	cur := s.current.Load()
	if cur == nil {
		return IndexState{Indexing: true, Activity: activityReindex}
	}
	if cur.activity == activityReindex {
		return cur.state()
	}
	return IndexState{Indexing: true, Activity: activityReindex + ", waiting for the " + cur.activity + " to finish"}
}

// queuesBehind reports whether a run of activity waits for a running one
// of activity cur instead of being refused.
func queuesBehind(activity, cur string) bool {
	return cur == activityWatch || (activity == activityReindex && cur == activityInitial)
}

func (r *run) state() IndexState {
	st := IndexState{Indexing: true, Activity: r.activity, Since: r.since}
	if p := r.progress.Load(); p != nil {
		st.FilesDone, st.FilesTotal, st.ChunksDone, st.ChunksTotal = p.FilesDone, p.FilesTotal, p.ChunksDone, p.ChunksTotal
		st.Pending = p.BytesDone < p.BytesTotal || p.ChunksDone < p.ChunksTotal
	}
	return st
}

// track records progress for IndexState and passes it on to report.
func (r *run) track(report func(pipeline.Progress)) func(pipeline.Progress) {
	return func(p pipeline.Progress) {
		r.progress.Store(&p)
		if report != nil {
			report(p)
		}
	}
}

// IndexState says whether a reindex runs in this process and how far it is.
func (e *Engine) IndexState() IndexState {
	if r := e.runs.current.Load(); r != nil {
		st := r.state()
		e.addSearchable(&st)
		if r.progress.Load() == nil && st.SearchableChunks == 0 {
			st.Pending = true
		}
		return st
	}
	if e.waiting.Load() {
		st := IndexState{Indexing: true, Activity: activityWaiting, Pending: true}
		e.addSearchable(&st)
		return st
	}
	if f := e.initialFailed.Load(); f != nil {
		// Until the retry succeeds, what is searchable may lack any file.
		st := IndexState{Activity: activityInitial + " failed", Pending: true, LastRunError: f.err, RetryAt: f.retryAt}
		e.addSearchable(&st)
		return st
	}
	if f := e.updateFailed.Load(); f != nil {
		st := IndexState{Activity: activityWatch + " failed", Pending: true, LastRunError: f.err, RetryAt: f.retryAt}
		e.addSearchable(&st)
		return st
	}
	if e.initialDue.Load() {
		// About to start: pending only when nothing is committed yet.
		st := IndexState{Indexing: true, Activity: activityInitial}
		e.addSearchable(&st)
		st.Pending = st.SearchableChunks == 0
		return st
	}
	return IndexState{ModelLoading: !e.loaded()}
}

// addSearchable fills in what the current snapshot holds.
func (e *Engine) addSearchable(st *IndexState) {
	if !e.loaded() || e.store == nil {
		return
	}
	if snap := e.store.Acquire(); snap != nil {
		st.SearchableFiles, st.SearchableChunks = snap.Files(), snap.Chunks()
		snap.Release()
	}
}

// busy fills in what is searchable when err is a BusyError.
func (e *Engine) busy(err error) error {
	var be *BusyError
	if errors.As(err, &be) {
		e.addSearchable(&be.State)
	}
	return err
}

// modelFailed returns the load error once loading has failed, nil while the
// model is loading or after it loaded.
func (e *Engine) modelFailed() error {
	if e.loaded() {
		return e.loadErr
	}
	return e.retrying()
}
