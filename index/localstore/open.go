package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/gofrs/flock"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/durable"
)

// Open opens (creating if needed) the index folder and publishes the
// committed state as the first snapshot. It takes no lock: a writer in
// another process may be running. A version mismatch or a damaged index is
// served as empty and rebuilt by the next writer.
func Open(dir string, v schema.Version, opts index.Options) (*Store, error) {
	opts = opts.WithDefaults()
	if !opts.ReadOnly {
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return nil, fmt.Errorf("create index folder: %w", err)
		}
	}
	s := &Store{dir: dir, version: v, opts: opts, log: opts.Logger, lock: flock.New(filepath.Join(dir, LockFile))}
	s.SetWriteIndex(nil)
	empty, err := s.emptySnapshot()
	if err != nil {
		return nil, err
	}
	s.current.Store(empty)
	s.startIntroducer()
	if _, err := s.Refresh(); err != nil {
		// Perhaps a crash interrupted a commit: finish or undo it if no
		// writer is running, then try again. A read-only store leaves that
		// to a writer.
		if !opts.ReadOnly && tryLock(s.lock) {
			if rerr := s.recover(); rerr != nil {
				s.log.Warn("recovering index", "err", rerr)
			}
			s.lock.Unlock()
			_, err = s.Refresh()
		}
		if errors.Is(err, fs.ErrPermission) {
			s.log.Warn("index not loaded: a file in it cannot be read", "dir", dir, "err", err)
			s.openErr.Store(&err)
		} else if err != nil {
			s.log.Warn("index not loaded; the next reindex rebuilds it", "dir", dir, "err", err)
			s.openErr.Store(&err)
		}
	}
	return s, nil
}

// OpenErr says why Open serves an empty index in place of the one committed
// in the folder: damage (IsDamaged), another model's index
// (ErrOtherVersion), a file it could not read. It is nil when the commit
// loaded, and once the store has since loaded, written or discarded one.
func (s *Store) OpenErr() error {
	if p := s.openErr.Load(); p != nil {
		return *p
	}
	return nil
}

// Close stops a background merge (or installs a finished one) and releases
// the current snapshot. Searches holding it finish first.
func (s *Store) Close() error {
	s.closeMerges()
	if old := s.current.Swap(nil); old != nil {
		old.Release()
	}
	return nil
}

// recover finishes or undoes a commit that a crash interrupted.
// commit.json.new appears (by rename, complete) only after every other new
// file is complete, so its presence means "roll forward"; its absence means
// "roll back". In an index without commit.json, files.json.new plays that
// part (the older layout; a first commit's files.json.new is a complete
// commit record too). It also cuts uncommitted tails of manifest.jsonl and
// the file log. Call with index.lock held.
func (s *Store) recover() error {
	rollForward := s.pastCommitPoint()
	for _, name := range []string{FaissFile, ManifestFile, FilesFile, CommitFile} {
		pending := s.path(name + newSuffix)
		if _, err := os.Stat(pending); err != nil {
			continue
		}
		if rollForward {
			s.log.Warn("finishing an interrupted commit", "file", name)
			if err := os.Rename(pending, s.path(name)); err != nil {
				return err
			}
		} else {
			s.log.Warn("discarding an interrupted commit", "file", name+newSuffix)
			if err := os.Remove(pending); err != nil {
				return err
			}
		}
	}
	for _, name := range []string{CommitFile, FilesFile, FaissFile, ManifestFile, VersionFile} {
		os.Remove(s.path(name + tmpSuffix))
		os.Remove(s.path(name + newSuffix + tmpSuffix))
	}
	s.removeStaleMerges()
	if err := durable.SyncDir(s.dir); err != nil {
		return err
	}
	// Cut a torn or uncommitted manifest tail.
	doc, err := readCommitRecord(s.dir)
	if err != nil {
		return nil
	}
	s.removeUnlisted(&doc)
	if err := s.cutFileLog(doc.FileList); err != nil {
		return err
	}
	if fi, err := os.Stat(s.path(ManifestFile)); err == nil && fi.Size() > doc.ManifestBytes {
		s.log.Warn("cutting uncommitted manifest tail", "bytes", fi.Size()-doc.ManifestBytes)
		if err := os.Truncate(s.path(ManifestFile), doc.ManifestBytes); err != nil {
			return err
		}
	}
	return nil
}

// reset removes every index file but the lock and writes the version: the
// next commit starts from nothing. The commit record goes first, so a crash
// part way leaves an index that loads as empty or is found inconsistent.
func (s *Store) reset() error {
	for _, name := range []string{CommitFile, FilesFile, FaissFile, ManifestFile} {
		for _, suffix := range []string{"", newSuffix, tmpSuffix} {
			if err := os.Remove(s.path(name + suffix)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	s.removeUnlisted(nil)
	s.removeStaleMerges()
	if err := writeFileAtomic(s.path(VersionFile), []byte(s.version.String()+"\n")); err != nil {
		return err
	}
	return durable.SyncDir(s.dir)
}
