package localstore

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// A commit runs the steps numbered in docs/storage.md ("A commit, step by
// step"), one method of commitTx each; the comment of each method starts
// with its number there.

// RunEnd says whether a commit is the last of a reindex run (schema.RunEnd).
type RunEnd = schema.RunEnd

// The two kinds of commit (see schema.RunEnd).
const (
	MidRun   = schema.MidRun
	EndOfRun = schema.EndOfRun
)

// commitTx is one commit in progress: the record it writes and what its
// steps decided.
type commitTx struct {
	w       *Writer
	s       *Store
	end     RunEnd
	doc     commitRecord              // the record being written
	live    *cowMap[int64, liveChunk] // the live chunks, moved by a compaction
	lex     *lexical.Index            // the keyword index after the commit
	pending pendingFiles
	changes int64 // vectors added and removed
	merge   bool  // this commit rewrites faiss.index itself
	staged  bool  // a background merge's file waits as faiss.index.new
}

// Commit makes every change so far durable and publishes a new snapshot;
// end says whether it is a run's last commit. A commit with nothing to
// write does nothing.
func (w *Writer) Commit(end RunEnd) error { return w.commit(end) }

func (w *Writer) commit(end RunEnd) (err error) {
	if !w.dirty && !(end == EndOfRun && (w.rebuilt || w.midRun)) {
		return nil
	}
	defer func() {
		if err != nil {
			w.torn = true // Close cleans what it left on disk
		}
	}()
	tx := &commitTx{w: w, s: w.s, end: end, doc: w.st.doc, live: w.st.live,
		changes: int64(len(w.addIDs) + len(w.removeIDs))}
	if err := tx.appendManifest(); err != nil {
		return err
	}
	defer tx.dropUnnamedFaiss()
	defer w.st.close() // the vectors, unless the snapshot took them
	for _, step := range []func() error{
		tx.placeVectors, tx.writeVectorSegment, tx.writeLexicalSegment,
		tx.writeFileEntries, tx.writeCommitPoint, tx.renameIntoPlace,
	} {
		if err := step(); err != nil {
			return err
		}
	}
	tx.removeUnlisted()
	return tx.publish()
}

// Merge is a run's last commit with the vector segments folded into
// faiss.index, which then holds exactly the live vectors.
func (w *Writer) Merge() error {
	w.forceMerge, w.dirty = true, true
	return w.commit(EndOfRun)
}

// appendManifest is step 1: the new manifest records go after the
// committed bytes (an uncommitted tail until commit.json says otherwise);
// past the tombstone threshold the live records are also written afresh
// as manifest.jsonl.new (compaction).
func (tx *commitTx) appendManifest() error {
	s, w, doc := tx.s, tx.w, &tx.doc
	if w.pending.Len() > 0 {
		if err := appendSynced(s.path(ManifestFile), doc.ManifestBytes, w.pending.Bytes()); err != nil {
			return fmt.Errorf("append manifest: %w", err)
		}
	}
	msum, ok := parseChecksum(doc.ManifestChecksum)
	if !ok && doc.ManifestBytes > 0 {
		// Loading fills the checksum in, so only a damaged commit.json gets here.
		return errors.New("commit: the committed manifest has no checksum")
	}
	doc.ManifestBytes += int64(w.pending.Len())
	doc.ManifestChecksum = formatChecksum(extendChecksum(msum, w.pending.Bytes()))
	if !s.opts.Compaction.Due(doc.Tombstones, tx.live.Len()) {
		return nil
	}
	live, size, sum, err := s.writeCompactManifest(tx.live)
	if err != nil {
		return fmt.Errorf("compact manifest: %w", err)
	}
	tx.live, doc.ManifestBytes, doc.ManifestChecksum = live, size, formatChecksum(sum)
	doc.Tombstones = 0
	tx.pending |= newManifest
	return nil
}

// placeVectors is step 2: a finished background merge that still fits
// becomes faiss.index.new; a commit that merges itself (an explicit Merge,
// the first vectors, the tests' settings) writes faiss.index.new instead.
// The commit's vectors in memory are head's with the changes applied.
func (tx *commitTx) placeVectors() error {
	s, w, doc := tx.s, tx.w, &tx.doc
	tx.merge = w.forceMerge || s.opts.MergeRatio < 0 || doc.FaissBytes == 0
	if job := s.takeMerge(); job != nil {
		tx.stageMerge(job)
	}
	if tx.merge {
		s.stopMerge()
		tx.pending |= newFaiss
	}
	// head's FAISS index is shared unless the commit merges (or the delta
	// has outgrown it): then a copy holds exactly the live vectors.
	idx, err := w.head.index.next(w.removeIDs, w.addIDs, w.addVecs, tx.merge)
	if err != nil {
		return err
	}
	w.st.vecs = idx
	if tx.merge {
		// Folded: the base holds exactly the live vectors.
		if err := s.writeFaissNew(idx.base.idx, doc); err != nil {
			return err
		}
		doc.VectorSegments = nil
	} else if !tx.staged {
		// A faiss.index.new left by a commit that failed would be renamed
		// into place if we crashed past this commit point.
		os.Remove(s.path(FaissFile + newSuffix))
	}
	return nil
}

// stageMerge renames a finished background merge's file to
// faiss.index.new if it still fits this commit, else drops it.
func (tx *commitTx) stageMerge(job *mergeJob) {
	s := tx.s
	switch {
	case tx.merge:
		s.drop(job, "this commit merges itself")
	case !job.fits(&tx.doc):
		s.drop(job, "faiss.index changed since the merge began")
	default:
		doc, err := s.stage(job, tx.doc)
		if err != nil {
			s.drop(job, err.Error())
			return
		}
		tx.doc, tx.staged = doc, true
		tx.pending |= newFaiss
		s.log.Debug("installing background merge", "generation", job.gen, "vectors", job.ntotal)
	}
}

// dropUnnamedFaiss removes faiss.index.new when the commit failed before
// its commit point: no commit record names it, and it must not be renamed
// into place by a later recovery.
func (tx *commitTx) dropUnnamedFaiss() {
	if tx.pending&newFaiss != 0 && !tx.s.pastCommitPoint() {
		os.Remove(tx.s.path(FaissFile + newSuffix))
	}
}

// writeVectorSegment is step 3: the commit's vector changes as
// vectors-<generation>.seg, folding in trailing smaller segments
// (vecSegFanout). A commit that merged itself writes none.
func (tx *commitTx) writeVectorSegment() error {
	s, w, doc := tx.s, tx.w, &tx.doc
	if tx.merge || tx.changes == 0 {
		return nil
	}
	segs := doc.VectorSegments
	removed, ids, vecs := w.removeIDs, w.addIDs, w.addVecs
	fold := segsToFold(segs, tx.changes, s.mergingGeneration())
	if fold > 0 {
		r, i, v, err := s.foldVecSegs(segs[len(segs)-fold:], removed, ids, vecs)
		if err != nil {
			// Damage on disk: the next load finds it and rebuilds.
			s.log.Error("reading vector segments to fold them; writing this commit's own", "err", err)
			fold = 0
		} else {
			removed, ids, vecs = r, i, v
		}
	}
	name := vecSegName(doc.Generation + 1)
	ref, err := writeVecSeg(s.path(name), s.version.Dim, removed, ids, vecs)
	if err != nil {
		return fmt.Errorf("write vector segment: %w", err)
	}
	s.count(func(m *MergeStats) { m.SegmentBytes += ref.Bytes })
	ref.Name = name
	doc.VectorSegments = append(slices.Clip(segs[:len(segs)-fold]), ref)
	return nil
}

// writeLexicalSegment is step 4: added chunks make one keyword-index
// segment file; deletions live only in the commit record (which chunks are
// live), so they cost no lexical write.
func (tx *commitTx) writeLexicalSegment() error {
	s, w := tx.s, tx.w
	name := lexical.SegmentName(tx.doc.Generation + 1)
	lex, raw, err := w.head.lex.Delete(w.removeIDs).Add(name, w.addDocs, tx.pending&newManifest != 0)
	if err != nil {
		return err
	}
	if raw != nil {
		if err := writeSynced(s.path(name), func(out io.Writer) error { _, err := out.Write(raw); return err }); err != nil {
			return fmt.Errorf("write lexical segment: %w", err)
		}
	}
	tx.lex = lex
	tx.doc.Lexical = lex.Segments()
	return nil
}

// writeFileEntries is step 5: the changed file entries are appended to the
// file log, or, when the log has grown, every entry is written afresh as
// files.json.new (a checkpoint, around it this commit's record).
func (tx *commitTx) writeFileEntries() error {
	s, w, doc := tx.s, tx.w, &tx.doc
	doc.Generation++
	if tx.end == EndOfRun {
		doc.LastReindex = s.opts.Clock().UTC().Format(time.RFC3339)
	}
	changed := slices.Sorted(maps.Keys(w.changed))
	var err error
	switch {
	case checkpointDue(doc.FileList, len(changed), w.st.files.Len(), s.opts.FileLogMin):
		if doc.FileList, err = s.writeCheckpoint(*doc, w.st.files); err != nil {
			return fmt.Errorf("write %s: %w", FilesFile, err)
		}
		tx.pending |= newFileList
	case len(changed) > 0:
		doc.FileList, err = s.appendFileLog(*doc.FileList, w.st.files, changed)
	}
	return err
}

// writeCommitPoint is step 6: commit.json.new, durable, is the commit point.
func (tx *commitTx) writeCommitPoint() error { return tx.s.writeCommitNew(&tx.doc) }

// renameIntoPlace is step 7: the files written beside the committed ones
// take their names, commit.json last. Recovery completes this after a
// crash.
func (tx *commitTx) renameIntoPlace() error {
	if err := tx.s.finishCommit(tx.pending); err != nil {
		return err
	}
	if tx.pending&newFaiss != 0 {
		tx.s.count(func(m *MergeStats) { m.Merges++ })
	}
	return nil
}

// removeUnlisted is step 8: segment files and logs commit.json no longer
// lists are deleted.
func (tx *commitTx) removeUnlisted() {
	tx.s.removeUnlisted(&tx.doc)
	tx.s.private()
}

// publish is step 9: the writer's state moves to the commit, its snapshot
// is published, and a background merge starts if the segments are past
// the threshold and none runs.
func (tx *commitTx) publish() error {
	s, w, st := tx.s, tx.w, tx.w.st
	st.doc, st.live, st.lex = tx.doc, tx.live, tx.lex
	clear(w.changed)
	// edit's slices are emptied below but keep their contents until the
	// next PutFile.
	edit := &codeEdit{prev: w.head, removed: w.removeIDs, addIDs: w.addIDs, addVecs: w.addVecs}
	w.pending.Reset()
	w.addVecs, w.addIDs, w.removeIDs, w.addDocs = w.addVecs[:0], w.addIDs[:0], w.removeIDs[:0], w.addDocs[:0]
	w.dirty, w.forceMerge = false, false
	w.midRun = tx.end == MidRun
	if tx.merge {
		s.log.Debug("merged vector segments into faiss.index", "vectors", tx.doc.FaissNtotal)
	}
	if tx.pending&newManifest != 0 {
		s.log.Info("compacted index", "live_chunks", tx.live.Len())
	}
	snap, err := s.snapshotOf(st, edit)
	if err != nil {
		return err
	}
	snap.tryRef() // the writer's reference, as head
	w.head.Release()
	w.head = snap
	bg := !tx.merge && s.overMergeThreshold(&tx.doc)
	s.introducePublish(introduction{snap: snap, stamp: s.stampFiles(), doc: tx.doc, startMerge: bg})
	return nil
}
