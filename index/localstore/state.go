// Package localstore keeps the on-disk index of one data folder — faiss.index,
// manifest.jsonl, commit.json, the file entries, segments, version and
// index.lock (index/docs/) — and serves immutable snapshots of it to
// searches while a single writer prepares the next one.
package localstore

import (
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// commitRecord is commit.json: it says how many manifest bytes and FAISS
// vectors belong to the committed state, so a torn manifest tail or a
// half-finished commit can be told apart from committed data, and where the
// file entries are. A checkpoint (files.json) is the same record with every
// file entry inline in Files, which is how the first layout stored it.
type commitRecord struct {
	Schema        int   `json:"schema"`
	Generation    int64 `json:"generation"`
	NextID        int64 `json:"next_id"`
	ManifestBytes int64 `json:"manifest_bytes"`
	FaissNtotal   int64 `json:"faiss_ntotal"`
	FaissBytes    int64 `json:"faiss_bytes"`
	// Checksums of faiss.index and of the first ManifestBytes bytes of
	// manifest.jsonl (see checksum.go); verified whenever the index loads.
	FaissChecksum    string `json:"faiss_checksum,omitempty"`
	ManifestChecksum string `json:"manifest_checksum,omitempty"`
	// VectorSegments are the commits since faiss.index was last written
	// whole, applied to it in order (see vecseg.go). FaissNtotal, FaissBytes
	// and FaissChecksum describe faiss.index alone.
	VectorSegments []vecSegRef `json:"vector_segments,omitempty"`
	Tombstones     int         `json:"tombstones"`
	LastReindex    string      `json:"last_reindex,omitempty"`
	// Lexical lists the keyword index's segment files; which docs in them
	// are live follows from Files, so deletions cost no lexical write.
	Lexical []lexical.SegmentRef `json:"lexical"`
	// FileList names the per-file entries (filelist.go). An index written
	// before it lists them inline in Files instead.
	FileList *fileListRef        `json:"file_list,omitempty"`
	Files    []*schema.FileEntry `json:"files,omitempty"`
}

// liveChunk is what a snapshot keeps in memory per live chunk; the text
// stays in manifest.jsonl and is read back only for the hits of a search.
// It is held by value and kept small (24 bytes): at 1M chunks every byte
// here is a megabyte of resident memory.
type liveChunk struct {
	TextHash   uint64 // lets a changed file reuse vectors of unchanged chunks
	Offset     int64  // of the record's line in manifest.jsonl
	Length     int32
	ChunkIndex int32
}
