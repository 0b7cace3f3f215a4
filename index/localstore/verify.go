package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"log/slog"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// Verify loads the index committed in dir with every check Open makes
// (sizes and checksums of the files, their agreement, unit-length
// vectors) and frees it again; what would stop Open from serving it is the
// error (IsDamaged tells damage apart). It needs no model: the index is
// held to the version it records. A folder with no index verifies. It
// takes no lock and writes nothing.
func Verify(dir string) error {
	s := &Store{dir: dir, log: slog.New(slog.DiscardHandler), opts: index.Options{ReadOnly: true}}
	v, err := readVersionFile(dir)
	if errors.Is(err, fs.ErrNotExist) {
		if _, err := readCommitRecord(dir); errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return fmt.Errorf("%w: the %s file is missing", index.ErrInconsistent, VersionFile)
	}
	if err != nil {
		return err
	}
	s.version = v
	st, _, err := s.loadSettled(s.stampFiles())
	if err != nil {
		return err
	}
	st.close()
	return nil
}
