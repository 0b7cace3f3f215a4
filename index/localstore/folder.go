package localstore

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

var errReadOnly = errors.New("index opened read-only")

// CheckFolder reports whether dir may hold the index: it is missing, empty,
// or holds an index written by this program (recognised by its version
// file). Otherwise the error wraps index.ErrNotIndex.
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
	b, err := os.ReadFile(filepath.Join(dir, VersionFile))
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w: %s is not empty and has no %s file", index.ErrNotIndex, dir, VersionFile)
	}
	if err != nil {
		return err
	}
	var v schema.Version
	if json.Unmarshal(b, &v) != nil || v.Schema < 1 || v.Model == "" || v.Dim < 1 {
		return fmt.Errorf("%w: %s has a %s file that this program did not write", index.ErrNotIndex, dir, VersionFile)
	}
	return nil
}
