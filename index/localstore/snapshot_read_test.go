package localstore

import (
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// Head reads the same record as Record without its text, also for a path
// longer than the first read and one holding the bytes that end a head;
// Nearest agrees with Search, Similarities with both.
func TestHeadSimilaritiesNearest(t *testing.T) {
	rng := rand.New(rand.NewPCG(7, 8))
	s := openStore(t, t.TempDir())
	w, err := s.Begin()
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{"a.md", strings.Repeat("long/", 300) + "b.txt", `c,"text":"d".md`}
	var q []float32
	for _, p := range paths {
		q = putFile(t, w, rng, p, 3)[1]
	}
	if err := w.Commit(true); err != nil {
		t.Fatal(err)
	}
	w.Close()
	snap := s.Acquire()
	defer snap.Release()
	var ids []int64
	for _, p := range paths {
		f, _ := snap.File(p)
		ids = append(ids, f.ChunkIDs...)
	}
	for _, id := range ids {
		rec, err := snap.Record(id)
		if err != nil {
			t.Fatal(err)
		}
		head, err := snap.Head(id)
		if err != nil {
			t.Fatal(err)
		}
		want := rec
		want.Text, want.Headings, want.EmbeddingDim, want.Deleted = "", "", 0, false
		if head != want || rec.Text == "" {
			t.Errorf("chunk %d: head %+v, record %+v", id, head, rec)
		}
	}
	heads, err := snap.Heads(ids)
	if err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		if h, _ := snap.Head(id); heads[i] != h {
			t.Errorf("chunk %d: Heads %+v, Head %+v", id, heads[i], h)
		}
	}
	cos, err := snap.Similarities(q, ids)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := snap.Similarities(q, []int64{ids[0], 1 << 40}); err == nil {
		t.Error("Similarities of a chunk that is not live: no error")
	}
	hits, err := snap.Search(q, 5)
	if err != nil {
		t.Fatal(err)
	}
	near, err := snap.Nearest(q, 5)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.EqualFunc(hits, near, func(h index.Hit, m index.Match) bool { return h.Record.ID == m.ID && h.Score == m.Score }) {
		t.Errorf("Search %v, Nearest %v", hits, near)
	}
	// Every chunk's cosine, as FAISS scored the nearest ones.
	at := map[int64]float32{}
	for i, id := range ids {
		at[id] = cos[i]
	}
	for _, m := range near {
		if d := at[m.ID] - m.Score; d > 1e-6 || d < -1e-6 {
			t.Errorf("chunk %d: Similarities %v, Nearest %v", m.ID, at[m.ID], m.Score)
		}
	}
}
