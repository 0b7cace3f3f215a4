// Package stages holds the reindex stages — walker, filter, extractor,
// chunker, embedding batcher and writer — as plain transformations of one
// FileJob at a time; package pipeline wires them with channels.
package stages

import (
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Kind says what a reindex does with a file.
type Kind int

const (
	Unchanged Kind = iota // same mtime and size: not read
	Touched               // read, same checksum: only mtime/size refreshed
	Changed               // new or different text: chunked and embedded
	Failed                // could not be read; any old entry is kept
	Gone                  // deleted between the walk and the read: removed like any deleted file
	Skipped               // a link leading outside the data folder: never followed, only counted
)

// FileJob is one file travelling through the stages. Each stage fills in
// its part; the writer consumes it.
type FileJob struct {
	Rel   string // path relative to the data folder, as the index stores it (schema.EncodePath)
	Name  string // the same path as the file system spells it: what is opened, through the root
	Dir   bool   // a folder that could not be listed (Kind Failed): its entries are kept
	Ext   string
	Size  int64
	Mtime float64 // seconds since the epoch
	Old   *schema.FileEntry
	// ToRead is Size when the filter sent the file to be read, else 0: what
	// it adds to the bytes a run reads, carried along for progress.
	ToRead int64

	Kind     Kind
	Doc      *extract.Document
	Checksum string
	Chunks   []chunk.Chunk
	Vectors  []float32 // len(Chunks) × dim, set by the embedder
	Reused   int       // chunks whose vectors came from the old index
	// Truncated says why only the first chunks are indexed; "" for all.
	Truncated string
	Err       error
}
