// Package schema holds the index's plain record types — manifest records,
// file entries (files.json and its log), the version stamp — free of cgo,
// so the ingest stages and their tests use them without linking FAISS.
package schema

import (
	"encoding/json"
	"hash/maphash"
)

// Record is one manifest.jsonl line: one chunk, or a tombstone for one.
type Record struct {
	ID           int64   `json:"id"`
	Path         string  `json:"path"`
	Ext          string  `json:"ext"`
	Mtime        float64 `json:"mtime"`
	Checksum     string  `json:"checksum"`
	ChunkIndex   int     `json:"chunk_index"`
	CharStart    int     `json:"char_start"`
	CharEnd      int     `json:"char_end"`
	Page         int     `json:"page,omitempty"`
	LineStart    int     `json:"line_start,omitempty"`
	LineEnd      int     `json:"line_end,omitempty"`
	Text         string  `json:"text"`
	Headings     string  `json:"headings,omitempty"` // markdown/DOCX headings in scope, one per line
	EmbeddingDim int     `json:"embedding_dim"`
	Deleted      bool    `json:"deleted"`
}

// FileEntry is one file's entry in files.json and the file log.
type FileEntry struct {
	Path     string  `json:"path"`
	Mtime    float64 `json:"mtime"`
	Size     int64   `json:"size"`
	Checksum string  `json:"checksum"`
	ChunkIDs []int64 `json:"chunk_ids"`
	Ext      string  `json:"ext"`
	// PageStarts[i] is the code-point offset where page i+1 begins in the
	// extracted text (paged formats only), so a document rebuilt from its
	// chunks can mark its pages.
	PageStarts []int `json:"page_starts,omitempty"`
	// Truncated says why only the start of the file is indexed (it was over
	// the per-file chunk cap); "" when all of it is.
	Truncated string `json:"truncated,omitempty"`
}

// Version is the content of the version file. An index whose version differs
// from the running one is rebuilt from scratch: vectors of two models or two
// chunkings never mix.
type Version struct {
	Schema       int    `json:"schema"`
	Model        string `json:"model"`
	Dim          int    `json:"dim"`
	ChunkSize    int    `json:"chunk_size"`
	ChunkOverlap int    `json:"chunk_overlap"`
	MaxTokens    int    `json:"max_tokens"`
}

// SchemaVersion is bumped whenever the layout of any index file changes
// (index/docs/ describes each file). 1: the first layout; 2: lexical
// segments; 3: commit.json as the commit point, vector segments and the
// file log, which arrived while the number stayed 2; 4: keyword terms are
// English stems (lexical.AppendTokens), so an older index is rebuilt.
const SchemaVersion = 4

func (v Version) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

var textSeed = maphash.MakeSeed()

// TextHash identifies chunk text within this process: the index keys stored
// vectors by it so a changed file can reuse the vectors of unchanged chunks.
func TextHash(text string) uint64 { return maphash.String(textSeed, text) }

// RunEnd says whether a commit is the last of a reindex run; the write
// stage and the index writer both name it.
type RunEnd bool

const (
	// MidRun is a commit inside a run (a checkpoint of the work so far).
	MidRun RunEnd = false
	// EndOfRun is a run's last commit: its time becomes the last reindex.
	EndOfRun RunEnd = true
)
