package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"syscall"

	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/internal/durable"
)

// Background merges. A commit that finds the vector segments past the merge
// threshold only writes its own segment and starts a merge of its snapshot
// (generation G) in a goroutine. The merge writes the live vectors at G as
// faiss.index.merge-<G>-<pid>, a file nothing references, so it takes no
// lock. Installing it is a commit: commit.json names the merged file as
// faiss.index and keeps only the segments after G. The writer's next commit
// installs it; with no writer, the introducer installs it if it can take
// index.lock at once, else the next writer or Refresh in this process does.
// Recovery deletes merge files, so a crash loses only the merge's work.

// errMergeCancelled: Close, or a merge inside a commit, made a running
// background merge pointless.
var errMergeCancelled = errors.New("merge cancelled")

// lockFile creates path and takes an exclusive flock on it. The lock is on
// the file, not the name: it is checked to be the file at path now, in
// case another process's recovery removed it between the two steps.
func lockFile(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		f.Close()
		return nil, fmt.Errorf("lock %s: %w", filepath.Base(path), err)
	}
	held, err1 := f.Stat()
	named, err2 := os.Stat(path)
	if err1 != nil || err2 != nil || !os.SameFile(held, named) {
		f.Close()
		return nil, fmt.Errorf("lock %s: the file was replaced while it was being locked", filepath.Base(path))
	}
	return f, nil
}

// inUse reports whether another process holds path's merge lock.
func inUse(path string) bool {
	f, err := os.Open(path)
	if err != nil {
		return false
	}
	defer f.Close() // releases the probe's lock, if it got one
	return errors.Is(syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB), syscall.EWOULDBLOCK)
}

// unlock releases job's file lock; safe to call more than once.
func (job *mergeJob) unlock() {
	if job.lock != nil {
		job.lock.Close()
		job.lock = nil
	}
}

// MergeStats reports the merges so far.
func (s *Store) MergeStats() MergeStats {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	st := s.mergeStats
	st.Running = s.merge != nil
	return st
}

// overMergeThreshold reports whether doc's segments hold more changes than
// the merge policy lets pile up on top of faiss.index.
func (s *Store) overMergeThreshold(doc *commitRecord) bool {
	return len(doc.VectorSegments) >= maxVecSegments ||
		float64(segmentLoad(doc.VectorSegments)) > s.opts.MergeRatio*float64(doc.FaissNtotal)
}

// StartMerge starts a background merge of the current snapshot unless one
// is running or a writer is active (its commits start merges themselves).
// It reports whether a merge started.
func (s *Store) StartMerge() bool {
	return !s.opts.ReadOnly && s.introduce(introduction{kind: introStartMerge}).ok
}

// startIdleMerge is StartMerge on the introducer with no writer active.
func (s *Store) startIdleMerge() bool {
	if s.loaded != s.stampFiles() {
		return false // another process committed: this snapshot is not the disk's state
	}
	snap := s.Acquire()
	if snap == nil {
		return false
	}
	defer snap.Release()
	doc := s.headerOf(snap)
	if doc.FaissBytes == 0 {
		return false
	}
	return s.startMerge(snap, doc)
}

// startMerge runs a merge of snap, whose committed header is doc, in the
// background. Call from the introducer or the active writer.
func (s *Store) startMerge(snap *Snapshot, doc commitRecord) bool {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	if s.closed || s.merge != nil {
		return false
	}
	if s.mergeWait > 0 {
		s.mergeWait-- // backing off after failures
		return false
	}
	if !snap.tryRef() {
		return false
	}
	doc.Files = nil
	job := &mergeJob{gen: doc.Generation, base: doc, file: mergeFileName(doc.Generation), done: make(chan struct{})}
	s.merge, s.lastMerge = job, job
	s.mergeWG.Add(1)
	go s.runMerge(job, snap)
	return true
}

// runMerge builds and writes job's file, then tries to install it.
func (s *Store) runMerge(job *mergeJob, snap *Snapshot) {
	defer s.mergeWG.Done()
	defer close(job.done)
	start := s.opts.Clock()
	err := s.buildMerge(job, snap)
	job.took = s.opts.Clock().Sub(start)
	s.mergeMu.Lock()
	if err == nil && job.stop.Load() {
		err = errMergeCancelled // stopped after its last check
	}
	job.err, job.finished = err, true
	if err != nil {
		s.merge = nil
		if !errors.Is(err, errMergeCancelled) {
			s.mergeStats.Failed++
			s.mergeFails++
			s.mergeWait = 1<<min(s.mergeFails-1, 6) - 1
		}
	} else {
		s.mergeFails = 0
		s.mergeStats.Last = job.took
		s.mergeStats.FaissBytes += job.bytes
	}
	s.mergeMu.Unlock()
	if err != nil {
		defer job.unlock()
		if rerr := os.Remove(s.path(job.file)); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) {
			s.log.Warn("removing a failed merge's file", "file", job.file, "err", rerr)
		}
		if !errors.Is(err, errMergeCancelled) {
			s.log.Error("background merge of vector segments failed; the index keeps its segments and tries again later", "generation", job.gen, "err", err)
		}
		return
	}
	s.log.Debug("background merge written", "generation", job.gen, "vectors", job.ntotal, "ms", job.took.Milliseconds())
	s.introduce(introduction{kind: introMergeWritten})
}

// buildMerge writes the live vectors of snap as job's file. It takes no
// lock: nothing refers to the file until it is installed.
func (s *Store) buildMerge(job *mergeJob, snap *Snapshot) error {
	folded, err := snap.index.next(nil, nil, nil, true)
	snap.Release()
	if err != nil {
		return err
	}
	defer folded.Close()
	if job.stop.Load() {
		return errMergeCancelled
	}
	if job.lock, err = lockFile(s.path(job.file)); err != nil {
		return err
	}
	job.ntotal, job.bytes, job.checksum, err = s.writeFaissFile(folded.base.idx, s.path(job.file))
	if err == nil && job.stop.Load() {
		err = errMergeCancelled
	}
	return err
}

// writeFaissFile writes idx to path, fsynced, and returns its vector count,
// size and checksum, read back as written.
func (s *Store) writeFaissFile(idx *faiss.Index, path string) (int64, int64, string, error) {
	if err := (*s.writeIndex.Load())(idx, path); err != nil {
		return 0, 0, "", err
	}
	// FAISS creates the file under the umask: make it private like the rest.
	if err := os.Chmod(path, 0o600); err != nil {
		return 0, 0, "", err
	}
	fi, err := os.Stat(path)
	if err == nil {
		err = durable.SyncFile(path)
	}
	var sum uint32
	if err == nil {
		// Read back from the page cache: what is checksummed is what FAISS wrote.
		sum, err = fileChecksum(path)
	}
	if err != nil {
		return 0, 0, "", err
	}
	return idx.Ntotal(), fi.Size(), formatChecksum(sum), nil
}

// takeMerge hands over a finished background merge for installing, or nil.
func (s *Store) takeMerge() *mergeJob {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	job := s.merge
	if job == nil || job.stop.Load() || !job.finished || job.err != nil {
		return nil
	}
	s.merge = nil
	return job
}

// fits reports whether job can still replace doc's base: doc has the base
// the merge started from and still lists the segments it folded in.
func (job *mergeJob) fits(doc *commitRecord) bool {
	b := &job.base
	if doc.Generation < b.Generation || doc.FaissBytes != b.FaissBytes || doc.FaissNtotal != b.FaissNtotal ||
		doc.FaissChecksum != b.FaissChecksum || len(doc.VectorSegments) < len(b.VectorSegments) {
		return false
	}
	return slices.Equal(doc.VectorSegments[:len(b.VectorSegments)], b.VectorSegments)
}

// stage renames job's file to faiss.index.new, ready for a commit to name
// it, and returns doc with the merged file as its base.
func (s *Store) stage(job *mergeJob, doc commitRecord) (commitRecord, error) {
	newPath := s.path(FaissFile + newSuffix)
	err := os.Rename(s.path(job.file), newPath)
	job.unlock() // no longer under a merge name; index.lock guards it now
	if err != nil {
		return doc, err
	}
	if fi, err := os.Stat(newPath); err != nil || fi.Size() != job.bytes {
		os.Remove(newPath)
		return doc, fmt.Errorf("merged file changed before it was installed (%v)", err)
	}
	doc.FaissNtotal, doc.FaissBytes, doc.FaissChecksum = job.ntotal, job.bytes, job.checksum
	doc.VectorSegments = slices.Clone(doc.VectorSegments[len(job.base.VectorSegments):])
	return doc, nil
}

// drop discards a merge that will not be installed.
func (s *Store) drop(job *mergeJob, why string) {
	s.count(func(m *MergeStats) { m.Dropped++ })
	s.log.Info("background merge not installed", "generation", job.gen, "why", why)
	defer job.unlock()
	if err := os.Remove(s.path(job.file)); err != nil && !errors.Is(err, fs.ErrNotExist) {
		s.log.Warn("removing a merge's file", "file", job.file, "err", err)
	}
}

// mergingGeneration is the generation of a background merge not yet
// installed (0 if none): segments up to it must stay as they are listed.
func (s *Store) mergingGeneration() int64 {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	if s.merge == nil {
		return 0
	}
	return s.merge.gen
}

// count changes the merge statistics under mergeMu.
func (s *Store) count(change func(*MergeStats)) {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	change(&s.mergeStats)
}

// stopMerge cancels a running background merge (its result would not fit)
// and drops a finished one. Call from the active writer.
func (s *Store) stopMerge() {
	s.mergeMu.Lock()
	job := s.merge
	if job != nil {
		job.stop.Store(true)
		if job.finished {
			s.merge = nil // its file is dropped below
		} else {
			job = nil // running: it removes its own file
		}
	}
	s.mergeMu.Unlock()
	if job != nil {
		s.drop(job, "a merge inside a commit replaced faiss.index")
	}
}

// installFinishedMerge installs a finished background merge with a commit
// that changes only the vectors' base. It runs on the introducer with no
// writer active; if another process's writer holds index.lock, or this
// snapshot is not the disk's commit, the merge waits for the next writer.
func (s *Store) installFinishedMerge() {
	if !s.mergeFinished() {
		return
	}
	snap := s.Acquire()
	if snap == nil {
		return // closed
	}
	defer snap.Release()
	doc := s.headerOf(snap)
	// An index of the first layout gets commit.json, and the merge, at its
	// next commit.
	if s.loaded != s.stampFiles() || doc.FileList == nil {
		return
	}
	if ok, err := s.lock.TryLock(); err != nil || !ok {
		return
	}
	defer s.lock.Unlock()
	job := s.takeMerge()
	if job == nil {
		return
	}
	if err := s.installAlone(job, doc); err != nil {
		s.log.Warn("installing a background merge", "generation", job.gen, "err", err)
	}
}

// mergeFinished reports whether a background merge waits to be installed.
func (s *Store) mergeFinished() bool {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	job := s.merge
	return job != nil && !job.stop.Load() && job.finished && job.err == nil
}

// installAlone commits job on top of doc with nothing else changed:
// commit.json gets the merged base, the later segments and the next
// generation. Call from the introducer with index.lock held.
func (s *Store) installAlone(job *mergeJob, doc commitRecord) error {
	if !job.fits(&doc) {
		s.drop(job, "faiss.index changed since the merge began")
		return nil
	}
	doc, err := s.stage(job, doc)
	if err != nil {
		s.drop(job, err.Error())
		return nil
	}
	doc.Generation++
	if err := s.writeCommitNew(&doc); err != nil {
		if !s.pastCommitPoint() {
			os.Remove(s.path(FaissFile + newSuffix))
		}
		return err
	}
	if err := s.finishCommit(newFaiss); err != nil {
		return err
	}
	s.removeUnlisted(&doc)
	s.count(func(m *MergeStats) { m.Merges++ }) // a merged file became faiss.index
	s.loaded = s.stampFiles()
	doc.Files = nil
	s.header = &doc
	s.log.Debug("installed background merge", "generation", job.gen, "vectors", job.ntotal)
	return nil
}

// headerOf is the commit record of snap as on disk: snap's own, or the
// one a merge installed on top of it since. Call from the introducer or
// the active writer.
func (s *Store) headerOf(snap *Snapshot) commitRecord {
	if s.header != nil {
		return *s.header
	}
	return snap.doc
}

// WaitMerge waits until the background merge started last has ended:
// written, and installed if no writer was active. It returns that merge's
// error, or nil if none was started.
func (s *Store) WaitMerge() error {
	s.mergeMu.Lock()
	// Not s.merge: an install in progress has taken it from there already.
	job := s.lastMerge
	s.mergeMu.Unlock()
	if job == nil {
		return nil
	}
	<-job.done
	return job.err
}

// closeMerges stops a running merge and waits for it; a finished one is
// installed if it can be, else its file is removed.
func (s *Store) closeMerges() {
	s.mergeMu.Lock()
	s.closed = true
	if job := s.merge; job != nil && !job.finished {
		job.stop.Store(true)
	}
	s.mergeMu.Unlock()
	s.mergeWG.Wait()
	s.introduce(introduction{kind: introClose})
	s.mergeMu.Lock()
	job := s.merge
	s.merge = nil
	s.mergeMu.Unlock()
	if job != nil {
		s.drop(job, "the store closed with a writer active")
	}
}

// ownMergeFile is the merge file this store is writing or holding, which
// recovery must leave alone.
func (s *Store) ownMergeFile() string {
	s.mergeMu.Lock()
	defer s.mergeMu.Unlock()
	if s.merge == nil {
		return ""
	}
	return s.merge.file
}

// removeStaleMerges deletes merge files of merges that were killed or
// failed. A file another process still holds locked is its merge in
// progress (or waiting for its install) and stays.
func (s *Store) removeStaleMerges() {
	keep := s.ownMergeFile()
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		if !isMergeFile(name) || name == keep {
			continue
		}
		if inUse(s.path(name)) {
			continue // another process is writing or holding it
		}
		s.log.Warn("removing an unfinished merge", "file", name)
		if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("removing an unfinished merge", "file", name, "err", err)
		}
	}
}

// writeFaissNew writes idx as faiss.index.new, fsynced, and records its
// size, count and checksum in doc.
func (s *Store) writeFaissNew(idx *faiss.Index, doc *commitRecord) error {
	n, size, sum, err := s.writeFaissFile(idx, s.path(FaissFile+newSuffix))
	if err != nil {
		return err
	}
	s.count(func(m *MergeStats) { m.FaissBytes += size })
	doc.FaissNtotal, doc.FaissBytes, doc.FaissChecksum = n, size, sum
	return nil
}
