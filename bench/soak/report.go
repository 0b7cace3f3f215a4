package soak

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// Report is what a soak measured. Failures lists every error and failed
// check; an empty list is a pass.
type Report struct {
	Duration   time.Duration
	FirstBuild time.Duration
	start      time.Time

	Search, Read calls
	Writes       struct{ Add, Modify, Delete, Rename atomic.Int64 }
	// Reindex counts reindex runs (the CLI loop and the servers' tool)
	// that committed, that were answered busy, and that failed.
	Reindex struct{ OK, Busy, Errors atomic.Int64 }
	// Busy counts second reindexes started while a forced CLI reindex
	// held the lock, by the servers' tool and by another CLI process.
	Busy   struct{ Tool, CLI busyCount }
	Plants plants

	// The final check against a clean rebuild.
	FolderFiles, IndexFiles, CleanFiles int
	FilesDiffer, ChunksDiffer           int // files whose checksum / chunk texts differ
	// TopK compares the CLI's top 10 on the final index and on the clean
	// rebuild per mode (Modes): in the same order, as the same set.
	TopK [len(Modes)]struct{ Queries, Same, SameSet int }
	// ServerSame counts hybrid queries both running servers answer as a
	// new process on the final index does.
	ServerQueries, ServerSame int
	ServerLogErrors           int
	Notes                     []string // differences that are not failures

	mu       sync.Mutex
	Failures []string
}

// busyCount counts second reindexes answered busy, and those that asked
// after the lock was let go (Missed) and ran.
type busyCount struct{ Busy, Missed atomic.Int64 }

// calls counts one kind of request and keeps its latencies.
type calls struct {
	N, Errors atomic.Int64
	Gone      atomic.Int64 // reads of a file the writer had just removed
	mu        sync.Mutex
	lat       []time.Duration
}

func (c *calls) count(d time.Duration, err error) {
	c.N.Add(1)
	if err != nil {
		c.Errors.Add(1)
	}
	c.mu.Lock()
	c.lat = append(c.lat, d)
	c.mu.Unlock()
}

// Percentile is the latency below which p of the calls finished.
func (c *calls) Percentile(p float64) time.Duration {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.lat) == 0 {
		return 0
	}
	s := slices.Sorted(slices.Values(c.lat))
	return s[min(len(s)-1, int(p*float64(len(s))))]
}

// plants counts planted phrases, and keeps how long each one found took.
type plants struct {
	Planted atomic.Int64
	found   calls
}

// Found is how many planted phrases both servers found, and the median and
// worst time from the file's write to the second server finding it.
func (p *plants) Found() (n int, p50, max time.Duration) {
	return int(p.found.N.Load()), p.found.Percentile(0.5), p.found.Percentile(1)
}

func (r *Report) fail(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if len(r.Failures) < 200 {
		r.Failures = append(r.Failures, fmt.Sprintf(format, args...))
	}
}

func (r *Report) note(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Notes = append(r.Notes, fmt.Sprintf(format, args...))
}

// Errors is the number of failed requests, reindex runs and checks.
func (r *Report) Errors() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return len(r.Failures)
}

func (r *Report) brief() string {
	n, _, _ := r.Plants.Found()
	return fmt.Sprintf("searches %d, reads %d (+%d gone), writes %d, reindex ok %d busy %d, busy checks %d, plants %d/%d, failures %d",
		r.Search.N.Load(), r.Read.N.Load(), r.Read.Gone.Load(),
		r.Writes.Add.Load()+r.Writes.Modify.Load()+r.Writes.Delete.Load()+r.Writes.Rename.Load(),
		r.Reindex.OK.Load(), r.Reindex.Busy.Load(), r.Busy.Tool.Busy.Load()+r.Busy.CLI.Busy.Load(), n, r.Plants.Planted.Load(), r.Errors())
}

// String is the report as Markdown.
func (r *Report) String() string {
	var b strings.Builder
	n, p50, worst := r.Plants.Found()
	fmt.Fprintf(&b, "| measure | value |\n|---|---|\n")
	row := func(k string, v any) { fmt.Fprintf(&b, "| %s | %v |\n", k, v) }
	row("mixed load", r.Duration)
	row("first build (CLI reindex)", r.FirstBuild.Round(time.Millisecond))
	row("searches (2 servers)", fmt.Sprintf("%d, %d errors, p50 %s, p95 %s", r.Search.N.Load(), r.Search.Errors.Load(),
		r.Search.Percentile(0.5).Round(time.Millisecond), r.Search.Percentile(0.95).Round(time.Millisecond)))
	row("resources/read", fmt.Sprintf("%d, %d errors, p50 %s, p95 %s; %d not found: the writer had removed the file or cut its chunks since the search",
		r.Read.N.Load(), r.Read.Errors.Load(), r.Read.Percentile(0.5).Round(time.Millisecond),
		r.Read.Percentile(0.95).Round(time.Millisecond), r.Read.Gone.Load()))
	row("writer", fmt.Sprintf("%d added, %d modified, %d deleted, %d renamed", r.Writes.Add.Load(), r.Writes.Modify.Load(),
		r.Writes.Delete.Load(), r.Writes.Rename.Load()))
	row("reindex runs (CLI loop + servers' tool)", fmt.Sprintf("%d committed, %d busy, %d errors", r.Reindex.OK.Load(), r.Reindex.Busy.Load(), r.Reindex.Errors.Load()))
	row("second reindex while a forced CLI reindex holds the lock: servers' tool", fmt.Sprintf("%d answered busy; %d asked after the lock was let go", r.Busy.Tool.Busy.Load(), r.Busy.Tool.Missed.Load()))
	row("the same, by another CLI process", fmt.Sprintf("%d answered busy; %d asked after the lock was let go", r.Busy.CLI.Busy.Load(), r.Busy.CLI.Missed.Load()))
	row("planted phrases found on both servers", fmt.Sprintf("%d of %d, p50 %s, worst %s", n, r.Plants.Planted.Load(), p50.Round(time.Millisecond), worst.Round(time.Millisecond)))
	row("files: folder / index / clean rebuild", fmt.Sprintf("%d / %d / %d", r.FolderFiles, r.IndexFiles, r.CleanFiles))
	row("files differing from the clean rebuild (checksum / chunk texts)", fmt.Sprintf("%d / %d", r.FilesDiffer, r.ChunksDiffer))
	for m, mode := range Modes {
		c := r.TopK[m]
		row("top 10 (file, chunk) as the clean rebuild's, "+mode, fmt.Sprintf("%d of %d queries in the same order, %d as the same set", c.Same, c.Queries, c.SameSet))
	}
	row("running servers' hybrid top 10 as a new process's on the final index", fmt.Sprintf("%d of %d", r.ServerSame, r.ServerQueries))
	row("ERROR lines in the servers' logs", r.ServerLogErrors)
	row("failures", r.Errors())
	r.mu.Lock()
	defer r.mu.Unlock()
	for _, f := range r.Failures {
		fmt.Fprintf(&b, "\n- failure: %s", f)
	}
	for _, n := range r.Notes {
		fmt.Fprintf(&b, "\n- note: %s", n)
	}
	if len(r.Failures)+len(r.Notes) > 0 {
		b.WriteString("\n")
	}
	return b.String()
}
