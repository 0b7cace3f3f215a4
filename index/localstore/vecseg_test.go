package localstore

import (
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/index/scan"
)

// dirFiles lists the names in dir that keep accepts, sorted.
func dirFiles(t *testing.T, dir string, keep func(name string) bool) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if keep(e.Name()) {
			out = append(out, e.Name())
		}
	}
	return out
}

func segFiles(t *testing.T, dir string) []string {
	t.Helper()
	return dirFiles(t, dir, isVecSegFile)
}

// faissIDs reads faiss.index alone, as any FAISS reader would.
func faissIDs(t *testing.T, dir string) []int64 {
	t.Helper()
	idx, err := faiss.ReadIndex(filepath.Join(dir, FaissFile))
	if err != nil {
		t.Fatal(err)
	}
	defer idx.Close()
	_, ids, err := idx.Export(nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	return ids
}

func liveIDs(t *testing.T, s *Store) []int64 {
	t.Helper()
	snap := s.Acquire()
	defer snap.Release()
	var ids []int64
	for _, f := range snap.files.All() {
		ids = append(ids, f.ChunkIDs...)
	}
	slices.Sort(ids)
	return ids
}

// TestSmallCommitsWriteSegmentsThenMerge: after the first commit writes
// faiss.index, a one-file change writes only a segment (faiss.index is not
// touched); a reopened index serves base plus segments; once the segments
// outgrow the merge ratio a commit folds them into faiss.index, which then
// holds exactly the live vectors and no segment is left.
func TestSmallCommitsWriteSegmentsThenMerge(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(41, 42))
	s := openStore(t, dir)
	w := begin(t, s)
	for i := range 20 {
		putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 5) // 100 chunks
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	base := mustStat(t, filepath.Join(dir, FaissFile))
	// 3 commits of 8 changes (5 removed, 3 added) stay under 0.25 × 100.
	var last [][]float32
	for i := range 3 {
		last = putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 3)
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
		now := mustStat(t, filepath.Join(dir, FaissFile))
		if !os.SameFile(base, now) || now.Size() != base.Size() {
			t.Fatalf("commit %d rewrote faiss.index for a one-file change", i)
		}
		if got := segFiles(t, dir); len(got) != i+1 {
			t.Fatalf("commit %d: segments %v", i, got)
		}
	}
	w.Close()
	s2 := openStore(t, dir)
	if h := topHit(t, s2, last[2]); h.Record.Path != "f02.md" || h.Record.ChunkIndex != 2 || h.Score < 0.9999 {
		t.Fatalf("after reopening with segments: %+v", h)
	}
	if n := s2.Acquire(); n.Chunks() != 100-3*2 {
		t.Fatalf("chunks %d, want 94", n.Chunks())
	} else {
		n.Release()
	}
	// The fourth change crosses 0.25 × 100: the commit writes its segment
	// and a background merge folds them all into faiss.index, installed
	// once the writer lets go of the lock.
	w2, err := s2.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w2.rebuilt {
		t.Fatal("an index with segments was rebuilt")
	}
	putFile(t, w2, rng, "f03.md", 3)
	if err := w2.Commit(true); err != nil {
		t.Fatal(err)
	}
	if now := mustStat(t, filepath.Join(dir, FaissFile)); !os.SameFile(base, now) {
		t.Fatal("the commit that crossed the threshold rewrote faiss.index itself")
	}
	if got := segFiles(t, dir); len(got) != 4 {
		t.Fatalf("segments before the merge is installed: %v", got)
	}
	w2.Close()
	if err := s2.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	if st := s2.MergeStats(); st.Merges != 1 || st.Running {
		t.Fatalf("merge stats %+v", st)
	}
	if got := segFiles(t, dir); len(got) != 0 {
		t.Fatalf("segments left after a merge: %v", got)
	}
	doc, _ := readDoc(t, dir)
	if len(doc.VectorSegments) != 0 || doc.FaissNtotal != 92 {
		t.Fatalf("commit.json after merge: %d segments, faiss_ntotal %d", len(doc.VectorSegments), doc.FaissNtotal)
	}
	if got, want := faissIDs(t, dir), liveIDs(t, s2); !slices.Equal(got, want) {
		t.Fatalf("faiss.index after a merge holds %d ids, live are %d", len(got), len(want))
	}
}

func TestMergeFoldsEverySegment(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(43, 44))
	s := openStore(t, dir)
	w := begin(t, s)
	defer w.Close()
	for i := range 10 {
		putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 10)
	}
	mustCommit(t, w, MidRun)
	w.RemoveFile("f01.md")
	mustCommit(t, w, MidRun)
	putFile(t, w, rng, "new.md", 2)
	mustCommit(t, w, MidRun)
	if got := segFiles(t, dir); len(got) != 2 {
		t.Fatalf("segments %v, want 2", got)
	}
	if err := w.Merge(); err != nil {
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 0 {
		t.Fatalf("segments after Merge: %v", got)
	}
	if got, want := faissIDs(t, dir), liveIDs(t, s); !slices.Equal(got, want) || len(want) != 92 {
		t.Fatalf("faiss.index holds %d ids, live %d (want 92)", len(got), len(want))
	}
}

// segmentStore is a committed index with two segments on top of its base.
func segmentStore(t *testing.T) (dir string, a1 []float32) {
	t.Helper()
	dir, a1 = committedStore(t)
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewPCG(45, 46))
	for i := range 2 {
		putFile(t, w, rng, fmt.Sprintf("seg%d.md", i), 1)
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	w.Close()
	s.Close()
	if got := segFiles(t, dir); len(got) != 2 {
		t.Fatalf("segments %v, want 2", got)
	}
	return dir, a1
}

// TestDamagedSegmentIsRebuiltNotServed: a segment changed in place, cut
// short or gone makes the index load as nothing, and the writer rebuilds.
func TestDamagedSegmentIsRebuiltNotServed(t *testing.T) {
	for name, damage := range map[string]func(t *testing.T, path string){
		"bytes changed": func(t *testing.T, path string) {
			fi := mustStat(t, path)
			overwrite(t, path, fi.Size()-5, []byte{0x7f, 0x7f})
		},
		"cut short": func(t *testing.T, path string) { os.Truncate(path, 30) },
		"missing":   func(t *testing.T, path string) { os.Remove(path) },
	} {
		t.Run(name, func(t *testing.T) {
			dir, _ := segmentStore(t)
			damage(t, filepath.Join(dir, segFiles(t, dir)[1]))
			s := openStore(t, dir)
			if n := s.Acquire(); n.Chunks() != 0 {
				t.Fatalf("damaged segment served: %d chunks", n.Chunks())
			} else {
				n.Release()
			}
			w, err := s.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if !w.rebuilt {
				t.Fatal("damaged segment not rebuilt")
			}
			if got := segFiles(t, dir); len(got) != 0 {
				t.Fatalf("segments left after the reset: %v", got)
			}
		})
	}
}

// TestInterruptedMerge leaves what a merge killed at each step leaves and
// checks the index opens consistent: the segments' state before the commit
// point, the merged state after it.
func TestInterruptedMerge(t *testing.T) {
	t.Run("killed before the commit point", func(t *testing.T) {
		dir, a1 := segmentStore(t)
		segs := segFiles(t, dir)
		// A merge writes faiss.index.new first: half of one is all it left.
		mustWrite(t, filepath.Join(dir, FaissFile+newSuffix), []byte("IxM2 half"), 0o644)
		s := openStore(t, dir)
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		if w.rebuilt {
			t.Fatal("rolled back merge rebuilt the index")
		}
		if _, err := os.Stat(filepath.Join(dir, FaissFile+newSuffix)); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("faiss.index.new not discarded")
		}
		if got := segFiles(t, dir); !slices.Equal(got, segs) {
			t.Fatalf("segments %v, want %v", got, segs)
		}
		if h := topHit(t, s, a1); h.Record.Path != "a.md" {
			t.Fatalf("%+v", h)
		}
		if n := s.Acquire(); n.Chunks() != 14 {
			t.Fatalf("chunks %d, want 14", n.Chunks())
		} else {
			n.Release()
		}
	})
	t.Run("killed after the commit point", func(t *testing.T) {
		dir, a1 := segmentStore(t)
		// Run a real merge, then put back what a kill before the renames
		// leaves: the merge's files as .new, the old files.json and the old
		// faiss.index and segments in place.
		keep := map[string][]byte{}
		for _, n := range append([]string{CommitFile, FilesFile, FaissFile}, segFiles(t, dir)...) {
			b := mustRead(t, filepath.Join(dir, n))
			keep[n] = b
		}
		s := openStore(t, dir)
		w := begin(t, s)
		if err := w.Merge(); err != nil {
			t.Fatal(err)
		}
		w.Close()
		s.Close()
		for _, n := range []string{CommitFile, FaissFile} {
			if err := os.Rename(filepath.Join(dir, n), filepath.Join(dir, n+newSuffix)); err != nil {
				t.Fatal(err)
			}
		}
		for n, b := range keep {
			mustWrite(t, filepath.Join(dir, n), b, 0o644)
		}
		s2 := openStore(t, dir)
		w2, err := s2.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w2.Close()
		if w2.rebuilt {
			t.Fatal("rolled forward merge rebuilt the index")
		}
		if got := segFiles(t, dir); len(got) != 0 {
			t.Fatalf("segments left after rolling a merge forward: %v", got)
		}
		if got, want := faissIDs(t, dir), liveIDs(t, s2); !slices.Equal(got, want) || len(want) != 14 {
			t.Fatalf("faiss.index holds %d ids, live %d (want 14)", len(got), len(want))
		}
		if h := topHit(t, s2, a1); h.Record.Path != "a.md" {
			t.Fatalf("%+v", h)
		}
	})
}

// TestMergeOnFullDisk: when faiss.index.new cannot be written the commit
// fails, nothing committed changes, and the next commit succeeds.
func TestMergeOnFullDisk(t *testing.T) {
	dir, a1 := segmentStore(t)
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	// A directory in the way stands in for a full disk: the write fails.
	if err := os.Mkdir(filepath.Join(dir, FaissFile+newSuffix), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := w.Merge(); err == nil {
		t.Fatal("merge succeeded without faiss.index.new")
	}
	if h := topHit(t, s, a1); h.Record.Path != "a.md" {
		t.Fatalf("%+v", h)
	}
	// The failed commit cleans up what stood at faiss.index.new before its
	// commit point (the empty directory too).
	if _, err := os.Stat(filepath.Join(dir, FaissFile+newSuffix)); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("faiss.index.new after the failed merge: %v", err)
	}
	if err := w.Merge(); err != nil {
		t.Fatal(err)
	}
	if got, want := faissIDs(t, dir), liveIDs(t, s); !slices.Equal(got, want) || len(want) != 14 {
		t.Fatalf("faiss.index holds %d ids, live %d", len(got), len(want))
	}
}

// TestCommitEditsScanCodes: each commit edits the previous snapshot's int8
// codes instead of building them again; after many random commits (files
// replaced, removed and added, past the codes' compaction bound) they must
// give the same candidates as codes built fresh from the live vectors.
func TestCommitEditsScanCodes(t *testing.T) {
	rng := rand.New(rand.NewPCG(51, 52))
	s := openStoreWith(t, t.TempDir(), index.Options{Compaction: testCompaction, Scan: index.ScanOptions{Min: 500}})
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	files := 30
	for f := range files {
		putFile(t, w, rng, fmt.Sprintf("f%03d.md", f), 20)
	}
	mustCommit(t, w, MidRun)
	for commit := range 60 {
		for range 1 + rng.IntN(3) {
			switch f := rng.IntN(files); rng.IntN(3) {
			case 0:
				w.RemoveFile(fmt.Sprintf("f%03d.md", f))
			case 1:
				putFile(t, w, rng, fmt.Sprintf("f%03d.md", f), 1+rng.IntN(25))
			default:
				putFile(t, w, rng, fmt.Sprintf("f%03d.md", files), 1+rng.IntN(25))
				files++
			}
		}
		if err := w.Commit(commit%20 == 19); err != nil {
			t.Fatal(err)
		}
		if commit%5 != 4 {
			continue
		}
		snap := s.Acquire()
		vecs, ids, err := snap.index.Export(nil, nil)
		if err != nil {
			t.Fatal(err)
		}
		if snap.codes.Len() != len(ids) || len(ids) != snap.Chunks() {
			t.Fatalf("commit %d: codes hold %d rows, the index %d, live chunks %d", commit, snap.codes.Len(), len(ids), snap.Chunks())
		}
		fresh, err := scan.Build(vecs, ids, testDim)
		if err != nil {
			t.Fatal(err)
		}
		for range 5 {
			q := unitVec(rng)
			if got, want := snap.codes.Candidates(q, 50, 0, nil), fresh.Candidates(q, 50, 0, nil); !slices.Equal(got, want) {
				t.Fatalf("commit %d: edited codes give %v, a fresh build %v", commit, got[:5], want[:5])
			}
		}
		snap.Release()
	}
}
