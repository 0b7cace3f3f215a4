package localstore

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"sync/atomic"
	"time"

	"github.com/gofrs/flock"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/durable"
)

// File names inside the index folder (index/docs/ has a page for each).
const (
	FaissFile    = "faiss.index"
	ManifestFile = "manifest.jsonl"
	FilesFile    = "files.json"
	VersionFile  = "version"
	LockFile     = "index.lock"

	newSuffix = ".new" // a complete file waiting to be renamed into place
	tmpSuffix = ".tmp" // a file being written
)

// Store is the index of one data folder. Searches read Snapshot values; all
// changes go through one Writer at a time, guarded by index.lock.
type Store struct {
	dir     string
	version schema.Version
	opts    index.Options
	log     *slog.Logger
	lock    *flock.Flock

	current atomic.Pointer[Snapshot]
	openErr atomic.Pointer[error] // see OpenErr

	// The introducer goroutine (introducer.go) and what it owns.
	intros       chan introduction
	introDone    chan struct{}
	writerActive bool      // a Writer holds the writer role
	loaded       fileStamp // the commit record as of the current snapshot
	// header is the commit record when a background merge was installed
	// after the current snapshot was published.
	header *commitRecord

	// Background merges (merge.go), guarded by mergeMu.
	mergeMu    sync.Mutex
	merge      *mergeJob // running, or finished and not yet installed
	lastMerge  *mergeJob // the one started last, until the next starts (WaitMerge)
	mergeWG    sync.WaitGroup
	closed     bool
	mergeFails int // failures in a row
	mergeWait  int // commits to let pass before the next try
	mergeStats MergeStats
	// writeIndex writes a FAISS file (faiss.WriteIndex unless a test set
	// another with SetWriteIndex).
	writeIndex atomic.Pointer[func(idx *faiss.Index, path string) error]
}

type fileStamp struct {
	size  int64
	mtime time.Time
	ino   uint64
	sum   uint32 // of commit.json's bytes (0 for files.json, which can be large)
}

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
		if err != nil {
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

func tryLock(l *flock.Flock) bool {
	ok, _ := l.TryLock()
	return ok
}

// SetWriteIndex replaces how FAISS files (faiss.index and merges) are
// written; nil restores faiss.WriteIndex. It is for tests that make writes
// fail as on a full disk, and may be called while a writer or a merge runs.
func (s *Store) SetWriteIndex(write func(idx *faiss.Index, path string) error) {
	if write == nil {
		write = faiss.WriteIndex
	}
	s.writeIndex.Store(&write)
}

// Dir is the index folder.
func (s *Store) Dir() string { return s.dir }

// Close stops a background merge (or installs a finished one) and releases
// the current snapshot. Searches holding it finish first.
func (s *Store) Close() error {
	s.closeMerges()
	if old := s.current.Swap(nil); old != nil {
		old.Release()
	}
	return nil
}

// Acquire returns the current snapshot with a reference the caller must
// Release. It never waits for a writer.
func (s *Store) Acquire() *Snapshot {
	for {
		snap := s.current.Load()
		if snap == nil || snap.tryRef() {
			return snap
		}
	}
}

func (s *Store) publish(next *Snapshot) {
	s.header = nil
	s.openErr.Store(nil)
	if old := s.current.Swap(next); old != nil {
		old.Release()
	}
}

func (s *Store) path(name string) string { return filepath.Join(s.dir, name) }

// stampFiles identifies the last commit: commit.json, or files.json in an
// index without one.
func (s *Store) stampFiles() fileStamp {
	if f, err := os.Open(s.path(CommitFile)); err == nil {
		defer f.Close()
		fi, err := f.Stat()
		if err != nil {
			return fileStamp{}
		}
		st := stampOf(fi)
		// The second of two commits within one timestamp tick can put a
		// commit.json of the same size on the inode the first one freed:
		// only the bytes tell it apart (each commit has its own
		// generation). Stat and read go through one open file, so both
		// describe the same commit.
		raw, err := io.ReadAll(f)
		if err != nil {
			return fileStamp{}
		}
		st.sum = extendChecksum(0, raw)
		return st
	}
	fi, err := os.Stat(s.path(FilesFile))
	if err != nil {
		return fileStamp{}
	}
	return stampOf(fi)
}

// Refresh loads the committed state from disk when commit.json changed since
// the current snapshot (another process committed). It reports whether a new
// snapshot was published: never while this process's writer runs (it
// publishes what it commits). A half-finished commit is left for the writer
// to complete; the current snapshot stays.
func (s *Store) Refresh() (bool, error) {
	r := s.introduce(introduction{kind: introRefresh})
	if errors.Is(r.err, errStoreClosed) {
		return false, nil // nothing to publish to
	}
	return r.ok, r.err
}

// refresh is Refresh on the introducer goroutine.
func (s *Store) refresh() (bool, error) {
	stamp := s.stampFiles()
	if stamp == s.loaded {
		return false, nil
	}
	ok, err := s.versionMatches()
	if err != nil {
		return false, err
	}
	if !ok {
		return false, index.ErrOtherVersion
	}
	st, stamp, err := s.loadSettled(stamp)
	if err != nil {
		return false, err
	}
	defer st.close()
	snap, err := s.snapshotOf(st, nil)
	if err != nil {
		return false, err
	}
	s.loaded = stamp
	s.publish(snap)
	return true, nil
}

// loadSettled is loadCommitted for the commit stamp names. Another
// process's commit (a background merge's install, say) may replace files
// while they are read: then it reads again once that commit is done, and
// returns the stamp of the commit it loaded.
func (s *Store) loadSettled(stamp fileStamp) (*state, fileStamp, error) {
	st, err := s.loadCommitted()
	for try := 0; err != nil && try < 5 && s.commitMoved(stamp); try++ {
		time.Sleep(10 * time.Millisecond)
		stamp = s.stampFiles()
		st, err = s.loadCommitted()
	}
	return st, stamp, err
}

// commitMoved reports whether a commit is under way or done since stamp.
func (s *Store) commitMoved(stamp fileStamp) bool {
	_, err := os.Stat(s.path(CommitFile + newSuffix))
	return err == nil || s.stampFiles() != stamp
}

// state is the writer's mutable view of the index.
type state struct {
	doc   commitRecord
	files *cowMap[string, *schema.FileEntry]
	live  *cowMap[int64, liveChunk]
	index *faiss.Index // IDMap2 over IndexFlatIP; live vectors only
	vecs  *layered     // a commit's vectors, taken instead of index when set
	lex   *lexical.Index
}

func (st *state) close() {
	if st.vecs != nil {
		st.vecs.Close()
		st.vecs = nil
	}
	if st.index != nil {
		st.index.Close()
		st.index = nil
	}
}

func newIndex(dim int) (*faiss.Index, error) {
	flat, err := faiss.NewIndexFlatIP(dim)
	if err != nil {
		return nil, err
	}
	return faiss.NewIDMap2(flat)
}

func (s *Store) emptyState() (*state, error) {
	idx, err := newIndex(s.version.Dim)
	if err != nil {
		return nil, err
	}
	return &state{
		doc:   commitRecord{Schema: schema.SchemaVersion, NextID: 1},
		files: newFileMap(),
		live:  newChunkMap(),
		index: idx,
		lex:   lexical.Empty(),
	}, nil
}

// loadCommitted reads the commit record and the file list, faiss.index and
// its segments and the committed part of manifest.jsonl, and checks that
// they agree.
func (s *Store) loadCommitted() (*state, error) {
	doc, err := readCommitted(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s.emptyState()
	}
	if err != nil {
		return nil, err
	}
	if !schemaReadable(doc.Schema) {
		return nil, fmt.Errorf("%w: commit record schema %d", index.ErrInconsistent, doc.Schema)
	}
	idx, err := s.readFaiss(&doc)
	if err != nil {
		return nil, err
	}
	st := &state{doc: doc, index: idx, files: newFileMap()}
	fail := func(format string, a ...any) (*state, error) {
		st.close()
		return nil, fmt.Errorf("%w: "+format, append([]any{index.ErrInconsistent}, a...)...)
	}
	if idx.D() != s.version.Dim || idx.Ntotal() != doc.FaissNtotal {
		return fail("faiss.index holds %d vectors of dim %d, commit.json expects %d of dim %d", idx.Ntotal(), idx.D(), doc.FaissNtotal, s.version.Dim)
	}
	if err := s.applyVecSegs(idx, doc.VectorSegments); err != nil {
		return fail("%v", err)
	}
	if bad, first, err := idx.BadNorms(normTolerance); err != nil || bad > 0 {
		return fail("faiss.index holds %d vectors whose length is not 1 (first: chunk %d) %v", bad, first, err)
	}
	live, owner, msum, err := readManifest(s.path(ManifestFile), doc.ManifestBytes)
	if err != nil {
		return fail("%v", err)
	}
	if want := doc.ManifestChecksum; want != "" && want != formatChecksum(msum) {
		return fail("manifest.jsonl's committed bytes have checksum %s, commit.json records %s", formatChecksum(msum), want)
	}
	// An index written before checksums gets them from here on.
	st.doc.ManifestChecksum = formatChecksum(msum)
	st.live = live
	if int64(live.Len()) != idx.Ntotal() {
		return fail("manifest has %d live chunks, faiss.index and its segments %d", live.Len(), idx.Ntotal())
	}
	n := 0
	for _, f := range doc.Files {
		st.files.Set(f.Path, f)
		for _, id := range f.ChunkIDs {
			if _, ok := live.Get(id); !ok || owner[id] != f.Path {
				return fail("chunk %d of %s is not live in the manifest", id, f.Path)
			}
			n++
		}
	}
	if n != live.Len() || st.files.Len() != len(doc.Files) {
		return fail("the file entries list %d chunks in %d entries of %d paths, the manifest %d chunks", n, len(doc.Files), st.files.Len(), live.Len())
	}
	st.lex, err = lexical.Open(s.dir, doc.Lexical, func(id int64) bool { _, ok := live.Get(id); return ok })
	if err != nil {
		return fail("%v", err)
	}
	if st.lex.Live() != live.Len() {
		return fail("lexical index has %d live chunks, the manifest %d", st.lex.Live(), live.Len())
	}
	st.doc.Files = nil
	return st, nil
}

// readFaiss loads faiss.index after checking its size and checksum against
// commit.json; doc gets the checksum if it had none (an older index).
func (s *Store) readFaiss(doc *commitRecord) (*faiss.Index, error) {
	path := s.path(FaissFile)
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", index.ErrInconsistent, err)
	}
	defer f.Close()
	fi, err := f.Stat()
	if err != nil {
		return nil, err
	}
	if fi.Size() != doc.FaissBytes {
		return nil, fmt.Errorf("%w: faiss.index has %d bytes, commit.json expects %d", index.ErrInconsistent, fi.Size(), doc.FaissBytes)
	}
	sum, err := readerChecksum(f)
	if err != nil {
		return nil, err
	}
	if doc.FaissChecksum != "" && doc.FaissChecksum != formatChecksum(sum) {
		return nil, fmt.Errorf("%w: faiss.index has checksum %s, commit.json records %s", index.ErrInconsistent, formatChecksum(sum), doc.FaissChecksum)
	}
	doc.FaissChecksum = formatChecksum(sum)
	idx, err := faiss.ReadIndex(path)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", index.ErrInconsistent, err)
	}
	// FAISS reads by name: make sure that is still the file checksummed. Only
	// a commit by another process can replace it, so this is not damage.
	if now, err := os.Stat(path); err != nil || !os.SameFile(fi, now) {
		idx.Close()
		return nil, errors.New("faiss.index was replaced while loading; try again")
	}
	return idx, nil
}

// readManifest parses the first limit bytes of manifest.jsonl into the live
// chunk map and returns their checksum, and each live chunk's path for the
// caller to check against the file entries (kept apart: the live map holds
// only what searches need). Bytes past limit are an uncommitted tail and
// are ignored.
func readManifest(path string, limit int64) (*cowMap[int64, liveChunk], map[int64]string, uint32, error) {
	live := newChunkMap()
	owner := map[int64]string{}
	paths := map[string]string{} // one copy of each path for all its chunks
	if limit == 0 {
		return live, owner, 0, nil
	}
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, 0, err
	}
	defer f.Close()
	h := crc32.NewIEEE()
	r := bufio.NewReaderSize(io.TeeReader(io.LimitReader(f, limit), h), 1<<20)
	var off int64
	for {
		line, err := r.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// Long record: collect the rest of the line.
			buf := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) {
				line, err = r.ReadSlice('\n')
				buf = append(buf, line...)
			}
			line = buf
		}
		if len(line) > 0 {
			if line[len(line)-1] != '\n' {
				return nil, nil, 0, fmt.Errorf("manifest torn at byte %d", off)
			}
			var rec schema.Record
			if jerr := json.Unmarshal(line, &rec); jerr != nil {
				return nil, nil, 0, fmt.Errorf("manifest line at byte %d: %v", off, jerr)
			}
			if rec.Deleted {
				live.Delete(rec.ID)
				delete(owner, rec.ID)
			} else {
				p, ok := paths[rec.Path]
				if !ok {
					p = rec.Path
					paths[p] = p
				}
				owner[rec.ID] = p
				live.Set(rec.ID, chunkOf(&rec, off, len(line)))
			}
			off += int64(len(line))
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, nil, 0, err
		}
	}
	if off != limit {
		return nil, nil, 0, fmt.Errorf("manifest has %d bytes, commit.json expects %d", off, limit)
	}
	return live, owner, h.Sum32(), nil
}

func chunkOf(r *schema.Record, off int64, length int) liveChunk {
	return liveChunk{
		ChunkIndex: int32(r.ChunkIndex),
		TextHash:   schema.TextHash(r.Text), Offset: off, Length: int32(length),
	}
}

// pastCommitPoint reports whether the files of an unfinished commit say
// it is committed: commit.json.new, or, for an index with no commit.json
// yet, files.json.new (then a whole commit record).
func (s *Store) pastCommitPoint() bool {
	exists := func(name string) bool { _, err := os.Stat(s.path(name)); return err == nil }
	return exists(CommitFile+newSuffix) || (!exists(CommitFile) && exists(FilesFile+newSuffix))
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

// removeUnlisted removes the lexical and vector segments and the file
// logs that doc does not list (all of them when doc is nil): left by a torn
// commit, or replaced by a merge, a fold or a checkpoint.
func (s *Store) removeUnlisted(doc *commitRecord) {
	listed := map[string]bool{}
	if doc != nil {
		for _, r := range doc.Lexical {
			listed[r.Name] = true
		}
		for _, r := range doc.VectorSegments {
			listed[r.Name] = true
		}
		if doc.FileList != nil {
			listed[doc.FileList.Log] = true
		}
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		name := e.Name()
		ours := lexical.IsSegmentFile(name) || isVecSegFile(name) || isFileLog(name)
		if !ours || listed[name] {
			continue
		}
		if err := os.Remove(s.path(name)); err != nil && !errors.Is(err, fs.ErrNotExist) {
			s.log.Warn("removing a file the index no longer lists", "file", name, "err", err)
		}
	}
}

// private takes group and other permissions off the index folder and its
// files: they hold the text of every document, which may be private. It
// only warns on failure (a folder on a file system without modes).
func (s *Store) private() {
	tighten := func(path string, fi fs.FileInfo) {
		if perm := fi.Mode().Perm(); perm&0o077 != 0 {
			if err := os.Chmod(path, perm&0o700); err != nil {
				s.log.Warn("could not make an index file private", "file", path, "err", err)
			}
		}
	}
	if fi, err := os.Stat(s.dir); err == nil {
		tighten(s.dir, fi)
	}
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return
	}
	for _, e := range entries {
		if fi, err := e.Info(); err == nil && fi.Mode().IsRegular() {
			tighten(s.path(e.Name()), fi)
		}
	}
}

// writeFileAtomic writes data beside path, fsyncs it and renames it into place.
func writeFileAtomic(path string, data []byte) error {
	tmp := path + tmpSuffix
	if err := writeSynced(tmp, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

func writeSynced(path string, fill func(io.Writer) error) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_TRUNC|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	bw := bufio.NewWriterSize(f, 1<<20)
	err = fill(bw)
	if err == nil {
		err = bw.Flush()
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
	}
	return err
}

// marshalJSONLine encodes one of our records as a line of JSON.
func marshalJSONLine(v any) []byte {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.Encode(v) // our records always encode
	return buf.Bytes()
}

func marshalIndent(doc *commitRecord) ([]byte, error) {
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", " ")
	err := enc.Encode(doc)
	return buf.Bytes(), err
}
