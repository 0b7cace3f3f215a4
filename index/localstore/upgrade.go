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

// Versions. An index whose version file differs from the running program's
// in anything (model, chunking or schema) is ErrOtherVersion: served as
// empty and rebuilt by the next writer, never read with the wrong layout.
// No older schema is read in place: schemas 2 and 3 hold unstemmed keyword
// terms, which stemmed queries would miss. (readCommitRecord still takes
// schema 2's two layouts, files.json alone and commit.json.)

// readVersionFile reads dir's version file: fs.ErrNotExist when there is
// none, index.ErrInconsistent naming the file when it is not JSON or names
// no schema, model or dimension (truncated, null, {}, []).
func readVersionFile(dir string) (schema.Version, error) {
	var v schema.Version
	path := filepath.Join(dir, VersionFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return v, err
	}
	if err := json.Unmarshal(b, &v); err != nil {
		return v, fmt.Errorf("%w: %s is damaged: %v", index.ErrInconsistent, path, err)
	}
	if v.Schema < 1 || v.Model == "" || v.Dim < 1 {
		return v, fmt.Errorf("%w: %s is damaged: it names no schema, model or dimension", index.ErrInconsistent, path)
	}
	return v, nil
}

// versionMatches reports whether the version file is the running
// program's (or there is no index yet). A missing or damaged one beside a
// commit is damage (index.ErrInconsistent), not another model's index.
func (s *Store) versionMatches() (bool, error) {
	v, err := readVersionFile(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		// A folder without a version holds no index we wrote.
		_, ferr := os.Stat(s.path(FilesFile))
		_, cerr := os.Stat(s.path(CommitFile))
		if errors.Is(ferr, fs.ErrNotExist) && errors.Is(cerr, fs.ErrNotExist) {
			return true, nil
		}
		return false, fmt.Errorf("%w: the %s file is missing", index.ErrInconsistent, VersionFile)
	}
	if err != nil {
		return false, err
	}
	return v == s.version, nil
}
