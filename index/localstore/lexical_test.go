package localstore

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

func putTexts(t *testing.T, w *Writer, rng *rand.Rand, path string, texts ...string) {
	t.Helper()
	recs := make([]schema.Record, len(texts))
	var flat []float32
	for i, text := range texts {
		recs[i] = schema.Record{ChunkIndex: i, Text: text}
		flat = append(flat, unitVec(rng)...)
	}
	if err := w.PutFile(schema.FileEntry{Path: path, Checksum: "sha256:" + path, Ext: filepath.Ext(path)}, recs, flat); err != nil {
		t.Fatal(err)
	}
}

// lexicalPaths returns the paths of the keyword hits for query, in order.
func lexicalPaths(t *testing.T, s *Store, query string) []string {
	t.Helper()
	snap := s.Acquire()
	defer snap.Release()
	hits, err := lexicalHits(snap, query, 10)
	if err != nil {
		t.Fatal(err)
	}
	var paths []string
	for _, h := range hits {
		if h.Score <= 0 {
			t.Fatalf("hit with score %v", h.Score)
		}
		paths = append(paths, h.Record.Path)
	}
	return paths
}

// lexicalHits are the keyword index's best k chunks for query, as a
// search reads them: ranked by the snapshot's LexicalQuery, then their
// records.
func lexicalHits(snap *Snapshot, query string, k int) ([]index.Hit, error) {
	found, _ := snap.LexicalQuery(query).Search(k, nil)
	var hits []index.Hit
	for _, r := range found {
		rec, err := snap.Record(r.ID)
		if err != nil {
			return nil, err
		}
		hits = append(hits, index.Hit{Record: rec, Score: float32(r.Score), Share: r.Coverage})
	}
	return hits, nil
}

func commitClose(t *testing.T, w *Writer) {
	t.Helper()
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
}

func TestSearchLexicalFollowsCommits(t *testing.T) {
	dir := t.TempDir()
	rng := rand.New(rand.NewPCG(11, 12))
	s := openStore(t, dir)
	w := begin(t, s)
	putTexts(t, w, rng, "errors.md", "Code QX-7731-B means the disk is full.", "Other codes are rare.")
	putTexts(t, w, rng, "notes/install-guide.txt", "Run the setup program.")
	putTexts(t, w, rng, "old.md", "An obsolete keyword zorblax lives here.", "More old text.", "And more.")
	for i := range 6 {
		putTexts(t, w, rng, filepathN("filler", i), "Filler text about nothing much.")
	}
	if got := lexicalPaths(t, s, "QX-7731-B"); len(got) != 0 {
		t.Fatalf("uncommitted chunk found: %v", got)
	}
	commitClose(t, w)
	for q, want := range map[string]string{"QX-7731-B": "errors.md", "qx7731b": "errors.md", "install guide": "notes/install-guide.txt", "zorblax": "old.md"} {
		if got := lexicalPaths(t, s, q); len(got) != 1 || got[0] != want {
			t.Fatalf("%q found %v, want %s", q, got, want)
		}
	}
	if got := lexicalPaths(t, s, "the of and"); len(got) != 0 {
		t.Fatalf("stop words matched %v", got)
	}

	// Replace one file and remove another: old text goes, new text comes.
	w = begin(t, s)
	putTexts(t, w, rng, "errors.md", "Code QX-9000-Z replaced the old one.")
	w.RemoveFile("old.md")
	commitClose(t, w)
	if got := lexicalPaths(t, s, "7731 zorblax"); len(got) != 0 {
		t.Fatalf("deleted chunks found: %v", got)
	}
	if got := lexicalPaths(t, s, "QX-9000-Z"); len(got) != 1 {
		t.Fatalf("new chunk: %v", got)
	}
	// Compaction (4 tombstones over 8 live with Compaction.Min 4) leaves one
	// segment holding exactly the live chunks.
	snap := s.Acquire()
	segs := snap.doc.Lexical
	live := snap.Chunks()
	snap.Release()
	if len(segs) != 1 || segs[0].Docs != live {
		t.Fatalf("after compaction: segments %+v, %d live chunks", segs, live)
	}
	entries, _ := os.ReadDir(dir)
	for _, e := range entries {
		if lexical.IsSegmentFile(e.Name()) && e.Name() != segs[0].Name {
			t.Fatalf("stale segment %s left behind", e.Name())
		}
	}
	// A reopened store answers the same.
	s2 := openStore(t, dir)
	if got := lexicalPaths(t, s2, "QX-9000-Z filler"); len(got) != 7 || got[0] != "errors.md" {
		t.Fatalf("after reopen: %v", got)
	}
}

func filepathN(prefix string, i int) string { return prefix + string(rune('a'+i)) + ".txt" }

func TestLexicalTornCommitAndDamage(t *testing.T) {
	rng := rand.New(rand.NewPCG(13, 14))
	dir := t.TempDir()
	s := openStore(t, dir)
	w := begin(t, s)
	putTexts(t, w, rng, "a.md", "alpha keyword wibblequark")
	commitClose(t, w)
	s.Close()

	// A segment written by a commit that never reached its commit point is
	// not served and is removed.
	torn := filepath.Join(dir, lexical.SegmentName(2))
	mustWrite(t, torn, []byte("half a segment"), 0o644)
	s = openStore(t, dir)
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	w.Close()
	if _, err := os.Stat(torn); !os.IsNotExist(err) {
		t.Fatal("torn segment not removed")
	}
	if got := lexicalPaths(t, s, "wibblequark"); len(got) != 1 {
		t.Fatalf("%v", got)
	}
	snap := s.Acquire()
	name := snap.doc.Lexical[0].Name
	snap.Release()
	s.Close()

	// A damaged committed segment makes the index rebuild, never serve.
	b := mustRead(t, filepath.Join(dir, name))
	b[len(b)/2] ^= 0x40
	mustWrite(t, filepath.Join(dir, name), b, 0o644)
	s = openStore(t, dir)
	if got := lexicalPaths(t, s, "wibblequark"); len(got) != 0 {
		t.Fatalf("damaged index served: %v", got)
	}
	w = begin(t, s)
	defer w.Close()
	if !w.rebuilt {
		t.Fatal("damaged lexical segment did not rebuild the index")
	}
}

// TestSearchLexicalHeadings: a chunk's headings count for more than its
// text, and are kept in the manifest record.
func TestSearchLexicalHeadings(t *testing.T) {
	rng := rand.New(rand.NewPCG(15, 16))
	s := openStore(t, t.TempDir())
	w := begin(t, s)
	putTexts(t, w, rng, "body.md", "We mention refunds once in a sentence about other things entirely.")
	recs := []schema.Record{{Text: "Money goes back to the card within five days.", Headings: "Policies\nRefunds"}}
	if err := w.PutFile(schema.FileEntry{Path: "policy.md"}, recs, unitVec(rng)); err != nil {
		t.Fatal(err)
	}
	commitClose(t, w)
	snap := s.Acquire()
	defer snap.Release()
	hits, err := lexicalHits(snap, "refunds", 5)
	if err != nil || len(hits) != 2 || hits[0].Record.Path != "policy.md" || hits[0].Record.Headings != "Policies\nRefunds" {
		t.Fatalf("hits %+v, err %v", hits, err)
	}
}
