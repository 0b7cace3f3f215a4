package index

import (
	"encoding/json"
	"fmt"
	"maps"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"
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

// TestFileListLogAndBase: one-file commits append to the file log and leave
// files.json small; past the log's bound the base is written afresh and
// the old files go; every state reloads to exactly the files written.
func TestFileListLogAndBase(t *testing.T) {
	defer func(n int) { fileLogMin = n }(fileLogMin)
	fileLogMin = 8
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(3, 4))
	s := openStore(t, dir)
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
	if first.FileList == nil || first.FileList.BaseFiles != 40 || first.FileList.LogEntries != 0 || len(first.Files) != 0 {
		t.Fatalf("first commit's file list: %+v, %d inline", first.FileList, len(first.Files))
	}
	fi, _ := os.Stat(filepath.Join(dir, FilesFile))
	small := fi.Size()
	for i := range 12 {
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
		if fi, _ := os.Stat(filepath.Join(dir, FilesFile)); fi.Size() > small+2048 {
			t.Fatalf("commit %d: files.json grew from %d to %d bytes", i, small, fi.Size())
		}
		if got := listedFiles(t, dir); !maps.Equal(got, want) {
			t.Fatalf("commit %d: reloaded %v, want %v", i, got, want)
		}
		var lists []string
		entries, _ := os.ReadDir(dir)
		for _, e := range entries {
			if isFileListFile(e.Name()) {
				lists = append(lists, e.Name())
			}
		}
		wantLists := []string{ref.Base}
		if ref.LogBytes > 0 {
			wantLists = append(wantLists, ref.Log)
		}
		slices.Sort(wantLists)
		if !slices.Equal(lists, wantLists) {
			t.Fatalf("commit %d: folder holds %v, files.json names %v", i, lists, wantLists)
		}
	}
	last, _ := readDoc(t, dir)
	if last.FileList.Base == first.FileList.Base {
		t.Fatalf("the base was never written afresh (log bound 8, 36 changes)")
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
	if fi, _ := os.Stat(logPath); fi.Size() != doc.FileList.LogBytes {
		t.Fatalf("log has %d bytes after recovery, committed %d", fi.Size(), doc.FileList.LogBytes)
	}
}

// TestInlineFileListStillLoads: files.json as indexes before the file list
// wrote it (entries inline, no file_list) loads, and the next commit moves
// it to the file list.
func TestInlineFileListStillLoads(t *testing.T) {
	dir, _ := committedStore(t)
	doc, loose := readDoc(t, dir)
	files, err := readFileList(dir, doc.FileList)
	if err != nil {
		t.Fatal(err)
	}
	var inline []any
	for _, p := range []string{"a.md", "b.md", "c.md"} {
		raw, _ := json.Marshal(files[p])
		var v any
		json.Unmarshal(raw, &v)
		inline = append(inline, v)
	}
	delete(loose, "file_list")
	loose["files"] = inline
	writeLoose(t, dir, loose)
	os.Remove(filepath.Join(dir, doc.FileList.Base))
	want := map[string]int{"a.md": 4, "b.md": 4, "c.md": 4}
	if got := listedFiles(t, dir); !maps.Equal(got, want) {
		t.Fatalf("inline files.json loaded as %v", got)
	}
	s := openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w.Rebuilt() {
		t.Fatal("an inline files.json was rebuilt")
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
