package localstore

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

const testDim = 8

var testVersion = schema.Version{Schema: schema.SchemaVersion, Model: "test-model", Dim: testDim, ChunkSize: 1000, ChunkOverlap: 200, MaxTokens: 256}

func unitVec(rng *rand.Rand) []float32 {
	v := make([]float32, testDim)
	var n float64
	for i := range v {
		v[i] = float32(rng.NormFloat64())
		n += float64(v[i] * v[i])
	}
	for i := range v {
		v[i] /= float32(math.Sqrt(n))
	}
	return v
}

// putFile indexes n chunks for path and returns their vectors.
func putFile(t *testing.T, w *Writer, rng *rand.Rand, path string, n int) [][]float32 {
	t.Helper()
	recs := make([]schema.Record, n)
	var flat []float32
	var vecs [][]float32
	for i := range recs {
		recs[i] = schema.Record{ChunkIndex: i, CharStart: i * 800, CharEnd: i*800 + 1000, Text: fmt.Sprintf("%s chunk %d", path, i)}
		v := unitVec(rng)
		vecs = append(vecs, v)
		flat = append(flat, v...)
	}
	err := w.PutFile(schema.FileEntry{Path: path, Mtime: 1739650000.123, Size: int64(n), Checksum: "sha256:" + path, Ext: filepath.Ext(path)}, recs, flat)
	if err != nil {
		t.Fatal(err)
	}
	return vecs
}

// testCompaction compacts small test indexes.
var testCompaction = index.Compaction{Min: 4, Ratio: 0.4}

func openStore(t *testing.T, dir string) *Store {
	t.Helper()
	return openStoreWith(t, dir, index.Options{Compaction: testCompaction})
}

func openStoreWith(t *testing.T, dir string, opts index.Options) *Store {
	t.Helper()
	s, err := Open(dir, testVersion, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// mustStat, mustRead, mustWrite and mustRemove are the os calls of test
// setup, failing the test on an error.
func mustStat(t *testing.T, path string) os.FileInfo {
	t.Helper()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	return fi
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return raw
}

func mustWrite(t *testing.T, path string, data []byte, perm os.FileMode) {
	t.Helper()
	if err := os.WriteFile(path, data, perm); err != nil {
		t.Fatal(err)
	}
}

func mustRemove(t *testing.T, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// begin starts a writer on s, failing the test if it cannot.
func begin(t *testing.T, s *Store) *Writer {
	t.Helper()
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	return w
}

// mustCommit commits w, failing the test on an error.
func mustCommit(t *testing.T, w *Writer, end RunEnd) {
	t.Helper()
	if err := w.commit(end); err != nil {
		t.Fatal(err)
	}
}

func topHit(t *testing.T, s *Store, q []float32) index.Hit {
	t.Helper()
	snap := s.Acquire()
	defer snap.Release()
	hits, err := snap.Search(q, 1)
	if err != nil || len(hits) != 1 {
		t.Fatalf("search: %v hits=%d", err, len(hits))
	}
	return hits[0]
}

func TestCommitReopenSearch(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(1, 2))
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	a := putFile(t, w, rng, "a.md", 3)
	putFile(t, w, rng, "dir/b.txt", 2)
	if got := s.Acquire(); got.Chunks() != 0 {
		t.Fatalf("uncommitted chunks visible: %d", got.Chunks())
	} else {
		got.Release()
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	h := topHit(t, s, a[1])
	if h.Record.Path != "a.md" || h.Record.ChunkIndex != 1 || h.Record.Text != "a.md chunk 1" || h.Score < 0.9999 {
		t.Fatalf("hit = %+v", h)
	}
	for _, name := range []string{FaissFile, ManifestFile, FilesFile, CommitFile, VersionFile, LockFile} {
		if _, err := os.Stat(filepath.Join(dir, name)); err != nil {
			t.Errorf("missing %s: %v", name, err)
		}
	}
	s2 := openStore(t, dir)
	h2 := topHit(t, s2, a[1])
	if h2.Record.ID != h.Record.ID || h2.Record.Text != h.Record.Text {
		t.Fatalf("after reopen: %+v vs %+v", h2, h)
	}
	snap := s2.Acquire()
	defer snap.Release()
	if snap.Files() != 2 || snap.Chunks() != 5 {
		t.Fatalf("files=%d chunks=%d", snap.Files(), snap.Chunks())
	}
}

func TestReplaceRemoveTombstonesAndCompaction(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	s := openStore(t, dir)
	w := begin(t, s)
	old := putFile(t, w, rng, "a.md", 4)
	keep := putFile(t, w, rng, "keep.md", 10)
	gone := putFile(t, w, rng, "gone.md", 2)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()

	w = begin(t, s)
	fresh := putFile(t, w, rng, "a.md", 2) // replaces 4 chunks: 4 tombstones
	w.RemoveFile("gone.md")
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	snap := s.Acquire()
	if snap.Chunks() != 12 {
		t.Fatalf("live chunks = %d, want 12", snap.Chunks())
	}
	if snap.Tombstones() != 0 {
		t.Fatalf("6 tombstones over 12 live should have compacted, have %d", snap.Tombstones())
	}
	snap.Release()
	for _, v := range append(old, gone...) {
		h := topHit(t, s, v)
		if h.Record.Path == "gone.md" || (h.Record.Path == "a.md" && h.Score > 0.9999) {
			t.Fatalf("deleted chunk returned: %+v", h)
		}
	}
	if h := topHit(t, s, fresh[1]); h.Record.Path != "a.md" || h.Score < 0.9999 {
		t.Fatalf("new chunk not found: %+v", h)
	}
	if h := topHit(t, s, keep[7]); h.Record.Path != "keep.md" || h.Record.ChunkIndex != 7 {
		t.Fatalf("kept chunk not found after compaction: %+v", h)
	}
	// Compaction rewrote the manifest with live records only.
	raw := mustRead(t, filepath.Join(dir, ManifestFile))
	if n := countLines(raw); n != 12 {
		t.Fatalf("manifest lines after compaction = %d, want 12", n)
	}
	// And reopening agrees.
	s2 := openStore(t, dir)
	if h := topHit(t, s2, keep[7]); h.Record.Path != "keep.md" || h.Record.ChunkIndex != 7 {
		t.Fatalf("after reopen: %+v", h)
	}
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

func TestBusyInProcess(t *testing.T) {
	dir := t.TempDir()
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Begin(); !errors.Is(err, index.ErrLocked) {
		t.Fatalf("second Begin: %v, want ErrLocked", err)
	}
	w.Close()
	w2, err := s.Begin()
	if err != nil {
		t.Fatalf("Begin after Close: %v", err)
	}
	w2.Close()
	if _, err := os.Stat(filepath.Join(dir, LockFile)); err != nil {
		t.Fatalf("lock file removed: %v", err)
	}
}

// TestRefreshSeesCommitWithSameStat: another process's commit.json that
// came back on the inode the reader loaded from, with its size and mtime
// (inode reuse within one timestamp tick, made here by hand), is still a
// new commit to Refresh.
func TestRefreshSeesCommitWithSameStat(t *testing.T) {
	dir, _ := committedStore(t)
	commit := filepath.Join(dir, CommitFile)
	// Room for the next commit's record at this one's size: JSON allows
	// trailing white space.
	raw, err := os.ReadFile(commit)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(commit, append(raw, bytes.Repeat([]byte(" "), 4096)...), 0o644); err != nil {
		t.Fatal(err)
	}
	reader := openStore(t, dir)
	loaded, err := os.Stat(commit)
	if err != nil {
		t.Fatal(err)
	}
	kept := filepath.Join(dir, "kept-inode")
	if err := os.Link(commit, kept); err != nil {
		t.Fatal(err)
	}

	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	q := putFile(t, w, rand.New(rand.NewPCG(23, 24)), "d.md", 2)[0]
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()

	// The new record on the loaded inode, at the loaded size and mtime.
	if raw, err = os.ReadFile(commit); err != nil {
		t.Fatal(err)
	}
	pad := int(loaded.Size()) - len(raw)
	if pad < 0 {
		t.Fatalf("the new commit.json has %d bytes, more than the %d it must fit in", len(raw), loaded.Size())
	}
	if err := os.WriteFile(kept, append(raw, bytes.Repeat([]byte(" "), pad)...), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(kept, commit); err != nil {
		t.Fatal(err)
	}
	if err := os.Chtimes(commit, loaded.ModTime(), loaded.ModTime()); err != nil {
		t.Fatal(err)
	}
	if now, err := os.Stat(commit); err != nil || !os.SameFile(now, loaded) || now.Size() != loaded.Size() || !now.ModTime().Equal(loaded.ModTime()) {
		t.Fatalf("commit.json does not look as loaded: %v", err)
	}

	if ok, err := reader.Refresh(); !ok || err != nil {
		t.Fatalf("refresh after another commit: %v %v", ok, err)
	}
	if h := topHit(t, reader, q); h.Record.Path != "d.md" {
		t.Fatalf("refreshed reader finds %+v, want d.md", h)
	}
}

func TestVersionMismatchRebuilds(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	s := openStore(t, dir)
	w := begin(t, s)
	putFile(t, w, rng, "a.md", 3)
	mustCommit(t, w, EndOfRun)
	w.Close()
	s.Close()

	other := testVersion
	other.ChunkSize = 500
	s2, err := Open(dir, other, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	snap := s2.Acquire()
	if snap.Chunks() != 0 {
		t.Fatalf("vectors of another version served: %d chunks", snap.Chunks())
	}
	snap.Release()
	w2, err := s2.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if !w2.rebuilt || len(w2.Before()) != 0 {
		t.Fatalf("rebuilt=%v before=%d", w2.rebuilt, len(w2.Before()))
	}
	w2.Close()
}

// TestInterruptedCommits simulates a crash at each step of a commit by
// leaving the files a crash would leave, then checks Begin recovers a
// consistent index: the old one before the commit point, the new one after.
func TestInterruptedCommits(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	build := func(t *testing.T) (string, []float32, []float32) {
		dir := t.TempDir()
		s := openStoreWith(t, dir, index.Options{})
		w := begin(t, s)
		a := putFile(t, w, rng, "a.md", 2)
		mustCommit(t, w, EndOfRun)
		w.Close()
		// Second commit prepared by hand: copy what Commit would write.
		w = begin(t, s)
		b := putFile(t, w, rng, "b.md", 2)
		mustCommit(t, w, EndOfRun)
		w.Close()
		s.Close()
		return dir, a[0], b[0]
	}
	t.Run("torn manifest tail is cut", func(t *testing.T) {
		dir, a, _ := build(t)
		f, _ := os.OpenFile(filepath.Join(dir, ManifestFile), os.O_APPEND|os.O_WRONLY, 0)
		f.WriteString(`{"id":99,"path":"x.md","te`)
		f.Close()
		s := openStore(t, dir)
		if h := topHit(t, s, a); h.Record.Path != "a.md" {
			t.Fatalf("%+v", h)
		}
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		raw := mustRead(t, filepath.Join(dir, ManifestFile))
		if raw[len(raw)-1] != '\n' || countLines(raw) != 4 {
			t.Fatalf("tail not cut: %q", raw[len(raw)-40:])
		}
	})
	t.Run("crash before commit point rolls back", func(t *testing.T) {
		dir, a, _ := build(t)
		mustWrite(t, filepath.Join(dir, FaissFile+newSuffix), []byte("half a faiss file"), 0o644)
		s := openStore(t, dir)
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		if _, err := os.Stat(filepath.Join(dir, FaissFile+newSuffix)); !errors.Is(err, os.ErrNotExist) {
			t.Fatal("faiss.index.new not discarded")
		}
		if h := topHit(t, s, a); h.Record.Path != "a.md" {
			t.Fatalf("%+v", h)
		}
	})
	t.Run("crash after commit point rolls forward", func(t *testing.T) {
		dir, a, b := build(t)
		// Pretend the last commit stopped after writing commit.json.new:
		// move the committed files back to their .new names; the previous
		// state is files.json, the first commit's checkpoint.
		s := openStore(t, dir)
		w := begin(t, s)
		w.RemoveFile("b.md")
		mustCommit(t, w, EndOfRun)
		w.Close()
		s.Close()
		for _, name := range []string{FaissFile, CommitFile} {
			if err := os.Rename(filepath.Join(dir, name), filepath.Join(dir, name+newSuffix)); err != nil {
				t.Fatal(err)
			}
		}
		s2 := openStore(t, dir)
		w2, err := s2.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w2.Close()
		snap := s2.Acquire()
		defer snap.Release()
		if snap.Files() != 1 {
			t.Fatalf("files after roll forward = %d, want 1", snap.Files())
		}
		if h := topHit(t, s2, a); h.Record.Path != "a.md" {
			t.Fatalf("%+v", h)
		}
		if h := topHit(t, s2, b); h.Record.Path == "b.md" {
			t.Fatalf("removed file served: %+v", h)
		}
	})
	t.Run("disagreeing files are rebuilt, never served", func(t *testing.T) {
		dir, _, _ := build(t)
		mustWrite(t, filepath.Join(dir, FaissFile), []byte("garbage"), 0o644)
		s := openStore(t, dir)
		if snap := s.Acquire(); snap.Chunks() != 0 {
			t.Fatal("damaged index served")
		} else {
			snap.Release()
		}
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		defer w.Close()
		if !w.rebuilt || len(w.Before()) != 0 {
			t.Fatal("damaged index not rebuilt")
		}
	})
}

// TestSearchDuringWrites runs searches while a writer commits: none fails,
// every snapshot is internally consistent, and old snapshots stay usable.
func TestSearchDuringWrites(t *testing.T) {
	s := openStore(t, t.TempDir())
	rng := rand.New(rand.NewPCG(9, 10))
	q := unitVec(rng)
	var wg sync.WaitGroup
	stop := make(chan struct{})
	for range 4 {
		loopUntil(stop, &wg, func() { checkSearch(t, s, q, 5) })
	}
	wrng := rand.New(rand.NewPCG(11, 12))
	for i := range 30 {
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		putFile(t, w, wrng, fmt.Sprintf("f%d.md", i%7), 3)
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
		w.Close()
	}
	close(stop)
	wg.Wait()
}

// TestScanFirstPassMatchesExact: with the 4-bit first pass on, searches
// return the same top 10 as FAISS's exact scan, with exact scores.
func TestScanFirstPassMatchesExact(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(13, 14))
	s := openStoreWith(t, dir, index.Options{Compaction: testCompaction, Scan: index.ScanOptions{Min: 1000}})
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for f := range 40 {
		putFile(t, w, rng, fmt.Sprintf("f%02d.md", f), 100)
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fast := s.Acquire()
	defer fast.Release()
	if fast.codes == nil {
		t.Fatal("no scan codes built over 4000 chunks")
	}
	exact := openStoreWith(t, dir, index.Options{Compaction: testCompaction, Scan: index.ScanOptions{Min: 1 << 30}}).Acquire()
	defer exact.Release()
	if exact.codes != nil {
		t.Fatal("codes built below Scan.Min")
	}
	same, total := 0, 0
	for range 50 {
		q := unitVec(rng)
		a, err := fast.Search(q, 10)
		if err != nil {
			t.Fatal(err)
		}
		b, _ := exact.Search(q, 10)
		want := map[int64]float32{}
		for _, h := range b {
			want[h.Record.ID] = h.Score
		}
		for _, h := range a {
			total++
			if sc, ok := want[h.Record.ID]; ok {
				same++
				if math.Abs(float64(sc-h.Score)) > 1e-5 {
					t.Fatalf("score of %d: %v vs exact %v", h.Record.ID, h.Score, sc)
				}
			}
		}
	}
	if total != 500 || float64(same)/float64(total) < 0.99 {
		t.Fatalf("recall@10 = %d/%d", same, total)
	}
}

// TestLastReindexFromClock: a run's last commit records the store's clock
// as the last reindex; a commit inside a run leaves it.
func TestLastReindexFromClock(t *testing.T) {
	dir := t.TempDir()
	now := time.Date(2030, 1, 2, 3, 4, 5, 0, time.FixedZone("x", 3600))
	// No background merge: it would read the clock from its goroutine.
	s := openStoreWith(t, dir, index.Options{MergeRatio: 1e9, Clock: func() time.Time { return now }})
	w := begin(t, s)
	defer w.Close()
	rng := rand.New(rand.NewPCG(1, 2))
	putFile(t, w, rng, "a.md", 1)
	mustCommit(t, w, EndOfRun)
	now = now.Add(time.Hour)
	putFile(t, w, rng, "b.md", 1)
	mustCommit(t, w, MidRun)
	sum, err := ReadSummary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if sum.LastReindex != "2030-01-02T02:04:05Z" {
		t.Fatalf("last reindex %q, want the clock's time of the run's end in UTC", sum.LastReindex)
	}
	if sum.VectorIndex != LocalVectorIndex {
		t.Errorf("vector index %q", sum.VectorIndex)
	}
}

// Deleting the index folder under a running process (to start afresh) must
// not leave it unable to write: the next writer makes the folder again and
// indexes into it, and a folder whose parent is gone as well is not made.
func TestBeginAfterIndexFolderDeleted(t *testing.T) {
	parent := filepath.Join(t.TempDir(), "data")
	dir := filepath.Join(parent, "index")
	rng := rand.New(rand.NewPCG(3, 4))
	s := openStore(t, dir)
	w := begin(t, s)
	putFile(t, w, rng, "old.md", 2)
	mustCommit(t, w, EndOfRun)
	w.Close()

	if err := os.RemoveAll(dir); err != nil {
		t.Fatal(err)
	}
	w = begin(t, s)
	if got := len(w.Before()); got != 0 || !w.rebuilt || w.Base() != nil {
		t.Errorf("writer over a deleted index: %d files before, rebuilt %v, base %v; want 0, true, nil", got, w.rebuilt, w.Base())
	}
	b := putFile(t, w, rng, "new.md", 2)
	mustCommit(t, w, EndOfRun)
	w.Close()
	if h := topHit(t, s, b[0]); h.Record.Path != "new.md" {
		t.Errorf("top hit after rebuilding: %q; want new.md", h.Record.Path)
	}
	s2 := openStore(t, dir)
	snap := s2.Acquire()
	if snap.Files() != 1 || snap.Chunks() != 2 {
		t.Errorf("reopened rebuilt index: %d files, %d chunks; want 1, 2", snap.Files(), snap.Chunks())
	}
	snap.Release()

	if err := os.RemoveAll(parent); err != nil {
		t.Fatal(err)
	}
	if w, err := s.Begin(); err == nil {
		w.Close()
		t.Fatal("Begin made an index folder whose parent folder is gone")
	}
	if _, err := os.Stat(parent); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("parent folder after Begin: %v; want it still missing", err)
	}
}
