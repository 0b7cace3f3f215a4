package localstore

import (
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
)

func mergeFiles(t *testing.T, dir string) []string {
	t.Helper()
	return dirFiles(t, dir, func(name string) bool { return strings.HasPrefix(name, mergeFilePrefix) })
}

// mergingStore is an open store with 100 chunks in faiss.index and a writer;
// crossMerge makes the commits that start a background merge.
func mergingStore(t *testing.T, opts index.Options) (dir string, s *Store, w *Writer, rng *rand.Rand) {
	t.Helper()
	dir = t.TempDir()
	rng = rand.New(rand.NewPCG(61, 62))
	opts.Compaction.Min = 1 << 20 // no compaction: it would not change what is tested
	s, err := Open(dir, testVersion, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	w, err = s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 20 {
		putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 5)
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	return dir, s, w, rng
}

// crossMerge commits four one-file changes of 8 vectors each: the fourth
// crosses 0.25 × 100 and starts a background merge at generation 5.
func crossMerge(t *testing.T, w *Writer, rng *rand.Rand) (last []float32) {
	t.Helper()
	for i := range 4 {
		last = putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 3)[2]
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	return last
}

// checkReopens opens dir as another process would and checks it serves
// the live ids of s and finds q in path.
func checkReopens(t *testing.T, dir string, s *Store, q []float32, path string) {
	t.Helper()
	s2 := openStore(t, dir)
	if got, want := liveIDs(t, s2), liveIDs(t, s); !slices.Equal(got, want) || len(got) == 0 {
		t.Fatalf("reopened index has %d live ids, this store %d", len(got), len(want))
	}
	if h := topHit(t, s2, q); h.Record.Path != path || h.Score < 0.9999 {
		t.Fatalf("reopened index finds %+v, want %s", h, path)
	}
	s2.Close()
}

// TestBackgroundMergeInstalledByNextCommit: the commit crossing the
// threshold writes only its segment; the merge written meanwhile becomes
// faiss.index at the writer's next commit, which keeps its own segment.
func TestBackgroundMergeInstalledByNextCommit(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{})
	defer w.Close()
	base := mustStat(t, filepath.Join(dir, FaissFile))
	crossMerge(t, w, rng)
	atG := liveIDs(t, s)
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	// The writer holds the locks: the merge waits beside the index.
	if got := mergeFiles(t, dir); len(got) != 1 || !strings.HasPrefix(got[0], mergeFilePrefix+"0000000005-") {
		t.Fatalf("merge files %v", got)
	}
	if now := mustStat(t, filepath.Join(dir, FaissFile)); !os.SameFile(base, now) {
		t.Fatal("faiss.index replaced before a commit installed the merge")
	}
	last := putFile(t, w, rng, "f04.md", 3)[1]
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	doc, _ := readDoc(t, dir)
	if doc.FaissNtotal != 92 || len(doc.VectorSegments) != 1 || doc.VectorSegments[0].Name != vecSegName(6) {
		t.Fatalf("commit.json after install: faiss_ntotal %d, segments %+v", doc.FaissNtotal, doc.VectorSegments)
	}
	if got := faissIDs(t, dir); !slices.Equal(got, atG) {
		t.Fatalf("faiss.index holds %d ids, the live ones at the merge's generation are %d", len(got), len(atG))
	}
	if got := segFiles(t, dir); !slices.Equal(got, []string{vecSegName(6)}) {
		t.Fatalf("segment files %v", got)
	}
	if got := mergeFiles(t, dir); len(got) != 0 {
		t.Fatalf("merge files left: %v", got)
	}
	if st := s.MergeStats(); st.Merges != 2 || st.Running || st.Failed != 0 { // the first commit's and this one
		t.Fatalf("merge stats %+v", st)
	}
	if h := topHit(t, s, last); h.Record.Path != "f04.md" || h.Record.ChunkIndex != 1 {
		t.Fatalf("%+v", h)
	}
	checkReopens(t, dir, s, last, "f04.md")
}

// blockWrites makes s's FAISS writes wait for release after saying so on
// started.
func blockWrites(s *Store) (started chan string, release chan struct{}) {
	started, release = make(chan string, 1), make(chan struct{})
	s.SetWriteIndex(func(idx *faiss.Index, path string) error {
		started <- path
		<-release
		return faiss.WriteIndex(idx, path)
	})
	return started, release
}

// TestBackgroundMergeInstalledWhenIdle: a merge that finishes after the
// writer closed installs itself, and the next writer in this process
// builds on the installed commit.json without reloading.
func TestBackgroundMergeInstalledWhenIdle(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{})
	started, release := blockWrites(s)
	last := crossMerge(t, w, rng)
	<-started
	w.Close()
	reader := openStore(t, dir) // another process, loaded before the install
	close(release)
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	if ok, err := reader.Refresh(); !ok || err != nil {
		t.Fatalf("another process's refresh after the install: %v %v", ok, err)
	}
	if got, want := liveIDs(t, reader), liveIDs(t, s); !slices.Equal(got, want) {
		t.Fatalf("refreshed reader has %d live ids, the writer's store %d", len(got), len(want))
	}
	if h := topHit(t, reader, last); h.Record.Path != "f03.md" || h.Score < 0.9999 {
		t.Fatalf("refreshed reader finds %+v", h)
	}
	doc, _ := readDoc(t, dir)
	if doc.Generation != 6 || doc.FaissNtotal != 92 || len(doc.VectorSegments) != 0 || len(segFiles(t, dir)) != 0 {
		t.Fatalf("commit.json after an idle install: generation %d, faiss_ntotal %d, segments %v", doc.Generation, doc.FaissNtotal, doc.VectorSegments)
	}
	snap := s.Acquire()
	if snap.doc.Generation != 5 {
		t.Fatalf("the install published snapshot generation %d; snapshots keep theirs", snap.doc.Generation)
	}
	snap.Release()
	w2, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w2.st.doc.Generation != 6 || w2.st.doc.FaissNtotal != 92 {
		t.Fatalf("the next writer starts from generation %d, faiss_ntotal %d", w2.st.doc.Generation, w2.st.doc.FaissNtotal)
	}
	putFile(t, w2, rng, "new.md", 2)
	if err := w2.Commit(true); err != nil {
		t.Fatal(err)
	}
	w2.Close()
	checkReopens(t, dir, s, last, "f03.md")
}

// logSignal is a log sink that closes seen at the first line holding text,
// so a test can wait until a background goroutine got that far.
type logSignal struct {
	logBuffer
	text string
	seen chan struct{}
	once sync.Once
}

func (l *logSignal) Write(p []byte) (int, error) {
	n, err := l.logBuffer.Write(p)
	if strings.Contains(string(p), l.text) {
		l.once.Do(func() { close(l.seen) })
	}
	return n, err
}

// TestBackgroundMergeOnFullDisk: a merge whose write fails is logged, its
// file removed; the index keeps serving and committing, and the next merge
// succeeds.
func TestBackgroundMergeOnFullDisk(t *testing.T) {
	logs := &logSignal{text: "background merge of vector segments failed", seen: make(chan struct{})}
	dir, s, w, rng := mergingStore(t, index.Options{Logger: slog.New(slog.NewTextHandler(logs, nil))})
	defer w.Close()
	s.SetWriteIndex(func(idx *faiss.Index, path string) error {
		mustWrite(t, path, []byte("IxM2 the first blocks"), 0o644)
		return fmt.Errorf("write %s: %w", path, syscall.ENOSPC)
	})
	last := crossMerge(t, w, rng)
	// The merge logs its failure after it stopped being the store's running
	// merge; WaitMerge must still wait for it and report its error.
	select {
	case <-logs.seen:
	case <-time.After(time.Minute): // only so that a missing log line fails instead of hanging
		t.Fatalf("failure not logged: %s", logs.String())
	}
	if err := s.WaitMerge(); err == nil || !strings.Contains(err.Error(), "no space left") {
		t.Fatalf("merge on a full disk: %v", err)
	}
	if got := mergeFiles(t, dir); len(got) != 0 {
		t.Fatalf("failed merge left %v", got)
	}
	if h := topHit(t, s, last); h.Record.Path != "f03.md" {
		t.Fatalf("%+v", h)
	}
	// Room again: the next commit writes its segment and merges anew.
	s.SetWriteIndex(nil)
	putFile(t, w, rng, "f04.md", 3)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if got := segFiles(t, dir); len(got) != 5 {
		t.Fatalf("segments %v, want 5", got)
	}
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	w.Close() // the introducer installs the finished merge as the writer leaves
	if st := s.MergeStats(); st.Failed != 1 || st.Merges != 2 {
		t.Fatalf("merge stats %+v", st)
	}
	if got, want := faissIDs(t, dir), liveIDs(t, s); !slices.Equal(got, want) || len(got) != 90 {
		t.Fatalf("faiss.index holds %d ids, live %d", len(got), len(want))
	}
	checkReopens(t, dir, s, last, "f03.md")
}

// TestCloseStopsMerge: closing the store during a merge stops it, leaves no
// merge file and no goroutine, and the index reopens with its segments.
func TestCloseStopsMerge(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{})
	started, release := blockWrites(s)
	last := crossMerge(t, w, rng)
	path := <-started
	w.Close()
	closed := make(chan struct{})
	go func() { s.Close(); close(closed) }()
	for {
		s.mergeMu.Lock()
		c := s.closed
		s.mergeMu.Unlock()
		if c {
			break
		}
		runtime.Gosched()
	}
	close(release) // the write finishes; the merge sees it was stopped
	<-closed
	if _, err := os.Stat(path); !os.IsNotExist(err) {
		t.Fatalf("stopped merge left %s: %v", path, err)
	}
	if got := segFiles(t, dir); len(got) != 4 {
		t.Fatalf("segments %v, want 4", got)
	}
	s2 := openStore(t, dir)
	if h := topHit(t, s2, last); h.Record.Path != "f03.md" {
		t.Fatalf("%+v", h)
	}
}

// TestKilledMergeFileRemoved: what a kill during a merge leaves (half a
// merge file) is deleted by the next writer, and the index is as committed.
func TestKilledMergeFileRemoved(t *testing.T) {
	dir, segs := segmentStoreDir(t)
	half := filepath.Join(dir, mergeFileName(3)+"1")
	mustWrite(t, half, []byte("IxM2 half a merge"), 0o644)
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if w.rebuilt {
		t.Fatal("a killed merge rebuilt the index")
	}
	if got := mergeFiles(t, dir); len(got) != 0 {
		t.Fatalf("merge files left: %v", got)
	}
	if got := segFiles(t, dir); !slices.Equal(got, segs) {
		t.Fatalf("segments %v, want %v", got, segs)
	}
}

func segmentStoreDir(t *testing.T) (string, []string) {
	dir, _ := segmentStore(t)
	return dir, segFiles(t, dir)
}

// TestMergeFromBeforeAnotherProcessCommitted: a merge finishes while
// another process holds index.lock. If that process only added a segment,
// this process's next commit installs the merge under it; if it merged
// faiss.index itself, the finished merge no longer fits and is dropped.
func TestMergeFromBeforeAnotherProcessCommitted(t *testing.T) {
	for _, otherMerges := range []bool{false, true} {
		t.Run(fmt.Sprintf("other merges %v", otherMerges), func(t *testing.T) {
			dir, s, w, rng := mergingStore(t, index.Options{})
			started, release := blockWrites(s)
			crossMerge(t, w, rng)
			<-started
			w.Close()
			// The other process never merges by itself here.
			other, err := Open(dir, testVersion, index.Options{MergeRatio: 1e9})
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			ow, err := other.Begin()
			if err != nil {
				t.Fatal(err)
			}
			close(release)
			if err := s.WaitMerge(); err != nil {
				t.Fatal(err)
			}
			if st := s.MergeStats(); !st.Running {
				t.Fatal("the merge did not wait for the lock")
			}
			otherVec := putFile(t, ow, rng, "other.md", 2)[0]
			if otherMerges {
				err = ow.Merge()
			} else {
				err = ow.Commit(true)
			}
			if err != nil {
				t.Fatal(err)
			}
			ow.Close()
			w2, err := s.Begin()
			if err != nil {
				t.Fatal(err)
			}
			putFile(t, w2, rng, "mine.md", 2)
			if err := w2.Commit(true); err != nil {
				t.Fatal(err)
			}
			w2.Close()
			st := s.MergeStats()
			doc, _ := readDoc(t, dir)
			if otherMerges {
				if st.Dropped != 1 || st.Merges != 1 || len(doc.VectorSegments) != 1 {
					t.Fatalf("stats %+v, segments %v", st, doc.VectorSegments)
				}
			} else if st.Merges != 2 || doc.FaissNtotal != 92 || len(doc.VectorSegments) != 2 {
				t.Fatalf("stats %+v, faiss_ntotal %d, segments %v", st, doc.FaissNtotal, doc.VectorSegments)
			}
			if got := mergeFiles(t, dir); len(got) != 0 {
				t.Fatalf("merge files left: %v", got)
			}
			checkReopens(t, dir, s, otherVec, "other.md")
		})
	}
}

// TestDamagedSegmentAfterMergeRebuilt: a segment written after the merged
// faiss.index (generation past the merge's) damaged on disk: the index is
// not served and the next writer rebuilds.
func TestDamagedSegmentAfterMergeRebuilt(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{})
	crossMerge(t, w, rng)
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	putFile(t, w, rng, "f04.md", 3)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	if got := segFiles(t, dir); !slices.Equal(got, []string{vecSegName(6)}) {
		t.Fatalf("segments %v", got)
	}
	seg := filepath.Join(dir, vecSegName(6))
	fi := mustStat(t, seg)
	overwrite(t, seg, fi.Size()-9, []byte{0x01, 0x02, 0x03})
	s2 := openStore(t, dir)
	if n := s2.Acquire(); n.Chunks() != 0 {
		t.Fatalf("damaged segment served: %d chunks", n.Chunks())
	} else {
		n.Release()
	}
	w2, err := s2.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w2.Close()
	if !w2.rebuilt || len(segFiles(t, dir)) != 0 {
		t.Fatalf("damaged segment: rebuilt %v, segments %v", w2.rebuilt, segFiles(t, dir))
	}
}

func TestIsMergeFile(t *testing.T) {
	for name, want := range map[string]bool{
		mergeFileName(7):                      true,
		"faiss.index.merge-0000000012-4242":   true,
		"faiss.index.merge-notes.txt":         false,
		"faiss.index.merge-0000000012-42.txt": false,
		"faiss.index.merge-12-42":             false,
		"faiss.index":                         false,
	} {
		if got := isMergeFile(name); got != want {
			t.Errorf("isMergeFile(%q) = %v", name, got)
		}
	}
}

func TestSegsToFold(t *testing.T) {
	seg := func(gen, changes int64) vecSegRef {
		return vecSegRef{Name: vecSegName(gen), Added: changes}
	}
	var refs []vecSegRef
	for g := range int64(7) {
		refs = append(refs, seg(g+1, 20))
	}
	if got := segsToFold(refs[:6], 20, 0); got != 0 {
		t.Fatalf("7th of a class folds %d", got)
	}
	if got := segsToFold(refs, 20, 0); got != 7 {
		t.Fatalf("8th of a class folds %d, want 7", got)
	}
	if got := segsToFold(refs, 20, 3); got != 0 {
		t.Fatalf("with segments up to 3 held by a merge, folds %d", got)
	}
	// Smaller trailing segments always go in; a bigger one stops the run.
	mixed := []vecSegRef{seg(1, 5000), seg(2, 3), seg(3, 1)}
	if got := segsToFold(mixed, 20, 0); got != 2 {
		t.Fatalf("smaller trailing segments: folds %d, want 2", got)
	}
}

// TestManySmallCommitsKeepFewSegments: one-file commits with no merge due
// fold their trailing segments instead of piling up to the 64 that would
// force faiss.index to be rewritten; the folded segments load to the same
// index, and a background merge meanwhile keeps the segments it folds.
func TestManySmallCommitsKeepFewSegments(t *testing.T) {
	dir, s, w, rng := mergingStore(t, index.Options{MergeRatio: 1e9})
	base := mustStat(t, filepath.Join(dir, FaissFile))
	var last []float32
	for i := range 150 {
		last = putFile(t, w, rng, fmt.Sprintf("f%02d.md", i%20), 1+i%5)[0]
		if i%7 == 0 {
			w.RemoveFile(fmt.Sprintf("f%02d.md", (i+3)%20))
		}
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	doc, _ := readDoc(t, dir)
	if n := len(doc.VectorSegments); n > 2*(vecSegFanout-1) || n != len(segFiles(t, dir)) {
		t.Fatalf("150 commits left %d segments listed, %d files", n, len(segFiles(t, dir)))
	}
	if now := mustStat(t, filepath.Join(dir, FaissFile)); !os.SameFile(base, now) {
		t.Fatal("faiss.index rewritten")
	}
	checkReopens(t, dir, s, last, fmt.Sprintf("f%02d.md", 149%20))

	// A background merge holds the segments up to its generation: commits
	// meanwhile fold only later ones, and the merge still installs.
	started, release := blockWrites(s)
	if !s.startMerge(w.head, s.headerOf(w.head)) { // as a commit would
		t.Fatal("no merge started")
	}
	<-started
	held := doc.VectorSegments
	for i := range 20 {
		putFile(t, w, rng, fmt.Sprintf("f%02d.md", i), 2)
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
	}
	now, _ := readDoc(t, dir)
	if !slices.Equal(now.VectorSegments[:len(held)], held) {
		t.Fatal("segments a running merge folds were folded by a commit")
	}
	close(release)
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	last = putFile(t, w, rng, "after.md", 2)[1]
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	if st := s.MergeStats(); st.Merges != 2 || st.Dropped != 0 {
		t.Fatalf("merge stats %+v", st)
	}
	w.Close()
	checkReopens(t, dir, s, last, "after.md")
}

// TestLockedMergeFileKept: recovery leaves a merge file that another
// process still holds locked (it is writing or waiting to install it) and
// removes it once the lock is gone.
func TestLockedMergeFileKept(t *testing.T) {
	dir, _ := segmentStoreDir(t)
	other := filepath.Join(dir, fmt.Sprintf("%s%010d-%d", mergeFilePrefix, 3, os.Getpid()+1))
	held, err := lockFile(other) // a separate open file: flock treats it as another holder
	if err != nil {
		t.Fatal(err)
	}
	held.WriteString("IxM2 a merge being written")
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := mergeFiles(t, dir); !slices.Equal(got, []string{filepath.Base(other)}) {
		t.Fatalf("merge files while locked: %v", got)
	}
	held.Close()
	w, err = s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if got := mergeFiles(t, dir); len(got) != 0 {
		t.Fatalf("merge files after the lock went: %v", got)
	}
}

// TestLastReindexKeptByEveryCommit: a run whose checkpoint committed all
// its work still records when it ended, and a background merge installed
// after the run keeps that time (status once said "never" after both).
func TestLastReindexKeptByEveryCommit(t *testing.T) {
	var clock atomic.Int64 // read by the merge's goroutine too
	at := func(h int) time.Time { return time.Date(2030, 1, 2, h, 0, 0, 0, time.UTC) }
	clock.Store(at(1).Unix())
	dir, s, w, rng := mergingStore(t, index.Options{Clock: func() time.Time { return time.Unix(clock.Load(), 0) }})
	started, release := blockWrites(s)
	var once sync.Once
	free := func() { once.Do(func() { close(release) }) }
	t.Cleanup(free) // before the store closes, should the test fail early
	crossMerge(t, w, rng)
	<-started // the merge is written while the next run goes on

	clock.Store(at(2).Unix())
	putFile(t, w, rng, "late.md", 2)
	if err := w.Commit(MidRun); err != nil { // a checkpoint takes all the run's work
		t.Fatal(err)
	}
	if err := w.Commit(EndOfRun); err != nil {
		t.Fatal(err)
	}
	want := at(2).Format(time.RFC3339)
	if doc, _ := readDoc(t, dir); doc.LastReindex != want {
		t.Fatalf("after a run that ended with a checkpoint: last reindex %q, want %q", doc.LastReindex, want)
	}
	gen := func() int64 { doc, _ := readDoc(t, dir); return doc.Generation }
	before := gen()
	w.Close()
	free()
	if err := s.WaitMerge(); err != nil {
		t.Fatal(err)
	}
	if gen() == before {
		t.Fatal("the background merge was not committed")
	}
	sum, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.LastReindex != want {
		t.Fatalf("after a background merge: last reindex %q, want %q", sum.LastReindex, want)
	}
	if snap := s.Acquire(); snap == nil || snap.LastReindex() != want {
		t.Fatalf("the store's snapshot lost the last reindex")
	} else {
		snap.Release()
	}
}
