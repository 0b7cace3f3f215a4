package index

import (
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Summary is what an index folder's commit record, file entries and
// version file say. It is read without loading vectors, so a status needs
// neither FAISS memory nor the model.
type Summary struct {
	Model       string
	Files       []*schema.FileEntry
	Chunks      int
	Tombstones  int
	LastReindex string
	Bytes       int64 // every file in the folder
	// VectorIndex says how kNN searches find neighbours, for people.
	VectorIndex string
	// Reindexing: a writer holds the index's lock now (another process's
	// reindex), where the backend can tell.
	Reindexing bool
}
