// Package engine owns one data folder: it loads the model, keeps the index
// store, runs reindexes and answers searches. The MCP server and the CLI
// both talk to it, so they share one code path.
package engine

import (
	"errors"
	"fmt"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
	"github.com/micro-rag/micro-rag-mcp/stages"
	"github.com/micro-rag/micro-rag-mcp/stages/ignore"
	"github.com/micro-rag/micro-rag-mcp/stages/model"
)

// The default model and its int8 variant; ModelHelp lists every model
// Config.Model accepts.
const (
	DefaultModel = model.ModelName
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

// SearchMode chooses the ranking a search uses.
type SearchMode string

// Search modes. Hybrid is the default: dense alone misses exact identifiers,
// keyword alone misses paraphrases.
const (
	SearchHybrid  SearchMode = "hybrid"
	SearchDense   SearchMode = "dense"
	SearchKeyword SearchMode = "keyword"
)

// ParseSearchMode accepts "dense", "keyword" or "hybrid"; "" means hybrid.
func ParseSearchMode(s string) (SearchMode, error) {
	switch m := SearchMode(s); m {
	case "":
		return SearchHybrid, nil
	case SearchHybrid, SearchDense, SearchKeyword:
		return m, nil
	}
	return "", fmt.Errorf("search mode %q is not one of dense, keyword, hybrid", s)
}

// SearchRequest is one query. The caller applies defaults and validation.
type SearchRequest struct {
	Query          string
	TopK           int
	ScoreThreshold float64
	Explain        bool // set each Result's Explain
}

// Explanation is what a result's score was made of: its best chunk's
// cosine with the query, raw BM25F score, calibrated keyword score and
// share of the query's keyword weight it holds, how specific the query's
// words are (the same for every result), and the fused score. The parts a
// mode does not use are 0.
type Explanation struct {
	Cosine      float64 `json:"cosine"`
	BM25        float64 `json:"bm25"`
	Keyword     float64 `json:"keyword"`
	Share       float64 `json:"share"`
	Specificity float64 `json:"specificity"`
	// Coverage is the share of the query's keyword weight the index knows
	// at all (lexical.Index.QueryCoverage), in every mode.
	Coverage float64 `json:"coverage"`
	Fused    float64 `json:"fused"`
}

// Result is one passage: one chunk, or neighbouring chunks of one file
// whose text overlaps, merged. Path is relative to the data folder, with "/"
// separators.
type Result struct {
	Path  string  `json:"path"`
	Score float64 `json:"score"` // in [0, 1]; see Search
	// Snippet is the passage's whole text, runs of spaces collapsed and
	// lines trimmed.
	Snippet    string `json:"snippet"`
	ChunkIndex int    `json:"chunk_index"` // the best-ranked chunk of the passage
	Chunks     []int  `json:"chunks"`      // every chunk in the passage, ascending
	CharStart  int    `json:"char_start"`
	CharEnd    int    `json:"char_end"`
	// URI names the passage for MCP resources/read; set by the MCP server.
	URI       string  `json:"uri,omitempty"`
	Mtime     float64 `json:"mtime"`
	Ext       string  `json:"ext"`
	Page      int     `json:"page,omitempty"`
	LineStart int     `json:"line_start,omitempty"`
	LineEnd   int     `json:"line_end,omitempty"`
	// Explain is set when the request asks for it.
	Explain *Explanation `json:"explain,omitempty"`
}

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
	// FilesSkipped counts the files the run saw but holds no text of
	// (Skipped says why, by reason); files ignored by rules are not seen.
	FilesSkipped int                `json:"files_skipped"`
	Skipped      []stages.SkipGroup `json:"skipped"`
	// Exts and Excludes are the scope the run used (ScopeFile).
	Exts     []string `json:"exts"`
	Excludes []string `json:"excludes"`
	// Stats is what each pipeline stage did, for benchmarks and profiling.
	Stats pipeline.Stats `json:"-"`
}
