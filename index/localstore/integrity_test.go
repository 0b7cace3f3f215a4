package localstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/faiss"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// logBuffer collects a store's log lines for assertions.
type logBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (l *logBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.Write(p)
}

func (l *logBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.buf.String()
}

// committedStore writes three files in one commit and returns the folder and
// one vector of a.md's second chunk.
func committedStore(t *testing.T) (string, []float32) {
	t.Helper()
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(21, 22))
	s, err := Open(dir, testVersion, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	a := putFile(t, w, rng, "a.md", 4)
	putFile(t, w, rng, "b.md", 4)
	putFile(t, w, rng, "c.md", 4)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	s.Close()
	return dir, a[1]
}

// readDoc reads the commit record: commit.json, or files.json without it.
func readDoc(t *testing.T, dir string) (commitRecord, map[string]any) {
	t.Helper()
	raw, err := os.ReadFile(commitRecordPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	var doc commitRecord
	var loose map[string]any
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	json.Unmarshal(raw, &loose)
	return doc, loose
}

func writeLoose(t *testing.T, dir string, loose map[string]any) {
	t.Helper()
	raw, _ := json.Marshal(loose)
	if err := os.WriteFile(commitRecordPath(dir), raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

func commitRecordPath(dir string) string {
	if _, err := os.Stat(filepath.Join(dir, CommitFile)); err == nil {
		return filepath.Join(dir, CommitFile)
	}
	return filepath.Join(dir, FilesFile)
}

// overwrite replaces bytes in place: the file keeps its size and name.
func overwrite(t *testing.T, path string, at int64, data []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	if _, err := f.WriteAt(data, at); err != nil {
		t.Fatal(err)
	}
}

// rewriteFaiss scales one stored vector and rewrites faiss.index with
// files.json's size and checksum to match: damage done before the
// checksum was taken, which only the norm check can see.
func rewriteFaiss(t *testing.T, dir string, scale float32) {
	t.Helper()
	path := filepath.Join(dir, FaissFile)
	idx, err := faiss.ReadIndex(path)
	if err != nil {
		t.Fatal(err)
	}
	vecs, ids, err := idx.Export(nil, nil)
	idx.Close()
	if err != nil {
		t.Fatal(err)
	}
	for i := range testDim {
		vecs[5*testDim+i] *= scale
	}
	flat, _ := faiss.NewIndexFlatIP(testDim)
	out, _ := faiss.NewIDMap2(flat)
	defer out.Close()
	if err := out.AddWithIDs(vecs, ids); err != nil {
		t.Fatal(err)
	}
	if err := faiss.WriteIndex(out, path); err != nil {
		t.Fatal(err)
	}
	sum, err := fileChecksum(path)
	if err != nil {
		t.Fatal(err)
	}
	fi := mustStat(t, path)
	_, loose := readDoc(t, dir)
	loose["faiss_checksum"] = formatChecksum(sum)
	loose["faiss_bytes"] = fi.Size()
	writeLoose(t, dir, loose)
}

// damages harm a committed index (committedStore) in ways that keep every
// file's size; logged is what the load failure says.
var damages = []struct {
	name, logged string
	damage       func(t *testing.T, dir string)
}{
	{"faiss vector bytes", "faiss.index has checksum", func(t *testing.T, dir string) {
		fi := mustStat(t, filepath.Join(dir, FaissFile))
		overwrite(t, filepath.Join(dir, FaissFile), fi.Size()/2, []byte{0x41, 0x41, 0x41, 0x41})
	}},
	{"manifest text", "manifest.jsonl's committed bytes have checksum", func(t *testing.T, dir string) {
		raw := mustRead(t, filepath.Join(dir, ManifestFile))
		at := bytes.Index(raw, []byte("a.md chunk 1"))
		if at < 0 {
			t.Fatal("chunk text not in the manifest")
		}
		overwrite(t, filepath.Join(dir, ManifestFile), int64(at), []byte("evil"))
	}},
	{"files.json entry", "files.json has checksum", func(t *testing.T, dir string) {
		path := filepath.Join(dir, FilesFile)
		raw := mustRead(t, path)
		at := bytes.Index(raw, []byte(`"b.md"`))
		if at < 0 {
			t.Fatal("b.md not in files.json")
		}
		overwrite(t, path, int64(at+1), []byte("d"))
	}},
	{"vector not unit length", "whose length is not 1", func(t *testing.T, dir string) {
		rewriteFaiss(t, dir, 3)
	}},
	{"vector of zeros", "whose length is not 1", func(t *testing.T, dir string) {
		rewriteFaiss(t, dir, 0)
	}},
}

// TestDamagedIndexIsRebuiltNotServed damages a committed index in ways
// that keep every file's size, and checks that opening serves nothing of
// it, logs why, and that the next writer rebuilds from scratch.
func TestDamagedIndexIsRebuiltNotServed(t *testing.T) {
	for _, c := range damages {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := committedStore(t)
			c.damage(t, dir)
			var logs logBuffer
			s, err := Open(dir, testVersion, index.Options{Logger: slog.New(slog.NewTextHandler(&logs, nil))})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			snap := s.Acquire()
			n := snap.Chunks()
			snap.Release()
			if n != 0 {
				t.Fatalf("damaged index served: %d chunks", n)
			}
			if !strings.Contains(logs.String(), c.logged) {
				t.Fatalf("log does not say %q:\n%s", c.logged, logs.String())
			}
			if err := s.OpenErr(); !index.IsDamaged(err) || !strings.Contains(err.Error(), c.logged) {
				t.Fatalf("OpenErr = %v, want the damage", err)
			}
			w, err := s.Begin()
			if err != nil {
				t.Fatal(err)
			}
			defer w.Close()
			if !w.rebuilt || len(w.Before()) != 0 {
				t.Fatalf("rebuilt=%v before=%d: the damaged index was kept", w.rebuilt, len(w.Before()))
			}
			if err := s.OpenErr(); err != nil {
				t.Fatalf("OpenErr = %v after the rebuild discarded the damage", err)
			}
		})
	}
}

// TestVerifyFindsDamage: Verify, which status runs without a model, finds
// every damage that keeps Open from serving an index, and passes a sound
// index and a folder with none.
func TestVerifyFindsDamage(t *testing.T) {
	dir, _ := committedStore(t)
	if err := Verify(dir); err != nil {
		t.Fatalf("Verify on a sound index: %v", err)
	}
	if err := Verify(filepath.Join(t.TempDir(), "none")); err != nil {
		t.Fatalf("Verify on a folder that does not exist: %v", err)
	}
	if err := Verify(t.TempDir()); err != nil {
		t.Fatalf("Verify on an empty folder: %v", err)
	}
	for _, c := range damages {
		t.Run(c.name, func(t *testing.T) {
			dir, _ := committedStore(t)
			c.damage(t, dir)
			if err := Verify(dir); !index.IsDamaged(err) || !strings.Contains(err.Error(), c.logged) {
				t.Fatalf("Verify = %v, want damage saying %q", err, c.logged)
			}
		})
	}
	t.Run("version file removed", func(t *testing.T) {
		dir, _ := committedStore(t)
		mustRemove(t, filepath.Join(dir, VersionFile))
		if err := Verify(dir); !index.IsDamaged(err) {
			t.Fatalf("Verify = %v", err)
		}
	})
}

// TestDamagedCommitOfAnotherProcessNotLoaded: a store that already serves
// an index keeps serving it when the next commit on disk is damaged.
func TestDamagedCommitOfAnotherProcessNotLoaded(t *testing.T) {
	dir, a1 := committedStore(t)
	reader := openStore(t, dir)
	gen := reader.Acquire()
	before := gen.doc.Generation
	gen.Release()

	writer := openStore(t, dir)
	w, err := writer.Begin()
	if err != nil {
		t.Fatal(err)
	}
	putFile(t, w, rand.New(rand.NewPCG(9, 9)), "d.md", 2)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	fi := mustStat(t, filepath.Join(dir, FaissFile))
	overwrite(t, filepath.Join(dir, FaissFile), fi.Size()/2, []byte{0x42, 0x42, 0x42, 0x42})

	if ok, err := reader.Refresh(); ok || err == nil || !strings.Contains(err.Error(), "checksum") {
		t.Fatalf("Refresh = %v, %v; want a checksum error", ok, err)
	}
	snap := reader.Acquire()
	defer snap.Release()
	if snap.doc.Generation != before || snap.Chunks() != 12 {
		t.Fatalf("serving generation %d with %d chunks; want the verified generation %d with 12", snap.doc.Generation, snap.Chunks(), before)
	}
	if h := topHit(t, reader, a1); h.Record.Path != "a.md" || h.Record.ChunkIndex != 1 {
		t.Fatalf("hit = %+v", h)
	}
}

// TestIndexWithoutChecksumsGetsThem: an index written before checksums
// existed loads as it is and carries checksums from its next commit.
func TestIndexWithoutChecksumsGetsThem(t *testing.T) {
	dir, a1 := committedStore(t)
	doc, loose := readDoc(t, dir)
	if _, ok := parseChecksum(doc.FaissChecksum); !ok {
		t.Fatalf("faiss_checksum %q", doc.FaissChecksum)
	}
	if _, ok := parseChecksum(doc.ManifestChecksum); !ok {
		t.Fatalf("manifest_checksum %q", doc.ManifestChecksum)
	}
	delete(loose, "faiss_checksum")
	delete(loose, "manifest_checksum")
	writeLoose(t, dir, loose)

	s := openStore(t, dir)
	if h := topHit(t, s, a1); h.Record.Path != "a.md" || h.Record.ChunkIndex != 1 {
		t.Fatalf("hit = %+v", h)
	}
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	if w.rebuilt {
		t.Fatal("an index without checksums was rebuilt")
	}
	putFile(t, w, rand.New(rand.NewPCG(5, 5)), "e.md", 1)
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	after, _ := readDoc(t, dir)
	msum, err := fileChecksum(filepath.Join(dir, ManifestFile))
	if err != nil {
		t.Fatal(err)
	}
	fsum, _ := fileChecksum(filepath.Join(dir, FaissFile))
	if after.ManifestChecksum != formatChecksum(msum) || after.FaissChecksum != formatChecksum(fsum) {
		t.Fatalf("checksums %s %s, files have %s %s", after.ManifestChecksum, after.FaissChecksum, formatChecksum(msum), formatChecksum(fsum))
	}
}

func TestPutFileRefusesVectorsNotUnitLength(t *testing.T) {
	s := openStore(t, t.TempDir())
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	v := make([]float32, testDim)
	v[0] = 1.01
	err = w.PutFile(schema.FileEntry{Path: "x.md"}, []schema.Record{{Text: "x"}}, v)
	if err == nil || !strings.Contains(err.Error(), "squared length") {
		t.Fatalf("PutFile = %v", err)
	}
	if w.Chunks() != 0 || w.Files() != 0 {
		t.Fatalf("refused file left %d chunks, %d files", w.Chunks(), w.Files())
	}
}

// TestChecksumsFollowCommitsAndCompaction: appends, replacements and
// compactions keep commit.json's checksums equal to the files, so a reopened
// index loads without a rebuild every time.
func TestChecksumsFollowCommitsAndCompaction(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(31, 32))
	for round := range 8 {
		s := openStore(t, dir)
		w, err := s.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if w.rebuilt && round > 0 {
			t.Fatalf("round %d: the index was rebuilt on reopening", round)
		}
		putFile(t, w, rng, "a.md", 3)                       // replaced every round: tombstones
		putFile(t, w, rng, fmt.Sprintf("n%d.md", round), 2) // one new file a round
		if round%3 == 2 {
			w.RemoveFile("n0.md")
		}
		if err := w.Commit(true); err != nil {
			t.Fatal(err)
		}
		w.Close()
		s.Close()
		doc, _ := readDoc(t, dir)
		fsum, _ := fileChecksum(filepath.Join(dir, FaissFile))
		msum, _ := fileChecksum(filepath.Join(dir, ManifestFile))
		if doc.FaissChecksum != formatChecksum(fsum) || doc.ManifestChecksum != formatChecksum(msum) {
			t.Fatalf("round %d: commit.json records %s %s, files have %s %s", round,
				doc.FaissChecksum, doc.ManifestChecksum, formatChecksum(fsum), formatChecksum(msum))
		}
	}
	raw := mustRead(t, filepath.Join(dir, ManifestFile))
	if n := countLines(raw); n > 40 { // 63 lines without compaction
		t.Fatalf("manifest has %d lines: never compacted", n)
	}
}

// TestSmallFileDamage: each small file of the index truncated, emptied or
// holding null, [], {} or garbage is damage named by its file: the folder
// is still recognised as this program's index (a damaged version file was
// taken for someone else's folder, refusing every command with "give
// --index-folder an empty folder"), Verify reports it, Open serves nothing
// from it and the next writer rebuilds.
func TestSmallFileDamage(t *testing.T) {
	kinds := map[string]func(t *testing.T, path string){
		"truncated": func(t *testing.T, path string) {
			fi, err := os.Stat(path)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.Truncate(path, fi.Size()/2); err != nil {
				t.Fatal(err)
			}
		},
		"removed": func(t *testing.T, path string) { mustRemove(t, path) },
	}
	for name, data := range map[string]string{"empty": "", "null": "null", "[]": "[]", "{}": "{}", "garbage": "\x00\xffnot json{"} {
		kinds[name] = func(t *testing.T, path string) {
			if err := os.WriteFile(path, []byte(data), 0o600); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, file := range []string{VersionFile, CommitFile, FilesFile} {
		for kind, damage := range kinds {
			if kind == "removed" && file != VersionFile {
				continue // a missing commit record is an older layout or no index
			}
			t.Run(file+"/"+kind, func(t *testing.T) {
				dir, _ := committedStore(t)
				damage(t, filepath.Join(dir, file))
				if err := CheckFolder(dir); err != nil {
					t.Fatalf("CheckFolder = %v: the index is taken for another folder", err)
				}
				if err := Verify(dir); !index.IsDamaged(err) || !strings.Contains(err.Error(), file) {
					t.Fatalf("Verify = %v, want damage naming %s", err, file)
				}
				s, err := Open(dir, testVersion, index.Options{Logger: slog.New(slog.DiscardHandler)})
				if err != nil {
					t.Fatal(err)
				}
				defer s.Close()
				if err := s.OpenErr(); !index.IsDamaged(err) {
					t.Fatalf("OpenErr = %v, want damage", err)
				}
				w, err := s.Begin()
				if err != nil {
					t.Fatal(err)
				}
				defer w.Close()
				if !w.rebuilt {
					t.Fatal("the writer did not rebuild the damaged index")
				}
			})
		}
	}
}

// TestMissingIndexFileIsDamage: a committed index missing one of its
// files is damage to report and rebuild, never an index that was not
// built yet (which would serve nothing and say nothing).
func TestMissingIndexFileIsDamage(t *testing.T) {
	for _, name := range []string{FilesFile, FaissFile, ManifestFile} {
		t.Run(name, func(t *testing.T) {
			dir, _ := committedStore(t)
			mustRemove(t, filepath.Join(dir, name))
			if err := Verify(dir); !index.IsDamaged(err) {
				t.Errorf("Verify = %v, want damage", err)
			}
			s, err := Open(dir, testVersion, index.Options{Logger: slog.New(slog.DiscardHandler)})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			if err := s.OpenErr(); !index.IsDamaged(err) {
				t.Errorf("OpenErr = %v, want damage", err)
			}
		})
	}
}
