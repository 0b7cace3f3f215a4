package engine

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// FolderIDFile, in the index folder, records which data folder the index
// was built from: its resolved path and its device and inode. A run over a
// folder that is now another one (replaced, or a symlink to elsewhere)
// would otherwise remove every file of the old folder from the index.
const FolderIDFile = "data-folder.json"

// folderID is a data folder's identity.
type folderID struct {
	Path  string `json:"path"` // absolute, symlinks resolved
	Dev   uint64 `json:"dev"`
	Inode uint64 `json:"inode"`
}

// statFolderID is the identity of the folder at path (already resolved).
func statFolderID(path string) (folderID, error) {
	fi, err := os.Stat(path)
	if err != nil {
		return folderID{}, err
	}
	id := folderID{Path: path}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		id.Dev, id.Inode = uint64(st.Dev), st.Ino
	}
	return id, nil
}

// FolderChangedError is a run refused because the data folder is not the
// one the index was built from.
type FolderChangedError struct {
	Recorded, Now folderID
	Record        string // the record's path, for the fix
	Damaged       string // why the record cannot be read, when it cannot
}

func (e *FolderChangedError) Error() string {
	fix := fmt.Sprintf("If the index should now follow %s (its files replace the indexed ones), delete the record and run again: "+
		"rm %s; or give this folder its own --index-folder", e.Now.Path, ShellQuote(e.Record))
	if e.Damaged != "" {
		return fmt.Sprintf("%s is damaged (%s), so this run cannot tell whether %s is the folder the index was built from. %s",
			e.Record, e.Damaged, e.Now.Path, fix)
	}
	what := "is another folder than"
	if e.Recorded.Path != e.Now.Path {
		what = "resolves to " + e.Now.Path + ", not to"
	}
	return fmt.Sprintf("the data folder %s the one this index was built from (%s, device %d inode %d; now device %d inode %d): "+
		"a reindex would remove every indexed file. %s",
		what, e.Recorded.Path, e.Recorded.Dev, e.Recorded.Inode, e.Now.Dev, e.Now.Inode, fix)
}

// checkFolderID refuses a run whose data folder is not the recorded one,
// and records it for an index that has no record yet (a new index, or
// one built before records were kept).
func (e *Engine) checkFolderID() error {
	now, err := statFolderID(e.cfg.DataFolder)
	if err != nil {
		return fmt.Errorf("data folder: %w", err)
	}
	path := filepath.Join(e.cfg.IndexFolder, FolderIDFile)
	err = compareFolderID(path, now)
	if errors.Is(err, fs.ErrNotExist) {
		return writeFolderID(path, now)
	}
	return err
}

// folderIDProblem is why checkFolderID would refuse a run, nil if it would
// not; it records nothing (status).
func (e *Engine) folderIDProblem() error {
	now, err := statFolderID(e.cfg.DataFolder)
	if err != nil {
		return nil // the walk reports a missing data folder
	}
	if err := compareFolderID(filepath.Join(e.cfg.IndexFolder, FolderIDFile), now); !errors.Is(err, fs.ErrNotExist) {
		return err
	}
	return nil
}

// compareFolderID compares the record at path with now: fs.ErrNotExist
// when there is none, a *FolderChangedError when it is damaged or names
// another folder.
func compareFolderID(path string, now folderID) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	var rec folderID
	if err := json.Unmarshal(b, &rec); err != nil || rec.Path == "" {
		reason := "no path"
		if err != nil {
			reason = err.Error()
		}
		return &FolderChangedError{Now: now, Record: path, Damaged: reason}
	}
	if rec.Path != now.Path || rec.Dev != now.Dev || rec.Inode != now.Inode {
		return &FolderChangedError{Recorded: rec, Now: now, Record: path}
	}
	return nil
}

func writeFolderID(path string, id folderID) error {
	b, err := json.MarshalIndent(id, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), 0o600); err != nil {
		return fmt.Errorf("recording the data folder: %w", err)
	}
	return os.Rename(tmp, path)
}
