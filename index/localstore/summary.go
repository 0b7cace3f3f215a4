package localstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// LocalVectorIndex is the local folder's VectorIndex.
const LocalVectorIndex = "FAISS flat inner product (large indexes: a quantised first pass, rescored in fp32)"

// ReadSummary reads dir's last commit. A folder never indexed gives an
// empty summary.
func ReadSummary(dir string) (index.Summary, error) {
	var s index.Summary
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			s.Bytes += fi.Size()
		}
	}
	s.Reindexing = lockHeld(filepath.Join(dir, LockFile))
	if v, err := readVersionFile(dir); err == nil {
		s.Model = v.Model
	}
	doc, err := readCommitted(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, notDamage(err)
	}
	slices.SortFunc(doc.Files, func(a, b *schema.FileEntry) int { return strings.Compare(a.Path, b.Path) })
	s.Files, s.Tombstones, s.LastReindex = doc.Files, doc.Tombstones, doc.LastReindex
	s.VectorIndex = LocalVectorIndex
	for _, f := range doc.Files {
		s.Chunks += len(f.ChunkIDs)
	}
	return s, nil
}
