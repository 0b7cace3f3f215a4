package localstore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"slices"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Writer is the only thing that changes an index. It holds index.lock from
// Begin to Close; changes become durable and visible to searches at Commit.
// A Writer is used by one goroutine.
type Writer struct {
	s      *Store
	st     *state                       // doc, files and live chunks; st.index is unused
	head   *Snapshot                    // the last commit; changes apply on top of it
	base   *Snapshot                    // the index as the run began; read-only
	before map[string]*schema.FileEntry // files as the run began; read-only
	// Changes since head, applied to a copy of head's FAISS index at Commit,
	// so between commits the vectors are held once, by the snapshot.
	addVecs   []float32
	addIDs    []int64
	removeIDs []int64
	addDocs   []lexical.Doc // the keyword index's view of addIDs, same order
	// pending holds manifest lines not yet appended to manifest.jsonl.
	pending bytes.Buffer
	// changed are the paths whose entries changed since the last commit.
	changed    map[string]bool
	torn       bool // a commit failed part way: files beside the last commit remain
	dirty      bool
	forceMerge bool
	rebuilt    bool
	// midRun: a checkpoint committed since the run's last commit, so the
	// run's end must be committed even with nothing left to write, or the
	// index never records when the run completed.
	midRun bool
}

// Begin takes index.lock and prepares a writer over the committed index. It
// fails at once with ErrLocked when another reindex runs, in this process
// or another. It finishes or undoes a commit that a crash interrupted, and
// rebuilds from scratch when the version differs or the files disagree.
func (s *Store) Begin() (*Writer, error) {
	if s.opts.ReadOnly {
		return nil, errReadOnly
	}
	// The introducer grants the role after any refresh or install it is
	// running; another Writer holding it is ErrLocked.
	if r := s.introduce(introduction{kind: introBegin}); !r.ok {
		return nil, r.err
	}
	w, err := s.begin()
	if err != nil {
		s.introduce(introduction{kind: introEnd})
		return nil, err
	}
	return w, nil
}

func (s *Store) begin() (*Writer, error) {
	ok, err := s.lock.TryLock()
	remade := errors.Is(err, fs.ErrNotExist)
	if remade {
		ok, err = s.lockRemade()
	}
	if err != nil {
		return nil, fmt.Errorf("index.lock: %w", err)
	}
	if !ok {
		return nil, index.ErrLocked
	}
	w := &Writer{s: s, changed: map[string]bool{}}
	s.private() // an index made before indexes were private
	if err := s.recover(); err != nil {
		s.lock.Unlock()
		return nil, fmt.Errorf("recover interrupted commit: %w", err)
	}
	st, rebuilt, err := s.writerState()
	if err != nil {
		s.lock.Unlock()
		return nil, err
	}
	w.st, w.rebuilt = st, rebuilt || remade
	w.before = maps.Collect(st.files.All())
	w.head = s.Acquire()
	if !w.rebuilt {
		w.base = s.Acquire()
	}
	return w, nil
}

// lockRemade makes the index folder again when it was deleted under this
// process (someone removing it to start afresh), so that the run rebuilds it
// instead of every later run failing. Only the folder itself is made: when
// its parent is gone too (a moved data folder, an unmounted disk) that is
// not a place to write an index.
func (s *Store) lockRemade() (bool, error) {
	if err := os.Mkdir(s.dir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return false, fmt.Errorf("the index folder %s is gone and cannot be made again: %w", s.dir, err)
	}
	s.log.Warn("index folder was deleted: made it again; this run indexes every file", "dir", s.dir)
	return s.lock.TryLock()
}

// writerState returns the committed state to start from and publishes it as
// the current snapshot if it is not already (another process wrote since).
// The returned state holds no FAISS index: the writer builds on the snapshot.
func (s *Store) writerState() (*state, bool, error) {
	ok, err := s.versionMatches()
	if index.IsDamaged(err) {
		s.log.Error("index files disagree: rebuilding from scratch (every file is indexed again)", "dir", s.dir, "err", err)
		return s.resetState()
	}
	if err != nil {
		return nil, false, err
	}
	if !ok {
		s.log.Warn("index was built by another model, chunking or schema: rebuilding from scratch", "dir", s.dir)
		return s.resetState()
	}
	if _, err := os.Stat(s.path(VersionFile)); err != nil {
		if err := writeFileAtomic(s.path(VersionFile), []byte(s.version.String()+"\n")); err != nil {
			return nil, false, err
		}
	}
	stamp := s.stampFiles()
	if stamp != s.loaded {
		st, err := s.loadCommitted()
		if index.IsDamaged(err) {
			s.log.Error("index files disagree: rebuilding from scratch (every file is indexed again)", "dir", s.dir, "err", err)
			return s.resetState()
		}
		if err != nil {
			return nil, false, err
		}
		snap, err := s.snapshotOf(st, nil)
		if err != nil {
			st.close()
			return nil, false, err
		}
		s.introducePublish(introduction{snap: snap, stamp: stamp})
	}
	snap := s.Acquire()
	defer snap.Release()
	return &state{doc: s.headerOf(snap), files: snap.files.Share(), live: snap.live.Share()}, false, nil
}

func (s *Store) resetState() (*state, bool, error) {
	if err := s.reset(); err != nil {
		return nil, false, err
	}
	empty, err := s.emptySnapshot()
	if err != nil {
		return nil, false, err
	}
	s.introducePublish(introduction{snap: empty})
	return &state{doc: empty.doc, files: newFileMap(), live: newChunkMap()}, true, nil
}

// Before returns the files as they were when the run began. Read-only.
func (w *Writer) Before() map[string]*schema.FileEntry { return w.before }

// Base is the snapshot as the run began (nil after a rebuild), for reusing
// vectors of unchanged chunks. Read-only; valid until Close.
func (w *Writer) Base() index.View {
	if w.base == nil {
		return nil // not a nil *Snapshot inside a non-nil View
	}
	return w.base
}

// Chunks is the number of live chunks in the writer's state.
func (w *Writer) Chunks() int { return w.st.live.Len() }

// Files is the number of files in the writer's state.
func (w *Writer) Files() int { return w.st.files.Len() }

// PutFile replaces everything indexed for f.Path with chunks and their
// vectors (len(chunks)×dim values, normalised). It sets the records' ids,
// path, ext, mtime, checksum and dimension; f.ChunkIDs is filled in.
func (w *Writer) PutFile(f schema.FileEntry, chunks []schema.Record, vectors []float32) error {
	dim := w.s.version.Dim
	if len(vectors) != len(chunks)*dim {
		return fmt.Errorf("put %s: %d vectors for %d chunks", f.Path, len(vectors)/dim, len(chunks))
	}
	// A vector that is not unit length would score above 1 or below its
	// true rank; loading treats one on disk as damage, so refuse it here.
	if err := checkVectors(vectors, dim); err != nil {
		return fmt.Errorf("put %s: %w", f.Path, err)
	}
	w.RemoveFile(f.Path)
	ids := make([]int64, len(chunks))
	for i := range chunks {
		ids[i] = w.st.doc.NextID
		w.st.doc.NextID++
	}
	w.addVecs = append(w.addVecs, vectors...)
	w.addIDs = append(w.addIDs, ids...)
	name := lexical.NameField(f.Path)
	for i := range chunks {
		r := &chunks[i]
		r.ID, r.Path, r.Ext, r.Mtime, r.Checksum, r.EmbeddingDim, r.Deleted = ids[i], f.Path, f.Ext, f.Mtime, f.Checksum, dim, false
		w.addDocs = append(w.addDocs, lexical.Doc{ID: r.ID, Name: name, Heading: r.Headings, Body: r.Text})
		off := w.st.doc.ManifestBytes + int64(w.pending.Len())
		line := marshalJSONLine(r)
		w.pending.Write(line)
		w.st.live.Set(r.ID, chunkOf(r, off, len(line)))
	}
	entry := f
	entry.ChunkIDs = ids
	w.st.files.Set(f.Path, &entry)
	w.changed[f.Path], w.dirty = true, true
	return nil
}

// TouchFile records a new mtime and size for a file whose text is unchanged.
func (w *Writer) TouchFile(path string, mtime float64, size int64) {
	old, ok := w.st.files.Get(path)
	if !ok || (old.Mtime == mtime && old.Size == size) {
		return
	}
	entry := *old
	entry.Mtime, entry.Size = mtime, size
	w.st.files.Set(path, &entry)
	w.changed[path], w.dirty = true, true
}

// RemoveFile tombstones a file's chunks and forgets the file.
func (w *Writer) RemoveFile(path string) {
	old, ok := w.st.files.Get(path)
	if !ok {
		return
	}
	w.dropVectors(old.ChunkIDs)
	for _, id := range old.ChunkIDs {
		c, ok := w.st.live.Get(id)
		if !ok {
			continue
		}
		// A tombstone names the chunk; its text and place in the file are
		// in the record it deletes.
		w.pending.Write(marshalJSONLine(&schema.Record{
			ID: id, Path: old.Path, Ext: old.Ext, Mtime: old.Mtime, Checksum: old.Checksum,
			ChunkIndex: int(c.ChunkIndex), EmbeddingDim: w.s.version.Dim, Deleted: true,
		}))
		w.st.live.Delete(id)
		w.st.doc.Tombstones++
	}
	w.st.files.Delete(path)
	w.changed[path], w.dirty = true, true
}

// dropVectors forgets vectors added since the last commit, and marks the
// rest for removal from the committed index.
func (w *Writer) dropVectors(ids []int64) {
	gone := make(map[int64]bool, len(ids))
	for _, id := range ids {
		gone[id] = true
	}
	dim := w.s.version.Dim
	keep := 0
	for i, id := range w.addIDs {
		if gone[id] {
			delete(gone, id)
			continue
		}
		copy(w.addVecs[keep*dim:(keep+1)*dim], w.addVecs[i*dim:(i+1)*dim])
		w.addIDs[keep] = id
		w.addDocs[keep] = w.addDocs[i]
		keep++
	}
	w.addIDs, w.addVecs, w.addDocs = w.addIDs[:keep], w.addVecs[:keep*dim], w.addDocs[:keep]
	for _, id := range ids {
		if gone[id] {
			w.removeIDs = append(w.removeIDs, id)
		}
	}
}

// writeCompactManifest writes manifest.jsonl.new holding only live records,
// read back from the current manifest, and returns their new locations, its
// size and its checksum.
func (s *Store) writeCompactManifest(live *cowMap[int64, liveChunk]) (*cowMap[int64, liveChunk], int64, uint32, error) {
	src, err := os.Open(s.path(ManifestFile))
	if err != nil {
		return nil, 0, 0, err
	}
	defer src.Close()
	ids := slices.Sorted(maps.Keys(maps.Collect(live.All())))
	moved := newChunkMap()
	var size int64
	var sum uint32
	err = writeSynced(s.path(ManifestFile+newSuffix), func(out io.Writer) error {
		var buf []byte
		for _, id := range ids {
			c, _ := live.Get(id)
			buf = slices.Grow(buf[:0], int(c.Length))[:c.Length]
			if _, err := src.ReadAt(buf, c.Offset); err != nil {
				return err
			}
			if _, err := out.Write(buf); err != nil {
				return err
			}
			sum = extendChecksum(sum, buf)
			nc := c
			nc.Offset = size
			moved.Set(id, nc)
			size += int64(c.Length)
		}
		return nil
	})
	return moved, size, sum, err
}

// Close releases the lock. Changes not committed are dropped.
func (w *Writer) Close() error {
	if w.s == nil {
		return nil
	}
	if w.base != nil {
		w.base.Release()
	}
	w.head.Release()
	s := w.s
	if w.torn {
		// A failed commit (a full disk, say) left a manifest tail and new
		// files beside the last commit: remove them now, while the lock is
		// held, rather than at the next run.
		if err := s.recover(); err != nil {
			s.log.Warn("cleaning up after a failed commit", "err", err)
		}
	}
	err := s.lock.Unlock()
	w.s = nil
	// The introducer installs a merge that finished meanwhile.
	s.introduce(introduction{kind: introEnd})
	return err
}
