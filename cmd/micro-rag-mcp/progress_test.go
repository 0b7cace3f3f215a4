package main

import (
	"bytes"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// testBar is a terminal bar on a buffer with a clock the test moves.
func testBar(tty bool) (*progressBar, *bytes.Buffer, *time.Time) {
	var out bytes.Buffer
	clock := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	b := newProgressBar(&out)
	b.tty = tty
	b.every = 100 * time.Millisecond
	b.now = func() time.Time { return clock }
	return b, &out, &clock
}

func TestProgressBarRateETAAndFiles(t *testing.T) {
	b, out, clock := testBar(true)
	// 50 chunks a second for 4 s, out of 1,200.
	for i := 0; i <= 40; i++ {
		b.update(pipeline.Progress{FilesDone: i, FilesTotal: 100, ChunksDone: 5 * i, ChunksTotal: 1200, ChunksCounted: true})
		*clock = clock.Add(100 * time.Millisecond)
	}
	last := out.String()[strings.LastIndex(out.String(), "\r"):]
	for _, want := range []string{"200/1,200 chunks", "50.0/s", "ETA 20s", "files 40/100", "[####...."} {
		if !strings.Contains(last, want) {
			t.Errorf("bar %q lacks %q", last, want)
		}
	}
}

// A projected total reported lower than one already shown is not shown:
// the bar's denominator only grows until the count is known.
func TestProgressBarTotalNeverShrinks(t *testing.T) {
	b, out, clock := testBar(false)
	b.update(pipeline.Progress{ChunksDone: 10, ChunksTotal: 500, FilesTotal: 9})
	*clock = clock.Add(3 * time.Second)
	b.update(pipeline.Progress{ChunksDone: 20, ChunksTotal: 300, FilesTotal: 9})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[1], "20/~500 chunks") {
		t.Fatalf("lines %q, want the second to keep the total of 500", lines)
	}
	if !strings.HasPrefix(lines[0], "reindex: ") {
		t.Errorf("plain progress line %q does not start with \"reindex: \"", lines[0])
	}
}

// Log lines written while the bar is on screen appear above it, and the bar
// is drawn again below.
func TestProgressBarLogsAboveBar(t *testing.T) {
	b, out, _ := testBar(true)
	b.update(pipeline.Progress{FilesDone: 1, FilesTotal: 4, ChunksDone: 3, ChunksTotal: 12})
	log := slog.New(slog.NewTextHandler(b, nil))
	log.Warn("file skipped", "path", "bad.pdf")
	s := out.String()
	i := strings.Index(s, "file skipped")
	if i < 0 {
		t.Fatalf("log line missing: %q", s)
	}
	after := s[i:]
	if !strings.Contains(s[:i], "\r\033[Ktime=") {
		t.Errorf("the bar was not cleared before the log line: %q", s[:i])
	}
	if !strings.Contains(after, "\n[") || !strings.HasSuffix(after, "files 1/4") {
		t.Errorf("the bar was not drawn again below the log line: %q", after)
	}
	b.done()
	if !strings.HasSuffix(out.String(), "\n") {
		t.Error("done did not end the bar's line")
	}
}

// While files remain to be read the total is the pipeline's projection,
// marked "~", and exact once every file is chunked.
func TestProgressBarProjectsChunkTotal(t *testing.T) {
	b, out, clock := testBar(false)
	b.update(pipeline.Progress{FilesTotal: 10, ChunksDone: 5, ChunksTotal: 40, ChunksExpected: 160, BytesDone: 1000, BytesTotal: 4000})
	*clock = clock.Add(3 * time.Second)
	b.update(pipeline.Progress{FilesDone: 10, FilesTotal: 10, ChunksDone: 150, ChunksTotal: 150, BytesDone: 4000, BytesTotal: 4000, ChunksCounted: true})
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 2 || !strings.Contains(lines[0], "5/~160 chunks") || !strings.Contains(lines[1], "150/150 chunks") {
		t.Fatalf("lines %q, want a projected ~160 then the exact 150", lines)
	}
}

func TestCount(t *testing.T) {
	for n, want := range map[int]string{0: "0", 999: "999", 1000: "1,000", 1234567: "1,234,567"} {
		if got := engine.Thousands(n); got != want {
			t.Errorf("Thousands(%d) = %q, want %q", n, got, want)
		}
	}
}
