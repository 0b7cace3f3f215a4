package main

import (
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

// progressBar shows reindex progress on stderr: a redrawn bar on a terminal,
// a plain line every few seconds otherwise (logs, CI).
type progressBar struct {
	w     io.Writer
	tty   bool
	mu    sync.Mutex
	last  time.Time
	drawn bool
}

func newProgressBar(w io.Writer) *progressBar {
	return &progressBar{w: w, tty: isTerminal(w)}
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

func (b *progressBar) update(p engine.Progress) {
	b.mu.Lock()
	defer b.mu.Unlock()
	every := 2 * time.Second
	if b.tty {
		every = 100 * time.Millisecond
	}
	if now := time.Now(); now.Sub(b.last) >= every {
		b.last = now
	} else {
		return
	}
	if !b.tty {
		fmt.Fprintf(b.w, "reindex: files %d/%d, chunks %d/%d\n", p.FilesDone, p.FilesTotal, p.ChunksDone, p.ChunksTotal)
		return
	}
	const width = 30
	filled := 0
	if p.FilesTotal > 0 {
		filled = min(width, width*p.FilesDone/p.FilesTotal)
	}
	fmt.Fprintf(b.w, "\r[%s%s] files %d/%d  chunks %d/%d ",
		strings.Repeat("#", filled), strings.Repeat(".", width-filled),
		p.FilesDone, p.FilesTotal, p.ChunksDone, p.ChunksTotal)
	b.drawn = true
}

// done ends the bar's line so later output starts clean.
func (b *progressBar) done() {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.drawn {
		fmt.Fprintln(b.w)
	}
}
