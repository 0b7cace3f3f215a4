package index

import (
	"encoding/json"
	"errors"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Summary is what an index folder's files.json and version file say. It is
// read without loading vectors, so a status needs neither FAISS memory nor
// the model.
type Summary struct {
	Model       string
	Files       []*schema.FileEntry
	Chunks      int
	Tombstones  int
	LastReindex string
	Bytes       int64 // every file in the folder
}

// ReadSummary reads dir's last commit. A folder never indexed gives an
// empty summary.
func ReadSummary(dir string) (Summary, error) {
	var s Summary
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
	if b, err := os.ReadFile(filepath.Join(dir, VersionFile)); err == nil {
		var v schema.Version
		if json.Unmarshal(b, &v) == nil {
			s.Model = v.Model
		}
	}
	doc, err := readFilesDoc(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s, nil
	}
	if err != nil {
		return s, err
	}
	s.Files, s.Tombstones, s.LastReindex = doc.Files, doc.Tombstones, doc.LastReindex
	for _, f := range doc.Files {
		s.Chunks += len(f.ChunkIDs)
	}
	return s, nil
}

// readFilesDoc reads files.json with its entries filled in from the file
// list. A writer in another process may replace the list between the two
// reads; then files.json has changed too, so it is read again.
func readFilesDoc(dir string) (filesDoc, error) {
	for attempt := 0; ; attempt++ {
		b, err := os.ReadFile(filepath.Join(dir, FilesFile))
		if err != nil {
			return filesDoc{}, err
		}
		var doc filesDoc
		if err := json.Unmarshal(b, &doc); err != nil {
			return doc, err
		}
		if doc.FileList == nil {
			return doc, nil
		}
		listed, err := readFileList(dir, doc.FileList)
		if err == nil {
			doc.Files = slices.SortedFunc(maps.Values(listed), func(a, b *schema.FileEntry) int { return strings.Compare(a.Path, b.Path) })
			return doc, nil
		}
		if attempt == 2 {
			return doc, err
		}
	}
}
