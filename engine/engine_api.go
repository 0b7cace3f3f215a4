// Package engine owns one data folder: it loads the model, keeps the index
// store, runs reindexes and answers searches, which it hands to index/search
// with a snapshot and the query's embedding. The MCP server and the CLI both
// talk to it, so they share one code path.
package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// The default model (the project's int8 file) and the published int8
// file; ModelHelp lists every model Config.Model accepts.
const (
	DefaultModel = model.DefaultName
	Int8Model    = model.Int8Name
)

// ModelHelp is one line per model Config.Model accepts: its name and what
// it is for.
func ModelHelp() string {
	var b strings.Builder
	for _, m := range model.Models {
		fmt.Fprintf(&b, "\n  %s: %s", m.Name, m.About)
	}
	return b.String()
}

// CheckModel says whether name is a model Config.Model accepts.
func CheckModel(name string) error {
	_, err := model.Lookup(name)
	return err
}

// CheckExclude says whether p is a valid Config.Excludes pattern.
func CheckExclude(p string) error { return ignore.CheckPattern(p) }

// ErrBusy is returned when another reindex (in this process or another)
// holds the index lock.
var ErrBusy = errors.New("a reindex is already running on this index; try again when it finishes")

// ReindexRequest mirrors the reindex tool's arguments.
type ReindexRequest struct {
	Force    bool
	PathGlob string
}

// ReindexResult is what a reindex did.
type ReindexResult struct {
	FilesAdded   int `json:"files_added"`
	FilesUpdated int `json:"files_updated"`
	FilesRemoved int `json:"files_removed"`
	FilesFailed  int `json:"files_failed"`
	ChunksTotal  int `json:"chunks_total"`
	// ChunksEmbedded counts chunks sent to the model; the rest of a changed
	// file's chunks kept their stored vectors. Under force it is every chunk.
	ChunksEmbedded int   `json:"chunks_embedded"`
	ElapsedMS      int64 `json:"elapsed_ms"`
	// WaitedMS is the part of ElapsedMS spent waiting for the model to
	// load or for another run (the start-up indexing) to end, before
	// this run began its own work.
	WaitedMS int64 `json:"waited_ms"`
	// FilesSkipped counts the files the run saw but holds no text of
	// (Skipped says why, by reason); files ignored by rules are not seen.
	FilesSkipped int                `json:"files_skipped"`
	Skipped      []stages.SkipGroup `json:"skipped"`
	// Failed is what this run could not read and why, by path: the
	// first MaxListedFailures of FilesFailed (status lists them all).
	Failed []stages.Failure `json:"failed"`
	// FilesTruncated counts the files this run indexed only in part, over
	// --max-file-chunks; Truncated names the first MaxListedFailures of
	// them with the part indexed (status lists them all).
	FilesTruncated int              `json:"files_truncated"`
	Truncated      []stages.Failure `json:"truncated"`
	// Exts and Excludes are the scope the run used (ScopeFile).
	Exts     []string `json:"exts"`
	Excludes []string `json:"excludes"`
	// Note says that the run's path_glob matched no file, so that "0
	// added" is not read as the files being up to date.
	Note string `json:"note,omitempty"`
	// Stats is what each pipeline stage did, for benchmarks and profiling.
	Stats pipeline.Stats `json:"-"`
}
