package index

import (
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// The storage seam: what the engine, index/search and the write stage
// need of an index, so that the local folder (Store, Snapshot, Writer) and
// a database backend (index/pgstore) serve the same tools. Chunk ids,
// records and file entries are the project's own (package schema); no
// backend's vector or keyword types cross it.

// Backend is one index: the current read view, and the single writer.
//
// A backend must guarantee:
//   - Acquire never waits for a writer, and returns nil only after Close.
//   - Begin gives at most one Updater at a time across every process that
//     serves the index (index.lock locally, an advisory lock in a
//     database); a second Begin fails at once with an error wrapping
//     ErrLocked, which the tools report as busy.
//   - A View sees a commit only once the commit is complete and published;
//     a commit that fails part way (a crash, a lost connection) leaves the
//     previous commit intact and served.
//   - Refresh picks up a commit made by another process (or server) and
//     publishes it, reporting whether it did; it never publishes while this
//     process's own Updater runs (that one publishes what it commits).
type Backend interface {
	// Acquire returns the current view with a reference the caller must
	// Release.
	Acquire() View
	// Begin takes the writer role; see Updater.
	Begin() (Updater, error)
	// Refresh loads another process's commit, if there is one.
	Refresh() (bool, error)
	// OpenErr says why the backend serves an empty index in place of the
	// one it holds (damage: IsDamaged; another model: ErrOtherVersion), nil
	// when that index loaded or has since been replaced.
	OpenErr() error
	// Close releases the current view and stops background work.
	Close() error
}

// View is an immutable read view of one commit. Whatever commits after it
// was acquired, every method answers the same until Release: a backend
// keeps the commit's rows, vectors and keyword statistics readable (or
// reads them in one repeatable-read transaction) for the view's lifetime.
// Methods are safe for concurrent use.
type View interface {
	// Release drops the reference Backend.Acquire took.
	Release()

	// Files, Chunks and Tombstones count indexed files, live chunks and
	// deleted chunks the backend still keeps (0 if it deletes at once).
	Files() int
	Chunks() int
	Tombstones() int
	// LastReindex is the RFC 3339 time of the last completed reindex, or "".
	LastReindex() string
	// File returns the entry of a path relative to the data folder.
	File(path string) (*schema.FileEntry, bool)
	// Paths lists the indexed files in byte order; the caller must not
	// modify the slice.
	Paths() []string

	// Record is one live chunk's record; Head and Heads are records without
	// Text and Headings (cheaper where a backend can leave them unread).
	Record(id int64) (schema.Record, error)
	Head(id int64) (schema.Record, error)
	Heads(ids []int64) ([]schema.Record, error)
	// FileChunk is chunk i (from 0) of a file: ok false when the file is
	// not indexed, an error when it has no chunk i.
	FileChunk(path string, i int) (rec schema.Record, ok bool, err error)

	// Search returns up to k records nearest a normalised query vector,
	// best first, scored by cosine similarity. Nearest is the same ranking
	// without reading the records. Both must rank as an exact search would
	// for the project's recall target (≥ 0.99 at 10).
	Search(query []float32, k int) ([]Hit, error)
	Nearest(query []float32, k int) ([]Match, error)
	// Similarities are the exact cosines of a normalised query vector and
	// the stored vectors of chunks ids, in the order of ids; a chunk that
	// is not live is an error.
	Similarities(query []float32, ids []int64) ([]float32, error)
	// Vectors are the stored vectors of chunks ids, in the order of ids;
	// a chunk that is not live is an error.
	Vectors(ids []int64) ([][]float32, error)
	// ChunkVectors are the stored vectors of a file's live chunks by text
	// hash (schema.TextHash), so a reindex re-embeds only changed text.
	ChunkVectors(path string) map[uint64][]float32

	// LexicalQuery looks the keyword terms of query up once, to be weighed
	// and searched (KeywordQuery).
	LexicalQuery(query string) KeywordQuery

	// Memo returns what compute gives for key, computed once per view (a
	// backend embeds ViewMemo): what a search derives from a view, such as
	// the folder's background centroid, lives and dies with it.
	Memo(key any, compute func() (any, error)) (any, error)
}

// KeywordQuery is one query's keyword terms in one View. Search fusion
// calibrates with Weights and Coverage, so a backend must score as package
// lexical does: BM25F over the heading, file-name and text fields with
// lexical.DefaultParams, its idf and field lengths taken from the view's
// commit, and lexical.Tokens as the tokenizer. A backend keeping those
// statistics (document frequencies, field lengths, postings) in its own
// tables gives the same scores and rankings as the local index.
type KeywordQuery interface {
	// Search returns up to k chunks best first (ties by lower id), and the
	// evidence of the chunks in also (zeros for chunks without any).
	Search(k int, also []int64) ([]lexical.Result, []lexical.Evidence)
	// Weights are the query's keyword weight, Σ qtf·idf over its known
	// terms, and its rare-weighted form Σ qtf·idf²/idfMax (see
	// lexical.Query.Weights).
	Weights() (weight, rare float64)
	// Coverage is the share of the query's keyword weight the view knows
	// at all (see lexical.Query.Coverage).
	Coverage() float64
	// TrackTerms makes later searches say which query terms each chunk
	// holds (Evidence.Terms); Explain asks for it, a search does not pay it.
	TrackTerms()
	// Terms are the query's known terms in the order of Evidence.Terms'
	// bits, the weight of its terms found nowhere, and the idf of a term in
	// one chunk (see lexical.Query.Terms).
	Terms() (terms []lexical.Term, absent, idfMax float64)
}

// Updater is the only thing that changes an index, from Begin to Close;
// it is used by one goroutine.
//
// A backend must guarantee: Commit is atomic (every change since the last
// commit, or none, becomes visible, and durable before Commit returns);
// changes are invisible to every View until committed; Close without
// Commit drops them; the writer role is held until Close.
type Updater interface {
	// Before is every file as the run began. Read-only.
	Before() map[string]*schema.FileEntry
	// Base is the view as the run began, for reusing vectors of unchanged
	// chunks; nil after a rebuild (another model's index discarded).
	Base() View
	// PutFile replaces what is indexed for f.Path with chunks and their
	// normalised vectors (len(chunks)×dim values), setting the records'
	// ids, path, ext, mtime, checksum and dimension.
	PutFile(f schema.FileEntry, chunks []schema.Record, vectors []float32) error
	// TouchFile records a new mtime and size of a file whose text is unchanged.
	TouchFile(path string, mtime float64, size int64)
	// RemoveFile deletes a file and its chunks.
	RemoveFile(path string)
	// Commit publishes the changes; end says whether it is the run's last.
	Commit(end schema.RunEnd) error
	// Chunks is the number of live chunks including uncommitted changes.
	Chunks() int
	// Close gives up the writer role.
	Close() error
}
