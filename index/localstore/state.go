// Package localstore keeps the on-disk index of one data folder — faiss.index,
// manifest.jsonl, commit.json, the file entries, segments, version and
// index.lock (index/docs/) — and serves immutable snapshots of it to
// searches while a single writer prepares the next one.
package localstore

import (
	"fmt"
	"hash/maphash"
	"os"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/faiss"
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

// File names inside the index folder (index/docs/ has a page for each).
const (
	FaissFile    = "faiss.index"
	ManifestFile = "manifest.jsonl"
	FilesFile    = "files.json"
	VersionFile  = "version"
	LockFile     = "index.lock"

	newSuffix = ".new" // a complete file waiting to be renamed into place
	tmpSuffix = ".tmp" // a file being written
)

type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	sum   uint32 // of commit.json's bytes (0 for files.json, which can be large)
}

// state is the writer's mutable view of the index.
type state struct {
	doc   commitRecord
	files *cowMap[string, *schema.FileEntry]
	live  *cowMap[int64, liveChunk]
	index *faiss.Index // IDMap2 over IndexFlatIP; live vectors only
	vecs  *layered     // a commit's vectors, taken instead of index when set
	lex   *lexical.Index
}

func (st *state) close() {
	if st.vecs != nil {
		st.vecs.Close()
		st.vecs = nil
	}
	if st.index != nil {
		st.index.Close()
		st.index = nil
	}
}

// CommitFile is the commit record: its atomic replacement is the commit.
const CommitFile = "commit.json"

// fileListRef is commit.json's pointer to the per-file entries.
type fileListRef struct {
	// The checkpoint: files.json as written by commit Generation.
	Generation int64  `json:"generation"`
	Files      int    `json:"files"`
	Bytes      int64  `json:"bytes"`
	Checksum   string `json:"checksum"`
	// Log is files-<Generation>.log.jsonl: entries changed since the
	// checkpoint, and removed paths as {"path": …, "removed": true}, in
	// commit order. Bytes past LogBytes are an uncommitted tail.
	Log         string `json:"log"`
	LogEntries  int    `json:"log_entries"`
	LogBytes    int64  `json:"log_bytes"`
	LogChecksum string `json:"log_checksum,omitempty"`
}

func fileLogName(gen int64) string { return fmt.Sprintf("files-%010d.log.jsonl", gen) }

func isFileLog(name string) bool {
	return strings.HasPrefix(name, "files-") && strings.HasSuffix(name, ".log.jsonl")
}

// Vector delta segments let a commit write only what changed. faiss.index is
// the base, written whole only by a merge; each commit in between writes one
// small segment file holding the ids it removed and the vectors it added.
// commit.json lists the segments in commit order; loading applies them to the
// base in that order. A merge writes the live vectors as a new faiss.index
// and lists no segments, so after it faiss.index alone holds exactly the
// live vectors, as a plain FAISS file.
//
// A segment file, all integers little-endian:
//
//	"MRVSEG01" | dim uint32 | removed uint64 | added uint64 |
//	removed ids int64[removed] | added ids int64[added] | vectors float32[added×dim]
const vecSegMagic = "MRVSEG01"

const (
	vecSegPrefix = "vectors-"
	vecSegSuffix = ".seg"
	vecSegHeader = len(vecSegMagic) + 4 + 8 + 8
)

// vecSegRef is a segment as commit.json lists it.
type vecSegRef struct {
	Name     string `json:"name"`
	Removed  int64  `json:"removed"`
	Added    int64  `json:"added"`
	Bytes    int64  `json:"bytes"`
	Checksum string `json:"checksum"`
}

func vecSegName(generation int64) string {
	return fmt.Sprintf("%s%010d%s", vecSegPrefix, generation, vecSegSuffix)
}

func isVecSegFile(name string) bool {
	return strings.HasPrefix(name, vecSegPrefix) && strings.HasSuffix(name, vecSegSuffix)
}

const mergeFilePrefix = FaissFile + ".merge-"

func mergeFileName(gen int64) string {
	return fmt.Sprintf("%s%010d-%d", mergeFilePrefix, gen, os.Getpid())
}

// isMergeFile reports whether name is exactly what mergeFileName makes, so
// recovery deletes nothing else.
func isMergeFile(name string) bool {
	var gen, pid int64
	n, err := fmt.Sscanf(strings.TrimPrefix(name, mergeFilePrefix), "%010d-%d", &gen, &pid)
	return err == nil && n == 2 && strings.HasPrefix(name, mergeFilePrefix) &&
		name == fmt.Sprintf("%s%010d-%d", mergeFilePrefix, gen, pid)
}

// newChunkMap spreads ids by blocks of 4,096, so the chunks of one file
// (consecutive ids) usually share a shard.
func newChunkMap() *cowMap[int64, liveChunk] {
	return &cowMap[int64, liveChunk]{shards: new([cowShards]*cowShard[int64, liveChunk]), shard: func(id int64) uint8 { return uint8(id >> 12) }}
}

func newFileMap() *cowMap[string, *schema.FileEntry] {
	return &cowMap[string, *schema.FileEntry]{shards: new([cowShards]*cowShard[string, *schema.FileEntry]), shard: func(p string) uint8 { return uint8(maphash.String(pathSeed, p)) }}
}
