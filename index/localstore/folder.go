package localstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/micro-rag/micro-rag-mcp/index"
)

var errReadOnly = errors.New("index opened read-only")

// CheckFolder reports whether dir may hold the index: it is missing, empty,
// or holds an index written by this program (recognised by its version
// file, or, when that is missing or damaged, by its commit record and
// manifest: the store then reports the damage and a rebuild replaces it).
// Otherwise the error wraps index.ErrNotIndex.
func CheckFolder(dir string) error {
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	ours := true
	for _, e := range entries {
		// A writer takes index.lock before it writes the version file.
		if n := e.Name(); n != LockFile && n != VersionFile+tmpSuffix {
			ours = false
			break
		}
	}
	if ours {
		return nil
	}
	_, err = readVersionFile(dir)
	switch {
	case err == nil || (errors.Is(err, fs.ErrNotExist) || index.IsDamaged(err)) && holdsCommit(dir):
		return nil
	case errors.Is(err, fs.ErrNotExist):
		return fmt.Errorf("%w: %s is not empty and has no %s file", index.ErrNotIndex, dir, VersionFile)
	case index.IsDamaged(err):
		return fmt.Errorf("%w: %s has a %s file that this program did not write", index.ErrNotIndex, dir, VersionFile)
	}
	return err
}

// holdsCommit reports whether dir holds a commit record of this program
// naming its file log, beside a manifest.
func holdsCommit(dir string) bool {
	b, err := os.ReadFile(filepath.Join(dir, CommitFile))
	if err != nil {
		return false
	}
	var doc commitRecord
	if json.Unmarshal(b, &doc) != nil || doc.Schema < 1 || doc.FileList == nil || !isFileLog(doc.FileList.Log) {
		return false
	}
	_, err = os.Stat(filepath.Join(dir, ManifestFile))
	return err == nil
}
