package index

import (
	"cmp"
	"log/slog"
	"time"
)

// Options tune a Store. A zero field takes its default from DefaultOptions,
// the one place the defaults live.
type Options struct {
	Compaction Compaction
	// MergeRatio: commits write small vector segments until their changes
	// exceed MergeRatio × faiss.index's vectors; then a background merge
	// rewrites faiss.index whole (merge.go). A negative value merges inside
	// every commit.
	MergeRatio float64
	Scan       ScanOptions
	// FileLogMin is the file log length below which a commit never writes
	// files.json afresh (past it, the log may reach a quarter of the files).
	FileLogMin int
	Logger     *slog.Logger
	// ReadOnly opens without creating the folder or any file in it (no
	// lock, no crash recovery); a missing folder is served as empty.
	ReadOnly bool
	// Clock is the time a run's last commit records as its last reindex.
	Clock func() time.Time
}

// Compaction says when a commit rewrites manifest.jsonl without its
// tombstones (and merges the lexical segments): when they exceed Ratio ×
// live chunks and number at least Min.
type Compaction struct {
	Ratio float64
	Min   int
}

// ScanOptions are the first pass of large searches (index/scan).
type ScanOptions struct {
	// Min is the number of live chunks from which searches scan codes
	// first: below it FAISS's exact scan is already quick.
	Min int
}

// DefaultOptions are the defaults of every Options field.
func DefaultOptions() Options {
	return Options{
		Compaction: Compaction{Ratio: 0.25, Min: 1000},
		MergeRatio: 0.25,
		Scan:       ScanOptions{Min: 16384},
		FileLogMin: 1024,
		Logger:     slog.New(slog.DiscardHandler),
		Clock:      time.Now,
	}
}

// WithDefaults fills o's zero fields from DefaultOptions.
func (o Options) WithDefaults() Options {
	d := DefaultOptions()
	o.Compaction.Ratio = cmp.Or(o.Compaction.Ratio, d.Compaction.Ratio)
	o.Compaction.Min = cmp.Or(o.Compaction.Min, d.Compaction.Min)
	o.MergeRatio = cmp.Or(o.MergeRatio, d.MergeRatio)
	o.Scan.Min = cmp.Or(o.Scan.Min, d.Scan.Min)
	o.FileLogMin = cmp.Or(o.FileLogMin, d.FileLogMin)
	o.Logger = cmp.Or(o.Logger, d.Logger)
	if o.Clock == nil {
		o.Clock = d.Clock
	}
	return o
}

// due reports whether a commit with these tombstones and live chunks
// compacts.
func (c Compaction) Due(tombstones, live int) bool {
	return tombstones > 0 && tombstones >= c.Min && float64(tombstones) > c.Ratio*float64(live)
}
