// Package embed turns text into sentence embeddings with ONNX Runtime for
// BERT-style models (model.Models, or a model.json a user brings), matching
// the reference: WordPiece ids truncated at the model's length, mean pooling
// over the attention mask or the [CLS] vector, L2 normalisation; queries and
// passages get the model's prefixes.
//
// It is the only package that talks to ONNX Runtime (cgo); the runtime is
// loaded once per process.
package embed

import (
	"bytes"
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	ort "github.com/yalue/onnxruntime_go"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
)

// Dim is the length of one embedding of the default model (and of
// bge-small-en); Embedder.Dim is the model's own.
const Dim = 384

// DefaultMaxBatch is the largest number of sequences sent to one Run, and
// the batch a caller fills before calling Embed (BatchSize).
const DefaultMaxBatch = 64

// Config says where the files are and how hard to run.
type Config struct {
	// ModelPath and TokenizerPath name model.onnx and tokenizer.json;
	// empty means fp32 all-MiniLM-L6-v2's (model.FP32Name), the reference
	// the tests hold to sentence-transformers, not the server's default
	// model (the engine names its model's files).
	ModelPath, TokenizerPath string
	// ORTLibrary is libonnxruntime.so (1.24 or newer); empty means
	// model.ORTLibrary(""). Only the first Embedder of a process loads it.
	ORTLibrary string
	// Threads is ONNX Runtime's intra-op thread count; 0 means NumCPU.
	Threads int
	// MaxBatch caps the sequences per Run; 0 means DefaultMaxBatch, or 1
	// for a dynamically quantised model (see New).
	MaxBatch int
	// Spec is how the model runs (pooling, prefixes, length); the zero
	// value means all-MiniLM-L6-v2's (fp32 and int8 files alike).
	Spec model.Spec
	// Reloaded, when set, is told how long creating the session again
	// after a Release took (for the log).
	Reloaded func(took time.Duration)
}

// Embedder owns one ONNX Runtime session. Its methods are safe for
// concurrent use and do not wait for each other: each call takes its own
// buffers, and the session's Run is goroutine-safe. So a one-text search
// query runs beside a reindex's batch instead of queueing behind it.
// Release gives the session's memory back while idle; the next call
// creates it again. Call Close when done.
type Embedder struct {
	tok        *tokenizer.Tokenizer
	cfg        Config      // with defaults, to create the session again after Release
	modelFile  os.FileInfo // of cfg.ModelPath when New read it
	inNames    []string
	outName    string
	session    *ort.DynamicAdvancedSession // nil after Release until the next call
	loads      atomic.Int64                // sessions created, the first included
	hasTypes   bool                        // the model takes token_type_ids
	maxBatch   int                         // sequences per Run
	parallel   int                         // Runs at once within one call
	batch      int                         // texts per Embed call a caller should gather
	spec       model.Spec
	dim        int // length of one embedding: the model's hidden size
	runPenalty int // a Run's fixed cost, in padded tokens (see plan)

	mu        sync.RWMutex           // Close, Release and a session's creation take it for writing; calls for reading
	beforeRun atomic.Pointer[func()] // tests: called just before each ONNX Runtime call
	closed    bool
	scratchs  sync.Pool // *scratch
}

// scratch holds one call's buffers, reused through the pool and grown to
// the largest batch seen.
type scratch struct {
	flat   []int32   // token ids of all texts of one call
	starts []int     // where each text begins in flat
	seqs   [][]int32 // views into flat
	order  []int     // sequence indices, longest first
	runs   []int     // run boundaries in order, from plan
	cost   []int     // plan scratch
	prev   []int     // plan scratch
	ids    []int64
	mask   []int64
	types  []int64 // always zero: single-segment input
	hidden []float32
	sum    []float32
}

// ErrRuntime is wrapped by every error of loading the ONNX Runtime
// library itself, as apart from the model or the tokenizer.
var ErrRuntime = errors.New("embed: loading ONNX Runtime")

var ortInit struct {
	once sync.Once
	lib  string
	err  error
}

// initORT loads the runtime once per process; a later call naming another
// library is an error rather than a silent mismatch.
func initORT(lib string) error {
	ortInit.once.Do(func() {
		ortInit.lib = lib
		ort.SetSharedLibraryPath(lib)
		// Warnings such as unused initialisers are noise for our users;
		// errors still reach stderr.
		ortInit.err = ort.InitializeEnvironment(ort.WithLogLevelError())
		if ortInit.err != nil {
			ortInit.err = fmt.Errorf("%w from %s: %w", ErrRuntime, lib, ortInit.err)
		}
	})
	if ortInit.err != nil {
		return ortInit.err
	}
	if lib != ortInit.lib {
		return fmt.Errorf("embed: ONNX Runtime already loaded from %s, cannot switch to %s", ortInit.lib, lib)
	}
	return nil
}

// New loads the tokenizer and the model and creates the session.
func New(cfg Config) (*Embedder, error) {
	fp32, _ := model.Lookup(model.FP32Name)
	if cfg.ModelPath == "" || cfg.TokenizerPath == "" {
		f, err := fp32.Locate("")
		if err != nil {
			return nil, fmt.Errorf("%w (run `make setup`, or set ModelPath and TokenizerPath)", err)
		}
		cfg.ModelPath = cmp.Or(cfg.ModelPath, f.ONNX)
		cfg.TokenizerPath = cmp.Or(cfg.TokenizerPath, f.Tokenizer)
	}
	lib, err := model.ORTLibrary(cfg.ORTLibrary)
	if err != nil {
		return nil, err
	}
	cfg.Threads = cmp.Or(max(cfg.Threads, 0), runtime.NumCPU())
	batch := cmp.Or(max(cfg.MaxBatch, 0), DefaultMaxBatch)
	if cfg.MaxBatch <= 0 {
		cfg.MaxBatch = DefaultMaxBatch
		// A dynamically quantised model scales each activation tensor by
		// its largest value across the whole batch, so a text's vector
		// would depend on its batch mates (up to 2% of cosine measured);
		// alone, it matches the reference, and ran faster here too.
		q, err := dynamicQuant(cfg.ModelPath)
		if err != nil {
			return nil, fmt.Errorf("embed: %w", err)
		}
		if q {
			cfg.MaxBatch = 1
		}
	}
	// One sequence per Run: the cores go to Runs side by side, each Run
	// on one thread (ONNX Runtime's pool would sit mostly idle).
	parallel := 1
	if cfg.MaxBatch == 1 {
		parallel, cfg.Threads = cfg.Threads, 1
	}
	cfg.Spec = cmp.Or(cfg.Spec, fp32.Spec)
	if err := cfg.Spec.Check(); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	tok, err := tokenizer.Load(cfg.TokenizerPath)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if lc := cfg.Spec.Lowercase; lc != nil && *lc != tok.Lowercase() {
		return nil, fmt.Errorf("embed: the model expects lowercase=%v but %s says lowercase=%v: wrong tokenizer.json?", *lc, cfg.TokenizerPath, tok.Lowercase())
	}
	if err := initORT(lib); err != nil {
		return nil, err
	}
	inNames, outName, dim, err := discoverNames(cfg.ModelPath)
	if err != nil {
		return nil, err
	}
	modelFile, err := os.Stat(cfg.ModelPath)
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	s, err := newSession(cfg, inNames, outName)
	if err != nil {
		return nil, err
	}
	e := &Embedder{
		modelFile:  modelFile,
		tok:        tok,
		cfg:        cfg,
		inNames:    inNames,
		outName:    outName,
		session:    s,
		hasTypes:   len(inNames) == 3,
		maxBatch:   cfg.MaxBatch,
		parallel:   parallel,
		batch:      batch,
		spec:       cfg.Spec,
		dim:        dim,
		runPenalty: 128,
	}
	e.loads.Store(1)
	return e, nil
}

// newSession creates the ONNX Runtime session for cfg's model.
func newSession(cfg Config, inNames []string, outName string) (*ort.DynamicAdvancedSession, error) {
	opts, err := ort.NewSessionOptions()
	if err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	defer opts.Destroy()
	if err := opts.SetIntraOpNumThreads(cfg.Threads); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	if err := opts.SetInterOpNumThreads(1); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	// Idle pool threads would otherwise spin for work, burning the cores the
	// extractors and chunker need (and measured no faster here with 2 cores
	// shared among the pipeline's stages).
	if err := opts.AddSessionConfigEntry("session.intra_op.allow_spinning", "0"); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	// Shapes change with every batch; memory patterns only help fixed ones.
	if err := opts.SetMemPattern(false); err != nil {
		return nil, fmt.Errorf("embed: %w", err)
	}
	s, err := ort.NewDynamicAdvancedSession(cfg.ModelPath, inNames, []string{outName}, opts)
	if err != nil {
		return nil, fmt.Errorf("embed: creating session for %s: %w", cfg.ModelPath, err)
	}
	return s, nil
}

// dynamicQuant reports whether the ONNX file at path uses the
// DynamicQuantizeLinear operator (its name is stored as plain bytes).
func dynamicQuant(path string) (bool, error) {
	f, err := os.Open(path)
	if err != nil {
		return false, err
	}
	defer f.Close()
	op := []byte("DynamicQuantizeLinear")
	buf := make([]byte, 1<<20)
	keep := 0 // bytes carried over so a name across two reads is found
	for {
		n, err := f.Read(buf[keep:])
		valid := keep + n
		if bytes.Contains(buf[:valid], op) {
			return true, nil
		}
		if err == io.EOF {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		keep = min(len(op)-1, valid)
		copy(buf, buf[valid-keep:valid])
	}
}

// discoverNames checks the model's signature and returns its inputs in the
// order Embed feeds them (input_ids, attention_mask[, token_type_ids]) and
// the token-level output and its hidden size. The signature is read from
// the file itself; one the reader cannot parse is asked of onnxruntime.
func discoverNames(path string) ([]string, string, int, error) {
	ins, outs, err := readGraphIO(path)
	if err != nil {
		if ins, outs, err = sessionGraphIO(path); err != nil {
			return nil, "", 0, fmt.Errorf("embed: reading %s: %w", path, err)
		}
	}
	byName := map[string]graphValue{}
	for _, in := range ins {
		byName[in.Name] = in
	}
	names := []string{"input_ids", "attention_mask", "token_type_ids"}
	for i, n := range names {
		in, ok := byName[n]
		if !ok {
			if n == "token_type_ids" {
				names = names[:i] // some exports drop it; it is all zeros anyway
				break
			}
			return nil, "", 0, fmt.Errorf("embed: %s has no input %q (inputs: %s)", path, n, valueNames(ins))
		}
		if in.ElemType != onnxInt64 {
			return nil, "", 0, fmt.Errorf("embed: input %q is of ONNX type %d, want int64", n, in.ElemType)
		}
	}
	if len(ins) != len(names) {
		return nil, "", 0, fmt.Errorf("embed: %s has unexpected inputs %s", path, valueNames(ins))
	}
	var out *graphValue
	for i := range outs {
		o := &outs[i]
		if o.ElemType == onnxFloat && len(o.Dims) == 3 && (out == nil || o.Name == "last_hidden_state") {
			out = o
		}
	}
	if out == nil {
		return nil, "", 0, fmt.Errorf("embed: %s has no [batch, seq, hidden] float output (outputs: %s)", path, valueNames(outs))
	}
	dim := int(out.Dims[2])
	if dim <= 0 {
		return nil, "", 0, fmt.Errorf("embed: output %q of %s has no fixed hidden size (shape %v)", out.Name, path, out.Dims)
	}
	return names, out.Name, dim, nil
}

// sessionGraphIO is readGraphIO by way of an onnxruntime session.
func sessionGraphIO(path string) (ins, outs []graphValue, err error) {
	oins, oouts, err := ort.GetInputOutputInfo(path)
	if err != nil {
		return nil, nil, err
	}
	convert := func(infos []ort.InputOutputInfo) []graphValue {
		vs := make([]graphValue, len(infos))
		for i, info := range infos {
			vs[i] = graphValue{Name: info.Name, Dims: info.Dimensions}
			if info.OrtValueType == ort.ONNXTypeTensor {
				vs[i].ElemType = int32(info.DataType)
			}
		}
		return vs
	}
	return convert(oins), convert(oouts), nil
}

// valueNames lists vs's names for an error.
func valueNames(vs []graphValue) string {
	names := make([]string, len(vs))
	for i, v := range vs {
		names[i] = v.Name
	}
	return fmt.Sprintf("%q", names)
}

// RuntimeVersion is the loaded ONNX Runtime's version, such as "1.24.3";
// empty before the first New has loaded the library.
func RuntimeVersion() string {
	if !ort.IsInitialized() {
		return ""
	}
	return ort.GetVersion()
}

// Tokenizer is the embedder's tokenizer (read-only, safe to share).
func (e *Embedder) Tokenizer() *tokenizer.Tokenizer { return e.tok }

// Dim is the length of one embedding.
func (e *Embedder) Dim() int { return e.dim }

// BatchSize is how many texts one Embed call should carry: Config.MaxBatch
// (DefaultMaxBatch unless set). A dynamically quantised model still runs
// them one per Run; gathering them pays the per-call cost once.
func (e *Embedder) BatchSize() int { return e.batch }

// MaxLen is the most ids one sequence may have, [CLS] and [SEP] included.
func (e *Embedder) MaxLen() int { return e.spec.MaxLength }

// PassageTokens is how many ids of MaxLen a passage may fill before the
// passage prefix takes its share; a chunker keeps chunks within it.
func (e *Embedder) PassageTokens() int {
	if e.spec.PassagePrefix == "" {
		return e.spec.MaxLength
	}
	return max(e.spec.MaxLength-e.tok.Count(e.spec.PassagePrefix), 3)
}

// Close releases the session. Calls after Close fail.
func (e *Embedder) Close() error { return e.drop(true) }

// Release destroys the session, and with it the model's weights and ONNX
// Runtime's arena, after the calls running now return. The tokenizer
// stays; the next call creates the session again (Loads counts it), which
// costs what loading the model costs. Releasing twice is harmless.
func (e *Embedder) Release() error { return e.drop(false) }

// drop destroys the session once the calls running now return, unless the
// embedder is closed already; closing marks it closed.
func (e *Embedder) drop(closing bool) error {
	e.mu.Lock() // waits for running calls
	defer e.mu.Unlock()
	if e.closed {
		return nil
	}
	e.closed = closing
	return e.destroySession()
}

// Loaded reports whether the session exists (false after Release until
// the next call).
func (e *Embedder) Loaded() bool {
	e.mu.RLock()
	defer e.mu.RUnlock()
	return e.session != nil
}

// Loads is how many sessions the embedder has created: 1 from New, and one
// more for each first call after a Release.
func (e *Embedder) Loads() int64 { return e.loads.Load() }

// destroySession frees the session and returns the C heap it leaves free
// to the system. Call with e.mu held for writing.
func (e *Embedder) destroySession() error {
	if e.session == nil {
		return nil
	}
	err := e.session.Destroy()
	e.session = nil
	// The calls' buffers go too (up to 25 MB for a batch of long texts).
	e.scratchs = sync.Pool{}
	trimCHeap()
	return err
}

// sameModelFile refuses to create the session again from a model file that
// changed since New: its vectors would not match the ones already made.
func (e *Embedder) sameModelFile() error {
	now, err := os.Stat(e.cfg.ModelPath)
	if err != nil {
		return fmt.Errorf("embed: loading the model again: %w", err)
	}
	if now.Size() != e.modelFile.Size() || !now.ModTime().Equal(e.modelFile.ModTime()) {
		return fmt.Errorf("embed: %s changed since it was first loaded, so its vectors would not match the index's; restart the server", e.cfg.ModelPath)
	}
	return nil
}

// readLock takes e.mu for reading with a session ready, creating it again
// after a Release. The caller unlocks with e.mu.RUnlock. A closed embedder
// is locked as it is: embed reports it.
func (e *Embedder) readLock() error {
	for {
		e.mu.RLock()
		if e.session != nil || e.closed {
			return nil
		}
		e.mu.RUnlock()
		e.mu.Lock()
		if e.session == nil && !e.closed {
			start := time.Now()
			if err := e.sameModelFile(); err != nil {
				e.mu.Unlock()
				return err
			}
			s, err := newSession(e.cfg, e.inNames, e.outName)
			if err != nil {
				e.mu.Unlock()
				return err
			}
			e.session = s
			e.loads.Add(1)
			if e.cfg.Reloaded != nil {
				e.cfg.Reloaded(time.Since(start))
			}
		}
		e.mu.Unlock()
		// A Release may come between Unlock and RLock: look again.
	}
}

// Embed appends len(texts)*e.Dim() floats to dst, the L2-normalised embedding of
// each passage in order (after the model's passage prefix), and returns the
// extended slice. dst is owned by the caller and may be reused across calls
// (pass dst[:0]). Texts longer than MaxLen word pieces are truncated, as
// sentence-transformers does. Any number of texts is fine; they are run in
// batches of similar length so padding stays small.
func (e *Embedder) Embed(dst []float32, texts []string) ([]float32, error) {
	return e.embedTexts(context.Background(), dst, texts, e.spec.PassagePrefix)
}

// EmbedContext is Embed that stops when ctx ends: the ONNX Runtime call
// under way is told to terminate and no further one starts, so it returns
// within about one node of the model rather than after every Run of the
// call. The error then wraps context.Cause(ctx) (errors.Is finds it); dst
// is returned as it came. The embedder stays usable.
func (e *Embedder) EmbedContext(ctx context.Context, dst []float32, texts []string) ([]float32, error) {
	return e.embedTexts(ctx, dst, texts, e.spec.PassagePrefix)
}

// EmbedQuery appends the embedding of one search query, after the model's
// query prefix (bge's retrieval instruction), to dst.
func (e *Embedder) EmbedQuery(dst []float32, query string) ([]float32, error) {
	return e.embedTexts(context.Background(), dst, []string{query}, e.spec.QueryPrefix)
}

// EmbedQueries appends the embeddings of several queries, in order, run in
// batches as Embed's passages are.
func (e *Embedder) EmbedQueries(dst []float32, queries []string) ([]float32, error) {
	return e.embedTexts(context.Background(), dst, queries, e.spec.QueryPrefix)
}

func (e *Embedder) embedTexts(ctx context.Context, dst []float32, texts []string, prefix string) ([]float32, error) {
	if err := e.readLock(); err != nil {
		return dst, err
	}
	defer e.mu.RUnlock()
	sc := e.scratch()
	defer e.scratchs.Put(sc)
	sc.flat, sc.starts = sc.flat[:0], sc.starts[:0]
	for _, t := range texts {
		sc.starts = append(sc.starts, len(sc.flat))
		if prefix != "" {
			t = prefix + t
		}
		sc.flat = e.tok.Encode(sc.flat, t, e.spec.MaxLength)
	}
	// Views are taken only now: Encode may have moved flat.
	sc.seqs = sc.seqs[:0]
	for i, s := range sc.starts {
		end := len(sc.flat)
		if i+1 < len(sc.starts) {
			end = sc.starts[i+1]
		}
		sc.seqs = append(sc.seqs, sc.flat[s:end])
	}
	return e.embed(ctx, sc, dst, sc.seqs)
}

func (e *Embedder) scratch() *scratch {
	if sc, ok := e.scratchs.Get().(*scratch); ok {
		return sc
	}
	return &scratch{}
}

// EmbedTokens is Embed for texts already tokenised with Tokenizer().Encode
// (each sequence holds [CLS] ... [SEP], at most MaxLen ids; no prefix is
// added).
// It appends to the caller-owned dst like Embed.
func (e *Embedder) EmbedTokens(dst []float32, ids [][]int32) ([]float32, error) {
	if err := e.readLock(); err != nil {
		return dst, err
	}
	defer e.mu.RUnlock()
	sc := e.scratch()
	defer e.scratchs.Put(sc)
	return e.embed(context.Background(), sc, dst, ids)
}

// embed runs seqs through the model with sc's buffers, stopping when ctx
// ends. Call with e.mu held for reading.
func (e *Embedder) embed(ctx context.Context, sc *scratch, dst []float32, seqs [][]int32) ([]float32, error) {
	if e.closed {
		return dst, errors.New("embed: embedder is closed")
	}
	for i, s := range seqs {
		if len(s) == 0 || len(s) > e.spec.MaxLength {
			return dst, fmt.Errorf("embed: sequence %d has %d ids, want 1..%d", i, len(s), e.spec.MaxLength)
		}
	}
	base := len(dst)
	dim := e.dim
	dst = slices.Grow(dst, len(seqs)*dim)[:base+len(seqs)*dim]
	out := dst[base:]

	sc.order = sc.order[:0]
	for i := range seqs {
		sc.order = append(sc.order, i)
	}
	slices.SortStableFunc(sc.order, func(a, b int) int { return len(seqs[b]) - len(seqs[a]) })
	e.plan(sc, seqs)
	opts, release, err := runOptions(ctx)
	if err != nil {
		return dst[:base], err
	}
	defer release()
	if err := e.runAll(ctx, opts, sc, seqs, out); err != nil {
		if ctx.Err() != nil {
			return dst[:base], stopped(ctx) // a Run was terminated, or none started
		}
		return dst[:base], err
	}
	return dst, nil
}

// runAll makes the Runs sc.runs plans, up to e.parallel of them at once,
// each worker with its own buffers (the first uses sc's). A Run of one
// sequence gets little from ONNX Runtime's second thread, so a one-per-Run
// model gets the cores by running Runs side by side instead.
func (e *Embedder) runAll(ctx context.Context, opts *ort.RunOptions, sc *scratch, seqs [][]int32, out []float32) error {
	runs := len(sc.runs) - 1
	workers := min(e.parallel, runs)
	var next atomic.Int64 // the next run to take
	work := func(wsc *scratch) error {
		for {
			r := int(next.Add(1)) - 1
			if r >= runs {
				return nil
			}
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if err := e.run(opts, wsc, seqs, sc.order[sc.runs[r]:sc.runs[r+1]], out); err != nil {
				next.Store(int64(runs)) // the others stop after their Run
				return err
			}
		}
	}
	if workers <= 1 {
		return work(sc)
	}
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wsc := e.scratch()
		wg.Go(func() {
			defer e.scratchs.Put(wsc)
			errs[w] = work(wsc)
		})
	}
	errs[0] = work(sc)
	wg.Wait()
	return errors.Join(errs...)
}

// stopped is the error of a call that ctx stopped.
func stopped(ctx context.Context) error {
	return fmt.Errorf("embed: stopped: %w", context.Cause(ctx))
}

// runOptions returns the options for one call's Runs: when ctx can end,
// options of that call alone whose terminate flag ctx's end sets, so a
// Run under way stops soon after, and neither a query beside it nor a
// later call (nor the session created again after a Release) sees the
// flag. release must be called once the Runs are over.
func runOptions(ctx context.Context) (opts *ort.RunOptions, release func(), err error) {
	if ctx.Done() == nil {
		return nil, func() {}, nil
	}
	opts, err = ort.NewRunOptions()
	if err != nil {
		return nil, nil, fmt.Errorf("embed: %w", err)
	}
	terminated := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(terminated)
		opts.Terminate() // fails only on destroyed options, which it never sees
	})
	return opts, func() {
		if !stop() {
			<-terminated // Terminate may be running: let it finish before Destroy
		}
		opts.Destroy()
	}, nil
}

// maxRunAttention bounds a Run's sequences × padded length²: the size of
// one layer's attention scores per head, which is what ONNX Runtime's
// working set grows with (12 heads × 4 bytes: 48 MB at this bound). 64
// sequences of 256 ids are 4 times it, and took the process past 600 MB
// RSS while embedding; 16 of them, or 64 of 128 ids, fit.
const maxRunAttention = 16 * 256 * 256

// plan cuts sc.order (longest first) into runs of at most maxBatch sequences
// and maxRunAttention, each padded to its first (longest) member, minimising
// padded tokens plus a fixed cost per Run. Without it, one long text would
// pad a batch of short ones to 256. Result: sc.runs holds the boundaries,
// from 0 to len(order).
func (e *Embedder) plan(sc *scratch, seqs [][]int32) {
	n := len(sc.order)
	sc.cost = grow(sc.cost, n+1)
	sc.prev = grow(sc.prev, n+1) // prev[j]: start of the last run ending at j
	sc.cost[0] = 0
	for j := 1; j <= n; j++ {
		sc.cost[j] = math.MaxInt
		for i := j - 1; i >= 0 && j-i <= e.maxBatch; i-- {
			l := len(seqs[sc.order[i]])
			if j-i > 1 && (j-i)*l*l > maxRunAttention {
				break // earlier starts are longer still
			}
			c := sc.cost[i] + (j-i)*l + e.runPenalty
			if c < sc.cost[j] {
				sc.cost[j], sc.prev[j] = c, i
			}
		}
	}
	sc.runs = sc.runs[:0]
	for j := n; j > 0; j = sc.prev[j] {
		sc.runs = append(sc.runs, j)
	}
	sc.runs = append(sc.runs, 0)
	slices.Reverse(sc.runs)
}

// run embeds the sequences idx (longest first) in one ONNX Runtime call
// under opts (nil: the defaults) and writes each pooled, normalised vector
// to its slot in out.
func (e *Embedder) run(opts *ort.RunOptions, sc *scratch, seqs [][]int32, idx []int, out []float32) error {
	b, l := len(idx), len(seqs[idx[0]])
	n := b * l
	sc.ids = grow(sc.ids, n)
	sc.mask = grow(sc.mask, n)
	sc.types = grow(sc.types, n)
	dim := e.dim
	sc.hidden = grow(sc.hidden, n*dim)
	sc.sum = grow(sc.sum, dim)
	for r, i := range idx {
		s := seqs[i]
		row, mrow := sc.ids[r*l:(r+1)*l], sc.mask[r*l:(r+1)*l]
		for t, id := range s {
			row[t], mrow[t] = int64(id), 1
		}
		clear(row[len(s):])
		clear(mrow[len(s):])
	}

	shape := ort.NewShape(int64(b), int64(l))
	var vals []ort.Value
	defer func() {
		for _, v := range vals {
			v.Destroy()
		}
	}()
	inputs := [][]int64{sc.ids, sc.mask, sc.types}
	if !e.hasTypes {
		inputs = inputs[:2]
	}
	for _, buf := range inputs {
		t, err := ort.NewTensor(shape, buf)
		if err != nil {
			return fmt.Errorf("embed: %w", err)
		}
		vals = append(vals, t)
	}
	hid, err := ort.NewTensor(ort.NewShape(int64(b), int64(l), int64(dim)), sc.hidden)
	if err != nil {
		return fmt.Errorf("embed: %w", err)
	}
	vals = append(vals, hid)
	if hook := e.beforeRun.Load(); hook != nil {
		(*hook)()
	}
	if err := e.session.RunWithOptions(vals[:len(vals)-1], vals[len(vals)-1:], opts); err != nil {
		return fmt.Errorf("embed: %w", err)
	}

	for r, i := range idx {
		v, hidden := out[i*dim:(i+1)*dim], sc.hidden[r*l*dim:]
		if e.spec.Pooling == model.PoolCLS {
			normalize(v, hidden[:dim])
		} else {
			pool(v, hidden, len(seqs[i]), sc.sum)
		}
	}
	return nil
}

// normalize writes x, L2-normalised, to v.
func normalize(v, x []float32) {
	var sq float64
	for _, f := range x {
		sq += float64(f) * float64(f)
	}
	scale := 1 / max(math.Sqrt(sq), 1e-12)
	for k, f := range x {
		v[k] = float32(float64(f) * scale)
	}
}

// pool writes the mean of the first n token vectors of hidden (the unmasked
// ones: padding always follows them), L2-normalised, to v.
func pool(v, hidden []float32, n int, sum []float32) {
	dim := len(v)
	sum = sum[:dim]
	copy(sum, hidden[:dim])
	for t := 1; t < n; t++ {
		tok := hidden[t*dim : (t+1)*dim]
		for k := range sum {
			sum[k] += tok[k]
		}
	}
	var sq float64
	for _, x := range sum {
		sq += float64(x) * float64(x)
	}
	// Dividing by n before normalising changes nothing but rounding; the
	// norm floor mirrors torch.nn.functional.normalize's eps.
	norm := math.Sqrt(sq) / float64(n)
	scale := 1 / (float64(n) * max(norm, 1e-12))
	for k, x := range sum {
		v[k] = float32(float64(x) * scale)
	}
}

// grow returns buf with length n, reallocating only when capacity is short.
func grow[T any](buf []T, n int) []T {
	if cap(buf) < n {
		return make([]T, n)
	}
	return buf[:n]
}
