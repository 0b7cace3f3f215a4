package main

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// progressBar shows reindex progress on stderr, counted in chunks because
// embedding them is what takes the time: a bar redrawn in place on a
// terminal, a plain line every few seconds otherwise (logs, CI). Log lines
// written through it land above the bar.
type progressBar struct {
	w     io.Writer
	tty   bool
	every time.Duration // redraw interval
	now   func() time.Time

	mu        sync.Mutex
	last      time.Time
	line      string // the bar as last drawn; "" when none is on screen
	total     int    // chunk total shown
	estimated bool   // total is a projection, not yet a count
	eta       pipeline.ETA
	rate      float64       // chunks per second, 0 while unknown
	left      time.Duration // ETA; -1 while unknown
}

func newProgressBar(w io.Writer) *progressBar {
	b := &progressBar{w: w, tty: isTerminal(w), every: 2 * time.Second, now: time.Now}
	if b.tty {
		b.every = 100 * time.Millisecond
	}
	return b
}

// isTerminal reports whether w is a character device such as a terminal.
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

func (b *progressBar) update(p pipeline.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := b.now()
	b.total, b.estimated = chunkTotal(p, b.total)
	rate, left, ok := b.eta.Update(now, p)
	b.rate, b.left = rate, left
	if !ok {
		b.left = -1
	}
	final := p.Finished || p.FilesTotal > 0 && p.FilesDone >= p.FilesTotal
	if now.Sub(b.last) < b.every && !final {
		return
	}
	b.last = now
	text := b.describe(p)
	if !b.tty {
		fmt.Fprintf(b.w, "reindex: %s\n", text)
		return
	}
	const width = 24
	filled := 0
	if b.total > 0 {
		filled = min(width, width*p.ChunksDone/b.total)
	}
	b.line = fmt.Sprintf("[%s%s] %s", strings.Repeat("#", filled), strings.Repeat(".", width-filled), text)
	fmt.Fprintf(b.w, "\r\033[K%s", b.line)
}

// describe says how far the run is: chunks with rate and ETA, then files.
func (b *progressBar) describe(p pipeline.Progress) string {
	var s strings.Builder
	approx := ""
	if b.estimated {
		approx = "~"
	}
	fmt.Fprintf(&s, "%s/%s%s chunks", engine.Thousands(p.ChunksDone), approx, engine.Thousands(b.total))
	if b.rate > 0 {
		fmt.Fprintf(&s, "  %.1f/s", b.rate)
	}
	if b.left >= 0 && p.ChunksDone < b.total {
		fmt.Fprintf(&s, "  ETA %s", b.left.Round(time.Second))
	}
	fmt.Fprintf(&s, "  files %s/%s", engine.Thousands(p.FilesDone), engine.Thousands(p.FilesTotal))
	return s.String()
}

// chunkTotal is the chunk total to show: while files remain to be
// chunked, the pipeline's projection (Progress.ChunksExpected, which starts
// low and only grows toward the count), then the count. It never shrinks
// while it is a projection.
func chunkTotal(p pipeline.Progress, shown int) (total int, estimated bool) {
	if p.ChunksCounted {
		return p.ChunksTotal, false
	}
	return max(shown, p.ChunksExpected, p.ChunksTotal, p.ChunksDone), true
}

// Write prints log output above the bar: it clears the bar's line, writes
// p, and draws the bar again below it.
func (b *progressBar) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.line == "" {
		return b.w.Write(p)
	}
	var buf bytes.Buffer
	buf.WriteString("\r\033[K")
	buf.Write(p)
	if len(p) > 0 && p[len(p)-1] != '\n' {
		buf.WriteByte('\n')
	}
	buf.WriteString(b.line)
	if _, err := b.w.Write(buf.Bytes()); err != nil {
		return 0, err
	}
	return len(p), nil
}

// done ends the bar's line so later output starts clean.
func (b *progressBar) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.line != "" {
		fmt.Fprintln(b.w)
		b.line = ""
	}
}
