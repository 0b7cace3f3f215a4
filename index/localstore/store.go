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
	"github.com/micro-rag/micro-rag-mcp/index/scan"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/durable"
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

type introKind uint8

const (
	introBegin        introKind = iota // a Writer asks for the writer role
	introEnd                           // the Writer gives it back
	introPublish                       // a snapshot to publish (commit or load)
	introMergeWritten                  // a background merge wrote its file
	introRefresh                       // load another process's commit
	introStartMerge                    // start a background merge when idle
	introClose                         // install what can be, then stop
)

type introduction struct {
	kind introKind
	// introPublish: the snapshot, the stamp of the commit it shows, and
	// whether to start a background merge of it (doc is its record).
	snap       *Snapshot
	stamp      fileStamp
	startMerge bool
	doc        commitRecord
	reply      chan introReply
}

type introReply struct {
	ok  bool
	err error
}

// errStoreClosed answers introductions sent after Close.
var errStoreClosed = errors.New("index store closed")

// introduce sends in and waits for the answer.
func (s *Store) introduce(in introduction) introReply {
	in.reply = make(chan introReply, 1)
	select {
	case s.intros <- in:
		return <-in.reply
	case <-s.introDone:
		return introReply{err: errStoreClosed}
	}
}

// mergeJob is one background merge, from start until it is installed or
// dropped.
type mergeJob struct {
	gen  int64        // the generation whose live vectors it writes
	base commitRecord // the commit record at gen: the base and segments it replaces
	file string       // its file in the index folder
	stop atomic.Bool  // set by Close or a synchronous merge
	// done is closed when the goroutine has ended (after trying to install).
	done chan struct{}
	// Set by the goroutine; read after finished (under mergeMu) or done.
	finished      bool
	ntotal, bytes int64
	checksum      string
	took          time.Duration
	err           error
	// lock holds a flock on the file while it has its merge name, so that
	// another process's recovery leaves it alone (removeStaleMerges).
	lock *os.File
}

// MergeStats counts what merges did since the store was opened, for
// benchmarks and logs.
type MergeStats struct {
	Merges       int           // merged files installed (background and in a commit)
	Failed       int           // background merges that failed (disk full, say)
	Dropped      int           // finished background merges no longer applicable
	Running      bool          // a background merge is building or waiting to be installed
	Last         time.Duration // build and write time of the last background merge
	FaissBytes   int64         // bytes written as faiss.index files by merges
	SegmentBytes int64         // bytes written as vector segments
}

// pendingFiles are the files a commit wrote beside the committed ones
// (name + ".new"), renamed into place after the commit point.
type pendingFiles uint8

const (
	newFaiss    pendingFiles = 1 << iota // faiss.index.new: a merged base
	newManifest                          // manifest.jsonl.new: a compaction
	newFileList                          // files.json.new: a checkpoint
)

// writeCommitNew writes doc as commit.json.new and makes it durable: the
// commit point.
func (s *Store) writeCommitNew(doc *commitRecord) error {
	doc.Files = nil
	raw, err := marshalIndent(doc)
	if err != nil {
		return err
	}
	if err := writeFileAtomic(s.path(CommitFile+newSuffix), raw); err != nil {
		return err
	}
	return durable.SyncDir(s.dir)
}

// finishCommit renames the pending files of a commit into place,
// commit.json last.
func (s *Store) finishCommit(pending pendingFiles) error {
	for _, r := range []struct {
		name string
		flag pendingFiles
	}{{FaissFile, newFaiss}, {ManifestFile, newManifest}, {FilesFile, newFileList}} {
		if pending&r.flag == 0 {
			continue
		}
		if err := os.Rename(s.path(r.name+newSuffix), s.path(r.name)); err != nil {
			return err
		}
	}
	if err := os.Rename(s.path(CommitFile+newSuffix), s.path(CommitFile)); err != nil {
		return err
	}
	return durable.SyncDir(s.dir)
}

func appendSynced(path string, at int64, data []byte) error {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_WRONLY, 0o600)
	if err != nil {
		return err
	}
	_, err = f.WriteAt(data, at)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

func (s *Store) emptySnapshot() (*Snapshot, error) {
	st, err := s.emptyState()
	if err != nil {
		return nil, err
	}
	defer st.close()
	return s.snapshotOf(st, nil)
}

// snapshotOf makes a snapshot with one reference from st. The snapshot takes
// st's vectors (st.vecs, else st.index; both nil afterwards) and copies the
// maps. edit,
// when not nil, says how st differs from the snapshot before it.
func (s *Store) snapshotOf(st *state, edit *codeEdit) (*Snapshot, error) {
	idx := st.vecs
	if idx == nil {
		idx = newLayered(st.index)
	}
	st.index, st.vecs = nil, nil
	snap := &Snapshot{index: idx, live: st.live.Share(), files: st.files.Share(), doc: st.doc, lex: st.lex}
	snap.doc.Files = nil
	if snap.live.Len() >= s.opts.Scan.Min {
		codes, err := edit.codes()
		if codes != nil && int64(codes.Len()) != idx.Ntotal() {
			s.log.Warn("edited scan codes disagree with the index; building them again", "codes", codes.Len(), "vectors", idx.Ntotal())
			codes = nil
		}
		if err == nil && codes == nil {
			vecs, ids, xerr := idx.Export(nil, nil)
			if err = xerr; err == nil {
				codes, err = scan.Build(vecs, ids, idx.D())
			}
		}
		if err != nil {
			idx.Close()
			return nil, fmt.Errorf("build scan codes: %w", err)
		}
		snap.codes = codes
	}
	if st.doc.ManifestBytes > 0 {
		f, err := os.Open(s.path(ManifestFile))
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			idx.Close()
			return nil, err
		}
		snap.manifest = f
	}
	snap.refs.Store(1)
	return snap, nil
}
