package localstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// listedFiles is what a fresh store loaded from dir holds: path → chunks.
func listedFiles(t *testing.T, dir string) map[string]int {
	t.Helper()
	s := openStore(t, dir)
	defer s.Close()
	snap := s.Acquire()
	defer snap.Release()
	out := map[string]int{}
	for p, f := range snap.files.All() {
		out[p] = len(f.ChunkIDs)
	}
	return out
}

// TestFileListLogAndCheckpoint: one-file commits append to the file log
// and leave files.json alone (commit.json stays small); past the log's
// bound files.json is written afresh as a checkpoint and the old log goes;
// every state reloads to exactly the files written, and files.json alone is
// always a complete commit record in the first version's layout.
func TestFileListLogAndCheckpoint(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	s := openStoreWith(t, dir, index.Options{Compaction: testCompaction, FileLogMin: 8})
	defer s.Close()
	want := map[string]int{}
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	for i := range 40 {
		p := fmt.Sprintf("f%02d.md", i)
		putFile(t, w, rng, p, 2)
		want[p] = 2
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	first, _ := readDoc(t, dir)
	if first.FileList == nil || first.FileList.Files != 40 || first.FileList.LogEntries != 0 || len(first.Files) != 0 {
		t.Fatalf("first commit's file list: %+v, %d inline", first.FileList, len(first.Files))
	}
	fi := mustStat(t, filepath.Join(dir, CommitFile))
	small := fi.Size()
	checkpoints := 0
	for i := range 12 {
		before := mustStat(t, filepath.Join(dir, FilesFile))
		// Replace one file, remove another, touch a third.
		p := fmt.Sprintf("f%02d.md", rng.IntN(40))
		n := 1 + rng.IntN(3)
		putFile(t, w, rng, p, n)
		want[p] = n
		gone := fmt.Sprintf("f%02d.md", 40-i-1)
		w.RemoveFile(gone)
		delete(want, gone)
		if f, ok := w.st.files.Get(fmt.Sprintf("f%02d.md", i)); ok {
			w.TouchFile(f.Path, f.Mtime+1, f.Size+1)
		}
		if err := w.Commit(false); err != nil {
			t.Fatal(err)
		}
		doc, _ := readDoc(t, dir)
		ref := doc.FileList
		if ref.LogEntries > max(8, len(want)/4) || len(doc.Files) != 0 {
			t.Fatalf("commit %d: log of %d entries, %d inline", i, ref.LogEntries, len(doc.Files))
		}
		if fi := mustStat(t, filepath.Join(dir, CommitFile)); fi.Size() > small+1024 {
			t.Fatalf("commit %d: commit.json grew from %d to %d bytes", i, small, fi.Size())
		}
		after := mustStat(t, filepath.Join(dir, FilesFile))
		if rewritten := !os.SameFile(before, after); rewritten != (ref.Generation == doc.Generation) {
			t.Fatalf("commit %d: files.json rewritten %v, checkpoint generation %d of %d", i, rewritten, ref.Generation, doc.Generation)
		} else if rewritten {
			checkpoints++
		}
		if got := listedFiles(t, dir); !maps.Equal(got, want) {
			t.Fatalf("commit %d: reloaded %v, want %v", i, got, want)
		}
		var logs []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if isFileLog(e.Name()) {
				logs = append(logs, e.Name())
			}
		}
		var wantLogs []string
		if ref.LogBytes > 0 {
			wantLogs = []string{ref.Log}
		}
		if !slices.Equal(logs, wantLogs) {
			t.Fatalf("commit %d: folder holds logs %v, commit.json names %v", i, logs, wantLogs)
		}
		// files.json alone: the checkpoint's state, in the old layout.
		raw := mustRead(t, filepath.Join(dir, FilesFile))
		var alone commitRecord
		if err := json.Unmarshal(raw, &alone); err != nil || alone.Generation != ref.Generation || len(alone.Files) != ref.Files || alone.FileList != nil {
			t.Fatalf("commit %d: files.json is generation %d with %d files (%v), want a checkpoint of %d with %d", i, alone.Generation, len(alone.Files), err, ref.Generation, ref.Files)
		}
	}
	if checkpoints == 0 {
		t.Fatalf("files.json was never written afresh (log bound 8, 36 changes)")
	}
	w.Close()
}

// TestFileListUncommittedTailCut: log bytes past what files.json commits
// (a crash after the append) are ignored and cut.
func TestFileListUncommittedTailCut(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(5, 6))
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, w, rng, "a.md", 2)
	putFile(t, w, rng, "b.md", 2)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	putFile(t, w, rng, "a.md", 3)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	doc, _ := readDoc(t, dir)
	logPath := filepath.Join(dir, doc.FileList.Log)
	f, err := os.OpenFile(logPath, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString(`{"path":"b.md","removed":true}` + "\n" + `{"path":"c.md","chu`)
	f.Close()
	if got := listedFiles(t, dir); !maps.Equal(got, map[string]int{"a.md": 3, "b.md": 2}) {
		t.Fatalf("loaded %v", got)
	}
	s = openStore(t, dir)
	w, err = s.Begin() // recovery runs here
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	if fi := mustStat(t, logPath); fi.Size() != doc.FileList.LogBytes {
		t.Fatalf("log has %d bytes after recovery, committed %d", fi.Size(), doc.FileList.LogBytes)
	}
}

// TestIndexWithoutCommitRecordStillLoads: an index as the first version
// wrote it (files.json only, entries inline) loads, and the next commit
// gives it commit.json and a file log.
func TestIndexWithoutCommitRecordStillLoads(t *testing.T) {
	dir, _ := committedStore(t)
	doc, _ := readDoc(t, dir)
	if doc.FileList == nil || doc.FileList.Generation != doc.Generation {
		t.Fatalf("first commit is no checkpoint: %+v", doc.FileList)
	}
	// The first commit's files.json is that commit in the older layout.
	if err := os.Remove(filepath.Join(dir, CommitFile)); err != nil {
		t.Fatal(err)
	}
	want := map[string]int{"a.md": 4, "b.md": 4, "c.md": 4}
	if got := listedFiles(t, dir); !maps.Equal(got, want) {
		t.Fatalf("files.json alone loaded as %v", got)
	}
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w.rebuilt {
		t.Fatal("an index without commit.json was rebuilt")
	}
	w.RemoveFile("c.md")
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	after, _ := readDoc(t, dir)
	if after.FileList == nil || len(after.Files) != 0 {
		t.Fatalf("after a commit: file_list %+v, %d inline", after.FileList, len(after.Files))
	}
	delete(want, "c.md")
	if got := listedFiles(t, dir); !maps.Equal(got, want) {
		t.Fatalf("after a commit loaded %v", got)
	}
}

// TestCheckpointCrash: a checkpoint's files.json.new before the commit
// point is discarded when commit.json exists, and rolled forward when it
// does not (a first commit: files.json.new is then a whole commit record).
func TestCheckpointCrash(t *testing.T) {
	t.Run("rolled back", func(t *testing.T) {
		dir, _ := committedStore(t)
		before := mustRead(t, filepath.Join(dir, FilesFile))
		mustWrite(t, filepath.Join(dir, FilesFile+newSuffix), []byte(`{"schema":2,"generation":9,"files":[]}`), 0o644)
		s := openStore(t, dir)
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		w.Close()
		s.Close()
		after := mustRead(t, filepath.Join(dir, FilesFile))
		if _, err := os.Stat(filepath.Join(dir, FilesFile+newSuffix)); err == nil || !bytes.Equal(before, after) {
			t.Fatalf("files.json.new kept (%v) or files.json changed", err)
		}
		if got := listedFiles(t, dir); len(got) != 3 {
			t.Fatalf("loaded %v", got)
		}
	})
	t.Run("first commit rolled forward", func(t *testing.T) {
		dir, _ := committedStore(t)
		mustRemove(t, filepath.Join(dir, CommitFile))
		if err := os.Rename(filepath.Join(dir, FilesFile), filepath.Join(dir, FilesFile+newSuffix)); err != nil {
			t.Fatal(err)
		}
		s := openStore(t, dir)
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if w.rebuilt || w.Files() != 3 {
			t.Fatalf("rebuilt %v, %d files", w.rebuilt, w.Files())
		}
		w.Close()
		s.Close()
	})
}
