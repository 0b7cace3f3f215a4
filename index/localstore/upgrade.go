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

// Upgrades. An index whose version file differs from the running program's
// only in an older schema this code still reads is served as it is; the
// next writer marks it with the current schema (version file at Begin, the
// commit record at each commit). Any other difference, an older schema it
// cannot read or a newer one, is ErrOtherVersion: served as empty and
// rebuilt by the next writer, never read with the wrong layout.

// readableSchemas are the older schemas whose files this code reads. None
// since 4: schemas 2 and 3 hold unstemmed keyword terms, which stemmed
// queries would miss, so their indexes are rebuilt. (readCommitRecord
// still takes schema 2's two layouts, files.json alone and commit.json.)
var readableSchemas = map[int]bool{}

// schemaReadable reports whether a commit record or version file of this
// schema is read by this code.
func schemaReadable(n int) bool { return n == schema.SchemaVersion || readableSchemas[n] }

// versionState is how the version file relates to the running program.
type versionState int

const (
	versionOther   versionState = iota // another model, chunking or unreadable schema
	versionCurrent                     // as the running program writes it (or no index yet)
	versionOlder                       // an older schema this code reads: upgrade
)

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

// checkVersion compares the version file with the running program's. A
// missing or damaged one beside a commit is damage (index.ErrInconsistent),
// not another model's index.
func (s *Store) checkVersion() (versionState, error) {
	v, err := readVersionFile(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		// A folder without a version holds no index we wrote.
		_, ferr := os.Stat(s.path(FilesFile))
		_, cerr := os.Stat(s.path(CommitFile))
		if errors.Is(ferr, fs.ErrNotExist) && errors.Is(cerr, fs.ErrNotExist) {
			return versionCurrent, nil
		}
		return versionOther, fmt.Errorf("%w: the %s file is missing", index.ErrInconsistent, VersionFile)
	}
	if err != nil {
		return versionOther, err
	}
	if v == s.version {
		return versionCurrent, nil
	}
	older := v.Schema
	v.Schema = s.version.Schema
	if v == s.version && older < s.version.Schema && schemaReadable(older) {
		return versionOlder, nil
	}
	return versionOther, nil
}

// versionMatches reports whether the index in the folder is read by this
// program as it is (the current schema or an older readable one).
func (s *Store) versionMatches() (bool, error) {
	st, err := s.checkVersion()
	return st != versionOther, err
}

// upgradeVersion marks an index of an older readable schema with the
// current one, so that older programs rebuild it instead of reading what
// the next commits write. Call with index.lock held.
func (s *Store) upgradeVersion() error {
	st, err := s.checkVersion()
	if err != nil || st != versionOlder {
		return err
	}
	s.log.Info("upgrading the index's schema in place", "dir", s.dir, "schema", s.version.Schema)
	return writeFileAtomic(s.path(VersionFile), []byte(s.version.String()+"\n"))
}
