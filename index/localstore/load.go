package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

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

// loadCommitted reads the commit record and the file list, faiss.index and
// its segments and the committed part of manifest.jsonl, and checks that
// they agree. A file this process may not read is that error alone, not
// damage (index.IsDamaged), which would have the index thrown away and
// every file embedded again where a chmod or chown is the cure.
func (s *Store) loadCommitted() (*state, error) {
	st, err := s.readCommittedState()
	return st, notDamage(err)
}

// notDamage returns err, or, when it is a file this process may not read,
// that file's error alone, without the index.ErrInconsistent it was
// wrapped in.
func notDamage(err error) error {
	var unreadable *fs.PathError
	if errors.Is(err, fs.ErrPermission) && errors.As(err, &unreadable) {
		return fmt.Errorf("cannot read the index (its files' owner or permissions; a rebuild is not needed): %w", unreadable)
	}
	return err
}

// readCommittedState is loadCommitted without its look at the error.
func (s *Store) readCommittedState() (*state, error) {
	doc, err := readCommitted(s.dir)
	if errors.Is(err, fs.ErrNotExist) {
		return s.emptyState()
	}
	if err != nil {
		return nil, err
	}
	if doc.Schema != schema.SchemaVersion {
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
		return fail("%w", err)
	}
	if bad, first, err := idx.BadNorms(normTolerance); err != nil || bad > 0 {
		return fail("faiss.index holds %d vectors whose length is not 1 (first: chunk %d) %v", bad, first, err)
	}
	live, owner, msum, err := readManifest(s.path(ManifestFile), doc.ManifestBytes)
	if err != nil {
		return fail("%w", err)
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
		return fail("%w", err)
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
		return nil, fmt.Errorf("%w: %w", index.ErrInconsistent, err)
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
