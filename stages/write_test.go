package stages

import (
	"errors"
	"slices"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// memIndex records what the write stage asks of the index. The real
// index.Writer links FAISS, which stage tests stay free of; package
// pipeline runs this stage against the real one.
type memIndex struct {
	before  map[string]*schema.FileEntry
	files   map[string]schema.FileEntry
	chunks  map[string][]schema.Record
	removed []string
	commits []bool
	putErr  error
}

func (m *memIndex) Before() map[string]*schema.FileEntry { return m.before }
func (m *memIndex) PutFile(f schema.FileEntry, recs []schema.Record, vecs []float32) error {
	if m.putErr != nil {
		return m.putErr
	}
	m.files[f.Path], m.chunks[f.Path] = f, recs
	return nil
}
func (m *memIndex) TouchFile(path string, mtime float64, size int64) {
	f := m.files[path]
	f.Mtime, f.Size = mtime, size
	m.files[path] = f
}
func (m *memIndex) RemoveFile(path string) {
	m.removed = append(m.removed, path)
	delete(m.files, path)
	delete(m.chunks, path)
}
func (m *memIndex) Commit(end schema.RunEnd) error {
	m.commits = append(m.commits, bool(end))
	return nil
}
func (m *memIndex) Chunks() int {
	n := 0
	for _, c := range m.chunks {
		n += len(c)
	}
	return n
}

func newMemIndex(paths ...string) *memIndex {
	m := &memIndex{before: map[string]*schema.FileEntry{}, files: map[string]schema.FileEntry{}, chunks: map[string][]schema.Record{}}
	for _, p := range paths {
		m.before[p] = &schema.FileEntry{Path: p}
		m.files[p] = schema.FileEntry{Path: p}
		m.chunks[p] = []schema.Record{{Path: p}}
	}
	return m
}

func TestWriter(t *testing.T) {
	idx := newMemIndex("docs/kept.md", "docs/edited.md", "docs/gone.md", "other/gone.md")
	scope, err := glob.Parse("docs/**")
	if err != nil {
		t.Fatal(err)
	}
	w := &Writer{Index: idx, Glob: scope}
	edited := &FileJob{Rel: "docs/edited.md", Kind: Changed, Old: idx.before["docs/edited.md"], Checksum: "sha256:e",
		Doc: &extract.Document{Skipped: []string{"an embedded image"}}, Reused: 1,
		Chunks: []chunk.Chunk{{Index: 0, Text: "one", CharEnd: 3, LineStart: 1, LineEnd: 1}, {Index: 1, Text: "two", CharStart: 3, CharEnd: 6, Page: 2}}}
	for _, job := range []*FileJob{
		{Rel: "docs/kept.md", Kind: Touched, Mtime: 7, Size: 9},
		edited,
		{Rel: "docs/new.md", Kind: Changed, Doc: &extract.Document{}, Chunks: []chunk.Chunk{{Text: "new"}}},
		{Rel: "docs/bad.pdf", Kind: Failed, Err: &extract.FileError{Path: "docs/bad.pdf", Reason: "corrupt"}},
		{Rel: "docs/same.md", Kind: Unchanged},
	} {
		if err := w.Apply(job); err != nil {
			t.Fatal(err)
		}
	}
	if len(idx.commits) != 0 {
		t.Fatalf("committed %v before Finish without a checkpoint", idx.commits)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	want := Tally{FilesAdded: 1, FilesUpdated: 1, FilesRemoved: 1, FilesFailed: 1, FilesTouched: 1,
		ChunksTotal: 5, ChunksEmbedded: 2, ChunksReused: 1}
	if w.Tally != want {
		t.Errorf("tally %+v, want %+v", w.Tally, want)
	}
	// The record names the path once: the reader's error starts with it too.
	if want := []Failure{{Path: "docs/bad.pdf", Reason: "corrupt"}}; !slices.Equal(w.Failures, want) {
		t.Errorf("failures %+v, want %+v", w.Failures, want)
	}
	// Only the unseen file inside the run's scope goes.
	if !slices.Equal(idx.removed, []string{"docs/gone.md"}) {
		t.Errorf("removed %v", idx.removed)
	}
	if !slices.Equal(idx.commits, []bool{true}) {
		t.Errorf("commits %v, want one final", idx.commits)
	}
	if f := idx.files["docs/kept.md"]; f.Mtime != 7 || f.Size != 9 {
		t.Errorf("touched entry %+v", f)
	}
	if f := idx.files["docs/edited.md"]; f.Checksum != "sha256:e" {
		t.Errorf("edited entry %+v", f)
	}
	recs := idx.chunks["docs/edited.md"]
	if len(recs) != 2 || recs[1].Text != "two" || recs[1].CharStart != 3 || recs[1].Page != 2 || recs[0].LineEnd != 1 {
		t.Errorf("records %+v", recs)
	}
}

func TestWriterCheckpointAndError(t *testing.T) {
	idx := newMemIndex()
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	w := &Writer{Index: idx, Checkpoint: 30 * time.Second, Now: func() time.Time { return now }}
	job := &FileJob{Rel: "a.md", Kind: Touched}
	if err := w.Apply(job); err != nil {
		t.Fatal(err)
	}
	now = now.Add(29 * time.Second)
	if err := w.Tick(); err != nil || len(idx.commits) != 0 {
		t.Fatalf("a checkpoint before it was due: %v, commits %v", err, idx.commits)
	}
	now = now.Add(2 * time.Second)
	if err := w.Apply(&FileJob{Rel: "b.md", Kind: Touched}); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(idx.commits, false) {
		t.Errorf("no checkpoint commit: %v", idx.commits)
	}
	// The next one is due a full interval after that commit.
	now = now.Add(29 * time.Second)
	if err := w.Apply(&FileJob{Rel: "c.md", Kind: Touched}); err != nil || len(idx.commits) != 1 {
		t.Fatalf("checkpoints %v after %v, err %v", idx.commits, 29*time.Second, err)
	}
	idx.putErr = errors.New("disk full")
	err := w.Apply(&FileJob{Rel: "d.md", Kind: Changed, Doc: &extract.Document{}})
	if !errors.Is(err, idx.putErr) {
		t.Errorf("PutFile error came back as %v", err)
	}
}

// TestWriterKeepsUnlistedFolder: a folder that could not be listed keeps
// every file the index has under it; its siblings are still removed.
func TestWriterKeepsUnlistedFolder(t *testing.T) {
	idx := newMemIndex("locked/a.md", "locked/deep/b.md", "lockedness.md", "gone.md")
	w := &Writer{Index: idx}
	if err := w.Apply(&FileJob{Rel: "locked", Dir: true, Kind: Failed, Err: errors.New("permission denied")}); err != nil {
		t.Fatal(err)
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(idx.removed)
	if !slices.Equal(idx.removed, []string{"gone.md", "lockedness.md"}) || w.Tally.FilesFailed != 1 {
		t.Errorf("removed %v, tally %+v", idx.removed, w.Tally)
	}
}

// TestWriterDropsWithheldFolder: a folder withheld for its broken rule file
// (reported once however often a scoped run meets it) loses its entries.
func TestWriterDropsWithheldFolder(t *testing.T) {
	idx := newMemIndex("docs/a.md", "docs/deep/b.md", "other.md")
	w := &Writer{Index: idx}
	broken := &FileJob{Rel: "docs/.gitignore", Kind: Failed, Err: errors.New("not a regular file but a FIFO")}
	for _, job := range []*FileJob{broken, {Rel: "other.md", Kind: Unchanged}, broken} {
		if err := w.Apply(job); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(idx.removed)
	if !slices.Equal(idx.removed, []string{"docs/a.md", "docs/deep/b.md"}) || w.Tally.FilesFailed != 1 || len(w.Failures) != 1 {
		t.Errorf("removed %v, tally %+v, failures %v", idx.removed, w.Tally, w.Failures)
	}
}

// TestWriterGoneAndOutsideLinks: a file deleted between the walk and the
// read is removed and counted as removed, never as failed; a link leading
// outside is counted, and an indexed file that became one leaves the index.
func TestWriterGoneAndOutsideLinks(t *testing.T) {
	idx := newMemIndex("gone.md", "now-a-link.md", "kept.md")
	w := &Writer{Index: idx}
	for _, job := range []*FileJob{
		{Rel: "gone.md", Kind: Gone, Old: idx.before["gone.md"]},
		{Rel: "new-and-gone.md", Kind: Gone},
		{Rel: "now-a-link.md", Kind: Skipped, Err: ErrOutside},
		{Rel: "kept.md", Kind: Unchanged, Old: idx.before["kept.md"]},
	} {
		if err := w.Apply(job); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	slices.Sort(idx.removed)
	if tl := w.Tally; tl.FilesRemoved != 2 || tl.FilesFailed != 0 || tl.LinksOutside != 1 || len(w.Failures) != 0 ||
		!slices.Equal(idx.removed, []string{"gone.md", "now-a-link.md"}) {
		t.Errorf("tally %+v, removed %v, failures %v", tl, idx.removed, w.Failures)
	}
}

// TestWriterRemovesInPathOrder: Finish removes the files the run did not
// see in path order, whatever the order of the index's map.
func TestWriterRemovesInPathOrder(t *testing.T) {
	paths := []string{"m.md", "a/z.md", "b.md", "a/b.md", "z.md", "a.md", "k/k.md"}
	idx := newMemIndex(paths...)
	w := &Writer{Index: idx}
	if err := w.Finish(); err != nil {
		t.Fatal(err)
	}
	want := slices.Sorted(slices.Values(paths))
	if !slices.Equal(idx.removed, want) {
		t.Errorf("removed %v, want %v", idx.removed, want)
	}
}

// TestWriterFirstCheckpoint: a run on an empty index commits its first
// files FirstCheckpoint in, then every Checkpoint; a run on an index that
// holds files waits the full Checkpoint for its first commit.
func TestWriterFirstCheckpoint(t *testing.T) {
	for _, tc := range []struct {
		name  string
		idx   *memIndex
		first bool // a commit after FirstCheckpoint
	}{
		{"empty index", newMemIndex(), true},
		{"index with files", newMemIndex("old.md"), false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
			w := &Writer{Index: tc.idx, Checkpoint: 30 * time.Second, FirstCheckpoint: 2 * time.Second, Now: func() time.Time { return now }}
			if err := w.Apply(&FileJob{Rel: "a.md", Kind: Touched}); err != nil {
				t.Fatal(err)
			}
			now = now.Add(1900 * time.Millisecond)
			if err := w.Tick(); err != nil || len(tc.idx.commits) != 0 {
				t.Fatalf("a commit before FirstCheckpoint: %v, commits %v", err, tc.idx.commits)
			}
			now = now.Add(200 * time.Millisecond)
			if err := w.Tick(); err != nil {
				t.Fatal(err)
			}
			if got := len(tc.idx.commits) == 1; got != tc.first {
				t.Fatalf("commits %v at 2.1 s, want a commit: %v", tc.idx.commits, tc.first)
			}
			// After it, the next commit waits a full Checkpoint.
			if err := w.Apply(&FileJob{Rel: "b.md", Kind: Touched}); err != nil {
				t.Fatal(err)
			}
			now = now.Add(5 * time.Second)
			if err := w.Tick(); err != nil {
				t.Fatal(err)
			}
			if got := len(tc.idx.commits) == 1; got != tc.first {
				t.Fatalf("commits %v 5 s after the first, want as many as at 2.1 s", tc.idx.commits)
			}
			now = now.Add(30 * time.Second)
			if err := w.Tick(); err != nil {
				t.Fatal(err)
			}
			if want := map[bool]int{true: 2, false: 1}[tc.first]; len(tc.idx.commits) != want {
				t.Fatalf("commits %v after a Checkpoint more, want %d", tc.idx.commits, want)
			}
		})
	}
}
