package extract

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/klippa-app/go-pdfium"
	pdfiumerr "github.com/klippa-app/go-pdfium/errors"
	"github.com/klippa-app/go-pdfium/references"
	"github.com/klippa-app/go-pdfium/requests"
	"github.com/klippa-app/go-pdfium/structs"
	"github.com/klippa-app/go-pdfium/webassembly"
	"github.com/tetratelabs/wazero"
	"github.com/tetratelabs/wazero/api"
	"github.com/tetratelabs/wazero/experimental"

	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
)

// PDFOptions configure the PDF engine: PDFium compiled to WebAssembly and
// run by wazero, so no cgo and no shared library. See docs/pdf-engines.md
// for why this engine was chosen.
type PDFOptions struct {
	// Instances is how many PDFs may be parsed at once (default 1; each is
	// a WebAssembly module with tens of MB of its own memory, and a second
	// did not speed up ingest: docs/decisions.md).
	Instances int
	// CacheDir holds wazero's compiled machine code so later starts take
	// a fraction of a second instead of several. Empty means
	// cachedir.Path()/wazero; "off" disables it.
	CacheDir string
	// FileTimeout bounds the time one PDF may take once it holds an
	// instance (default 2 minutes). Past it the file is reported and its
	// instance retired. A slow file
	// stops at the next page; a single PDFium call that never returns
	// keeps its instance and one core busy unless Interruptible is set.
	FileTimeout time.Duration
	// Interruptible compiles PDFium with wazero's termination checks so
	// that a call past FileTimeout is stopped; off by default because they
	// make reading 3-4 times slower (docs/pdf-engines.md).
	Interruptible bool
	// MemoryLimitBytes caps each instance's WebAssembly memory (default
	// 1 GiB; PDFium's module cannot grow past 2 GiB anyway). On Linux that
	// memory is a mapping of its own outside the Go heap, so the cap
	// bounds what PDFium adds to the process's RSS, and a file that needs
	// more fails with that reason (unless one request alone would pass
	// 2 GiB: wazero turns those down without telling).
	MemoryLimitBytes uint64
}

// PDFEngine is a pool of PDFium instances. It starts on the first PDF it
// reads, so a folder without PDFs never pays for compiling PDFium. Create
// it with NewPDFEngine and Close it after the last Extract has returned; a
// closed engine starts again on the next PDF. Safe for concurrent use.
type PDFEngine struct {
	mu   sync.Mutex
	opts PDFOptions
	log  *slog.Logger
	run  *pdfRun
}

// pdfRun is one start of the engine.
type pdfRun struct {
	opts PDFOptions // with defaults, as started
	pool pdfium.Pool
	// cache is closed with the pool; nil when caching is off.
	cache wazero.CompilationCache
	// runaways counts files that overran FileTimeout and whose reading
	// still holds an instance.
	runaways atomic.Int64
	mem      *wasmMemories
}

// NewPDFEngine returns a PDF engine with opts that logs to log (nil: no
// logging). It starts nothing yet.
func NewPDFEngine(opts PDFOptions, log *slog.Logger) *PDFEngine {
	return &PDFEngine{opts: opts, log: cmp.Or(log, slog.New(slog.DiscardHandler))}
}

// Close stops the engine and frees its instances.
func (e *PDFEngine) Close() error {
	e.mu.Lock()
	defer e.mu.Unlock()
	run := e.run
	if run == nil {
		return nil
	}
	e.run = nil
	if n := run.runaways.Load(); n > 0 {
		// Closing the pool would wait for calls that may never return;
		// the process is about to exit and frees them.
		return fmt.Errorf("PDF engine left running: %d files past their time limit", n)
	}
	err := run.pool.Close()
	if run.cache != nil {
		err = errors.Join(err, run.cache.Close(context.Background()))
	}
	return err
}

func (o PDFOptions) withDefaults() PDFOptions {
	o.Instances = cmp.Or(max(o.Instances, 0), 1)
	o.FileTimeout = cmp.Or(max(o.FileTimeout, 0), 2*time.Minute)
	// A 200 MB, 1,000-page PDF peaked at 400 MB.
	o.MemoryLimitBytes = cmp.Or(o.MemoryLimitBytes, 1<<30)
	// The same folder as the model, so MICRO_RAG_CACHE_DIR moves both.
	o.CacheDir = cmp.Or(o.CacheDir, filepath.Join(cachedir.Path(), "wazero"))
	return o
}

// start returns the running engine, starting it if needed.
func (e *PDFEngine) start() (*pdfRun, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.run != nil {
		return e.run, nil
	}
	opts := e.opts.withDefaults()
	run := &pdfRun{opts: opts}
	run.mem = newWASMMemories(opts.MemoryLimitBytes, opts.Instances, func() bool { return run.runaways.Load() > 0 })
	rc := wazero.NewRuntimeConfig().
		// The bundled PDFium lowers setjmp/longjmp to WebAssembly
		// exceptions, so that feature must stay on.
		WithCoreFeatures(api.CoreFeaturesV2 | experimental.CoreFeaturesExceptionHandling).
		// With termination checks every loop in PDFium calls back into
		// Go and every call starts a watcher goroutine: 3-4 times the
		// CPU time. Without them a slow file still stops between pages.
		WithCloseOnContextDone(opts.Interruptible).
		WithMemoryLimitPages(run.mem.runtimeLimitPages())
	var cache wazero.CompilationCache
	if opts.CacheDir != "off" {
		c, err := wazero.NewCompilationCacheWithDir(opts.CacheDir)
		if err != nil {
			// A read-only home only costs start-up time.
			e.log.Warn("pdf: no wazero compilation cache", "dir", opts.CacheDir, "err", err)
		} else {
			cache = c
			rc = rc.WithCompilationCache(c)
		}
	}
	pool, err := webassembly.Init(webassembly.Config{
		// Compiling PDFium without a cached copy takes seconds; spread
		// it over the cores.
		Context: experimental.WithMemoryAllocator(
			experimental.WithCompilationWorkers(context.Background(), runtime.GOMAXPROCS(0)),
			run.mem.allocator()),
		MinIdle:  0,
		MaxIdle:  opts.Instances,
		MaxTotal: opts.Instances,
		// PDFium may print diagnostics; stdout carries the MCP protocol.
		Stdout: io.Discard,
		Stderr: io.Discard,
		// Mount nothing: files are handed over as bytes, so the module
		// needs no view of the host file system.
		FSConfig:      wazero.NewFSConfig(),
		RuntimeConfig: rc,
		ReuseWorkers:  true,
	})
	if err != nil {
		if cache != nil {
			cache.Close(context.Background())
		}
		return nil, fmt.Errorf("start PDF engine: %w", err)
	}
	run.pool, run.cache = pool, cache
	e.run = run
	return e.run, nil
}

// read extracts the text of each page with PDFium. Pages are joined by
// "\n\n"; a page PDFium cannot load is listed in Skipped.
func (e *PDFEngine) read(ctx context.Context, path string, f File, lim Limits) (*Document, error) {
	data, err := readLimited(path, f, lim)
	if err != nil {
		return nil, err
	}
	return e.readBytes(ctx, path, data, lim)
}

// readBytes is read on bytes already in memory. The file's time limit
// starts once it has an instance: waiting behind other PDFs is not its
// fault. Cancelling ctx stops the wait and the reading.
func (e *PDFEngine) readBytes(parent context.Context, path string, data []byte, lim Limits) (*Document, error) {
	if err := checkStreams(parent, path, data, lim); err != nil {
		return nil, err
	}
	run, err := e.start()
	if err != nil {
		return nil, &FileError{Path: path, Reason: "PDF engine unavailable", Err: err}
	}
	timeout := run.opts.FileTimeout
	if run.runaways.Load() >= int64(run.opts.Instances) {
		// Every instance is held by a file that overran its deadline;
		// waiting for one would cost each PDF the whole timeout.
		return nil, &FileError{Path: path, Reason: "PDF engine stuck on earlier files"}
	}
	inst, err := run.pool.GetInstanceWithContext(parent)
	if err != nil {
		if parent.Err() != nil {
			return nil, context.Cause(parent)
		}
		return nil, &FileError{Path: path, Reason: "PDF engine unavailable", Err: err}
	}
	ctx, cancel := context.WithTimeout(parent, timeout)
	defer cancel()
	// The file is read on its own goroutine so that the caller gets its
	// answer at the deadline even when a PDFium call cannot be stopped.
	// Each such goroutine holds an instance, so there are at most
	// Instances of them. Whichever side wins the state change releases
	// inst.
	var state atomic.Int32
	done := make(chan pdfResult, 1)
	go func() {
		r, reusable := pdfTextSafe(ctx, inst, data, lim, run.mem)
		if state.CompareAndSwap(pdfRunning, pdfDone) {
			if reusable {
				inst.Close()
			} else {
				// PDFium may have trapped half-way; do not reuse it.
				inst.Kill()
			}
		} else { // abandoned: the caller has answered already
			if !run.opts.Interruptible {
				inst.Kill() // the caller killed it otherwise
			}
			if run.runaways.Add(-1) == 0 {
				run.mem.sweep()
			}
		}
		done <- r
	}()
	var r pdfResult
	select {
	case r = <-done:
	case <-ctx.Done():
		if state.CompareAndSwap(pdfRunning, pdfAbandoned) {
			run.runaways.Add(1)
			if run.opts.Interruptible {
				// Stops the running call (the runtime closes the
				// module) and retires the instance.
				inst.Kill()
			}
			if parent.Err() != nil {
				return nil, context.Cause(parent)
			}
			e.log.Warn("pdf: file overran its time limit", "path", path, "limit", timeout)
			return nil, &FileError{Path: path, Reason: fmt.Sprintf("PDF took longer than %v", timeout)}
		}
		r = <-done // finished just now
	}
	return answer(parent, path, r, timeout)
}

// checkStreams bounds what the file's compressed streams decode to
// (Limits.MaxDecodedBytes), before PDFium sees it.
func checkStreams(ctx context.Context, path string, data []byte, lim Limits) error {
	if lim.MaxDecodedBytes <= 0 {
		return nil
	}
	err := checkPDFStreams(ctx, data, lim.MaxDecodedBytes)
	if err == nil {
		return nil
	}
	var fe *FileError
	if errors.As(err, &fe) {
		fe.Path = path
		return fe
	}
	return context.Cause(ctx)
}

// answer is readBytes' answer for a reading that finished: a cancel of
// parent wins, a failure is a *FileError for path.
func answer(parent context.Context, path string, r pdfResult, timeout time.Duration) (*Document, error) {
	if parent.Err() != nil {
		return nil, context.Cause(parent)
	}
	if errors.Is(r.err, context.DeadlineExceeded) {
		return nil, &FileError{Path: path, Reason: fmt.Sprintf("PDF took longer than %v", timeout)}
	}
	if r.err != nil {
		var fe *FileError
		if errors.As(r.err, &fe) {
			fe.Path = path
			return nil, fe
		}
		return nil, &FileError{Path: path, Reason: "corrupt PDF", Err: r.err}
	}
	return r.doc, nil
}

// States of one file's reading, for readBytes.
const (
	pdfRunning int32 = iota
	pdfDone
	pdfAbandoned
)

type pdfResult struct {
	doc *Document
	err error
}

// pdfTextSafe is pdfText with a panic turned into an error (Extract's
// recover does not reach this goroutine).
func pdfTextSafe(ctx context.Context, inst pdfium.Pdfium, data []byte, lim Limits, mem *wasmMemories) (r pdfResult, reusable bool) {
	defer func() {
		if p := recover(); p != nil {
			r, reusable = pdfResult{err: fmt.Errorf("PDF reader panic: %v", p)}, false
		}
	}()
	r.doc, reusable, r.err = pdfText(ctx, inst, data, lim, mem)
	return r, reusable
}

// pdfText reads every page of data with one PDFium instance, whose memory
// mem allocates (nil: not watched). On error, reusable says whether PDFium
// declined the file cleanly, leaving the instance fit for the next file.
//
// A page PDFium refuses is skipped. A call that fails otherwise (a trap,
// such as PDFium's abort when memory runs out) or a page during which
// memory was refused leaves PDFium unsound or the text incomplete: the
// pages from there are not read, and a file with no page read fails.
func pdfText(ctx context.Context, inst pdfium.Pdfium, data []byte, lim Limits, mem *wasmMemories) (doc *Document, reusable bool, err error) {
	refused := mem.refusals()
	// failed says whether this reading failed for want of memory. With
	// several instances another file's refusal shows in the count too,
	// so it counts only together with a failure of this file's own.
	outOfMemory := func(failed bool) bool {
		return mem.refusals() != refused && (failed || !mem.shared)
	}
	opened, err := inst.OpenDocument(&requests.OpenDocument{File: &data})
	if err != nil {
		reusable, err := openFailed(err, outOfMemory(true), mem)
		return nil, reusable, err
	}
	docRef := opened.Document
	defer inst.FPDF_CloseDocument(&requests.FPDF_CloseDocument{Document: docRef})

	count, err := inst.FPDF_GetPageCount(&requests.FPDF_GetPageCount{Document: docRef})
	if err != nil {
		if outOfMemory(true) {
			return nil, false, &FileError{Reason: mem.tooLarge()}
		}
		return nil, false, &FileError{Reason: "corrupt PDF", Err: err}
	}
	doc = &Document{PageStarts: make([]int, 0, count.PageCount)}
	var b strings.Builder
	chars, failedInARow := 0, 0
	reusable = true
	for i := 0; i < count.PageCount; i++ {
		if err := ctx.Err(); err != nil {
			// A slow file stops between pages; PDFium is left sound.
			return nil, true, err
		}
		text, err := pageText(inst, docRef, i)
		if oom := outOfMemory(err != nil); oom || err != nil && !errors.Is(err, pdfiumerr.ErrPage) {
			reason := fmt.Sprintf("%s (page %d)", mem.tooLarge(), i+1)
			if !oom {
				// A trap's message goes on with a stack trace.
				first, _, _ := strings.Cut(err.Error(), "\n")
				reason = fmt.Sprintf("PDFium failed on page %d: %s", i+1, first)
			}
			if len(doc.PageStarts) == 0 {
				return nil, false, &FileError{Reason: reason}
			}
			doc.Skipped = append(doc.Skipped, fmt.Sprintf("pages %d-%d: not read: %s", i+1, count.PageCount, reason))
			reusable = false
			break
		}
		if err != nil {
			doc.Skipped = append(doc.Skipped, fmt.Sprintf("page %d: %v", i+1, pdfPageErr(err)))
			failedInARow++
			// A damaged page count can claim billions of pages; give
			// up on the rest rather than list each one.
			if failedInARow == maxFailedPagesInARow && i+1 < count.PageCount {
				doc.Skipped = append(doc.Skipped, fmt.Sprintf("pages %d-%d: not read after %d unreadable pages in a row", i+2, count.PageCount, maxFailedPagesInARow))
				break
			}
			continue
		}
		failedInARow = 0
		chars = addPage(doc, &b, chars, text)
		if lim.MaxChars > 0 && chars > lim.MaxChars {
			return nil, true, &FileError{Reason: fmt.Sprintf("extracted text exceeds %d characters", lim.MaxChars)}
		}
	}
	if len(doc.PageStarts) == 0 && len(doc.Skipped) > 0 {
		// Pages exist but none gave text or even loaded: nothing of the
		// file reaches the index, so it must not count as read.
		return nil, reusable, &FileError{Reason: "no page could be read: " + doc.Skipped[0]}
	}
	doc.Text = b.String()
	return doc, reusable, nil
}

// openFailed is why PDFium would not open a file, and whether it declined
// cleanly, leaving the instance fit for the next file.
func openFailed(err error, outOfMemory bool, mem *wasmMemories) (reusable bool, _ error) {
	switch {
	case outOfMemory:
		return false, &FileError{Reason: mem.tooLarge()}
	case errors.Is(err, pdfiumerr.ErrPassword):
		return true, &FileError{Reason: "encrypted PDF (password required)"}
	case errors.Is(err, pdfiumerr.ErrSecurity):
		return true, &FileError{Reason: "unsupported PDF encryption", Err: err}
	case errors.Is(err, pdfiumerr.ErrFormat), errors.Is(err, pdfiumerr.ErrFile), errors.Is(err, pdfiumerr.ErrUnknown):
		return true, &FileError{Reason: "corrupt PDF", Err: err}
	}
	return false, &FileError{Reason: "corrupt PDF", Err: err}
}

// addPage appends one page's text to b, "\n\n" after the page before,
// records where it starts in doc, and returns the characters so far.
func addPage(doc *Document, b *strings.Builder, chars int, text string) int {
	text = normalise(pdfControls(text))
	text = strings.TrimRight(text, " \t\n")
	if len(doc.PageStarts) > 0 {
		b.WriteString("\n\n")
		chars += 2
	}
	doc.PageStarts = append(doc.PageStarts, chars)
	b.WriteString(text)
	return chars + utf8.RuneCountInString(text)
}

// maxFailedPagesInARow ends the page loop of a file whose page tree is
// broken.
const maxFailedPagesInARow = 50

// pageText returns the text of page i (0-based). PDFium's own word breaks
// fail on files whose words are placed by position alone (ghostscript's
// pdfwrite output, for example: "slowriv eroverthree"), so spaces are
// decided here from the gaps between glyph boxes, as pdftotext does: a
// space character, PDFium's or the file's, counts only where the glyphs
// around it stand apart (ghostscript writes "riv er" with a space glyph
// drawn over the letters). PDFium's line breaks are kept.
func pageText(inst pdfium.Pdfium, docRef references.FPDF_DOCUMENT, i int) (string, error) {
	tp, err := inst.FPDFText_LoadPage(&requests.FPDFText_LoadPage{
		Page: requests.Page{ByIndex: &requests.PageByIndex{Document: docRef, Index: i}},
	})
	if err != nil {
		return "", err
	}
	defer inst.FPDFText_ClosePage(&requests.FPDFText_ClosePage{TextPage: tp.TextPage})
	n, err := inst.FPDFText_CountChars(&requests.FPDFText_CountChars{TextPage: tp.TextPage})
	if err != nil {
		return "", err
	}
	var w spacer
	w.b.Grow(n.Count + n.Count/8)
	// One request of each kind for the page: the calls do not keep them,
	// and a fresh one per glyph was a third of the reader's allocations.
	uReq := &requests.FPDFText_GetUnicode{TextPage: tp.TextPage}
	boxReq := &requests.FPDFText_GetLooseCharBox{TextPage: tp.TextPage}
	for c := 0; c < n.Count; c++ {
		uReq.Index = c
		u, err := inst.FPDFText_GetUnicode(uReq)
		if err != nil {
			return "", err
		}
		r := rune(u.Unicode)
		switch {
		case r == ' ':
			w.space()
		case r == 0x02:
			// A hyphen PDFium found at a line end: like pdftotext,
			// join the word halves.
			w.prev, w.pending = nil, false
		case r == '\r' || r == '\n' || r == 0 || r >= 0xFFFE:
			// PDFium ends a line with "\r\n"; 0 means no Unicode
			// mapping.
			if r == '\n' || r == '\r' {
				w.newline()
			}
		default:
			boxReq.Index = c
			box, err := inst.FPDFText_GetLooseCharBox(boxReq)
			if err != nil {
				// No box (for example a zero-size glyph): keep the
				// character and PDFium's spacing.
				w.glyph(r, nil)
				continue
			}
			w.glyph(r, &box.Rect)
		}
	}
	return w.b.String(), nil
}

// spacer assembles page text, deciding where word spaces go.
type spacer struct {
	b strings.Builder
	// prev is the box of the last glyph on the current line.
	prev    *structs.FPDF_FS_RECTF
	pending bool // PDFium generated a space after prev
	lastNL  bool
}

// wordGap is the gap between glyph boxes, as a fraction of the line
// height, above which two glyphs belong to different words. Word spaces
// are about 0.25 em, kerning is under 0.05 em and a loose box is about
// 1.1 em high.
const wordGap = 0.15

func (w *spacer) space() {
	if w.prev != nil {
		w.pending = true // decided by the next glyph
		return
	}
	w.flushPending(true)
	w.b.WriteByte(' ')
}

func (w *spacer) newline() {
	w.pending = false
	w.prev = nil
	if !w.lastNL {
		w.b.WriteByte('\n')
	}
	w.lastNL = !w.lastNL
}

func (w *spacer) flushPending(keep bool) {
	if w.pending && keep {
		w.b.WriteByte(' ')
	}
	w.pending = false
}

func (w *spacer) glyph(r rune, box *structs.FPDF_FS_RECTF) {
	w.lastNL = false
	if w.prev != nil && box != nil && sameLine(w.prev, box) {
		gap := float64(box.Left - w.prev.Right)
		h := float64(min(w.prev.Top-w.prev.Bottom, box.Top-box.Bottom))
		w.pending = false
		if gap > wordGap*h {
			w.b.WriteByte(' ')
		}
	} else {
		// No geometry to go by (another line, rotated or missing
		// boxes): trust PDFium.
		w.flushPending(true)
	}
	w.b.WriteRune(r)
	w.prev = box
}

// sameLine reports whether b follows a on one horizontal line, left to
// right, so that the gap between them is meaningful.
func sameLine(a, b *structs.FPDF_FS_RECTF) bool {
	ha, hb := a.Top-a.Bottom, b.Top-b.Bottom
	if ha <= 0 || hb <= 0 {
		return false
	}
	overlap := min(a.Top, b.Top) - max(a.Bottom, b.Bottom)
	return overlap >= 0.5*min(ha, hb) && b.Left >= a.Left
}

func pdfPageErr(err error) error {
	if errors.Is(err, pdfiumerr.ErrPage) {
		return errors.New("page cannot be loaded")
	}
	return err
}

// pdfControls drops C0 controls, keeping tab and line ends for normalise.
func pdfControls(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case r == '\t' || r == '\n' || r == '\r':
			return r
		case r < 0x20 || r == 0x7f || r == 0xFFFE || r == 0xFFFF:
			return -1
		}
		return r
	}, s)
}
