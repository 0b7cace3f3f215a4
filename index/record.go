// Package index keeps the on-disk index of one data folder — faiss.index,
// manifest.jsonl, files.json, version and index.lock — and serves immutable
// snapshots of it to searches while a single writer prepares the next one.
package index

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
	EmbeddingDim int     `json:"embedding_dim"`
	Deleted      bool    `json:"deleted"`
}

// FileEntry is one file in files.json.
type FileEntry struct {
	Path     string  `json:"path"`
	Mtime    float64 `json:"mtime"`
	Size     int64   `json:"size"`
	Checksum string  `json:"checksum"`
	ChunkIDs []int64 `json:"chunk_ids"`
	Ext      string  `json:"ext"`
}

// filesDoc is files.json. Besides the per-file entries it is the commit
// record: it says how many manifest bytes and FAISS vectors belong to the
// committed state, so a torn manifest tail or a half-finished commit can be
// told apart from committed data.
type filesDoc struct {
	Schema        int          `json:"schema"`
	Generation    int64        `json:"generation"`
	NextID        int64        `json:"next_id"`
	ManifestBytes int64        `json:"manifest_bytes"`
	FaissNtotal   int64        `json:"faiss_ntotal"`
	FaissBytes    int64        `json:"faiss_bytes"`
	Tombstones    int          `json:"tombstones"`
	LastReindex   string       `json:"last_reindex,omitempty"`
	Files         []*FileEntry `json:"files"`
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

// SchemaVersion is bumped whenever the layout of any index file changes.
const SchemaVersion = 1

func (v Version) String() string {
	b, _ := json.Marshal(v)
	return string(b)
}

// liveChunk is what a snapshot keeps in memory per live chunk; the text
// stays in manifest.jsonl and is read back only for the hits of a search.
type liveChunk struct {
	Path       string
	Ext        string
	Mtime      float64
	ChunkIndex int
	CharStart  int
	CharEnd    int
	Page       int
	LineStart  int
	LineEnd    int
	TextHash   uint64 // lets a changed file reuse vectors of unchanged chunks
	Offset     int64  // of the record's line in manifest.jsonl
	Length     int32
}

var textSeed = maphash.MakeSeed()

// TextHash identifies chunk text within this process.
func TextHash(text string) uint64 { return maphash.String(textSeed, text) }
