package lexical

import (
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func ids(rs []Result) []int64 {
	out := make([]int64, len(rs))
	for i, r := range rs {
		out[i] = r.ID
	}
	return out
}

// word is a letters-only token unique to n.
func word(n int64) string {
	w := []byte("zz")
	for ; n > 0; n /= 26 {
		w = append(w, byte('a'+n%26))
	}
	// No English suffix ends in k: the stemmer leaves each word distinct.
	return string(append(w, 'k'))
}

func mustAdd(t *testing.T, x *Index, dir, name string, docs []Doc, compact bool) *Index {
	t.Helper()
	next, file, err := x.Add(name, docs, compact)
	if err == nil && file != nil {
		err = os.WriteFile(filepath.Join(dir, name), file, 0o644)
	}
	if err != nil {
		t.Fatal(err)
	}
	return next
}

func TestSearchRanksFieldsAndIdentifiers(t *testing.T) {
	dir := t.TempDir()
	docs := []Doc{
		{ID: 1, Name: "install", Body: "Run the installer and follow the prompts."},
		{ID: 2, Name: "errors", Heading: "Error codes", Body: "The code QX-7731-B means the disk is full."},
		{ID: 3, Name: "notes", Body: "Errors are rare. The disk was full once. QX-7731 is another code."},
		{ID: 4, Name: "grep", Body: "Use grep --only-matching to print only the matching part."},
		{ID: 5, Name: "http", Body: "Problem details follow RFC 7807 for HTTP APIs."},
		{ID: 6, Name: "tokyo", Body: "東京都に住んでいます。"},
		{ID: 7, Name: "misc", Body: "Disk space, disk quotas and disk usage, disk disk disk."},
	}
	x := mustAdd(t, Empty(), dir, "a.seg", docs, false)
	cases := []struct {
		query string
		first int64
	}{
		{"QX-7731-B", 2},
		{"qx-7731-b", 2},
		{"--only-matching", 4},
		{"only_matching", 4},
		{"rfc7807", 5},
		{"RFC-7807", 5},
		{"RFC 7807", 5},
		{"京都", 6},
		{"install", 1},     // file name
		{"error codes", 2}, // heading beats the body's "Errors"
	}
	for _, c := range cases {
		got := x.Search(c.query, 3)
		if len(got) == 0 || got[0].ID != c.first {
			t.Errorf("Search(%q) = %v, want %d first", c.query, got, c.first)
		}
		for i := 1; i < len(got); i++ {
			if got[i].Score > got[i-1].Score {
				t.Errorf("Search(%q) not sorted: %v", c.query, got)
			}
		}
	}
	for _, q := range []string{"", "the of and", "?!…", "🙂🙂"} {
		if got := x.Search(q, 5); len(got) != 0 {
			t.Errorf("Search(%q) = %v, want nothing", q, got)
		}
	}
	long := ""
	for i := range 2000 {
		long += fmt.Sprintf("w%d disk ", i)
	}
	if got := x.Search(long, 5); len(got) == 0 || got[0].ID != 7 {
		t.Errorf("long query: %v", got)
	}
}

func TestDeleteMergeAndReopen(t *testing.T) {
	dir := t.TempDir()
	x := Empty()
	var all []int64
	id := int64(1)
	for gen := range 9 {
		var docs []Doc
		for range 3 {
			docs = append(docs, Doc{ID: id, Name: fmt.Sprintf("file%d", id), Body: "common words and " + word(id) + " here"})
			all = append(all, id)
			id++
		}
		x = mustAdd(t, x, dir, SegmentName(int64(gen)), docs, false)
	}
	if n := len(x.Segments()); n > 4 {
		t.Fatalf("%d segments after 9 commits: merging does not keep the count logarithmic", n)
	}
	if x.Live() != len(all) {
		t.Fatalf("live %d, want %d", x.Live(), len(all))
	}
	y := x.Delete([]int64{2, 5, 26, 999})
	if y.Live() != len(all)-3 || x.Live() != len(all) {
		t.Fatalf("delete: new %d, old %d", y.Live(), x.Live())
	}
	if got := y.Search(word(5), 5); len(got) != 0 {
		t.Fatalf("deleted doc found: %v", got)
	}
	if got := x.Search(word(5), 5); !slices.Equal(ids(got), []int64{5}) {
		t.Fatalf("old view lost doc 5: %v", got)
	}
	if got := y.Search("common", 100); len(got) != y.Live() {
		t.Fatalf("common word: %d hits, want %d", len(got), y.Live())
	}
	// Reopen from disk with the same deletions.
	live := func(id int64) bool { return y.Contains(id) }
	z, err := Open(dir, y.Segments(), live)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(ids(z.Search("common "+word(7), 50)), ids(y.Search("common "+word(7), 50))) {
		t.Fatal("reopened index ranks differently")
	}
	// Compaction drops deleted docs and leaves one segment.
	c := mustAdd(t, y, dir, "compact.seg", nil, true)
	if refs := c.Segments(); len(refs) != 1 || refs[0].Docs != y.Live() {
		t.Fatalf("compacted: %+v", refs)
	}
	for _, i := range all {
		got := c.Search(word(i), 5)
		want := y.Contains(i)
		if (len(got) == 1 && got[0].ID == i) != want {
			t.Fatalf("doc %d after compaction: %v (live %v)", i, got, want)
		}
	}
}

func TestOpenRejectsDamage(t *testing.T) {
	dir := t.TempDir()
	x := mustAdd(t, Empty(), dir, "s.seg", []Doc{{ID: 1, Body: "hello world"}}, false)
	refs := x.Segments()
	path := filepath.Join(dir, "s.seg")
	b, _ := os.ReadFile(path)
	b[len(b)/2] ^= 1
	os.WriteFile(path, b, 0o644)
	if _, err := Open(dir, refs, func(int64) bool { return true }); err == nil {
		t.Fatal("flipped bit not detected")
	}
	os.WriteFile(path, b[:len(b)-1], 0o644)
	if _, err := Open(dir, refs, func(int64) bool { return true }); err == nil {
		t.Fatal("short file not detected")
	}
	os.Remove(path)
	if _, err := Open(dir, refs, func(int64) bool { return true }); err == nil {
		t.Fatal("missing file not detected")
	}
	if _, _, err := x.Add("t.seg", []Doc{{ID: 1, Body: "again"}}, false); err == nil {
		t.Fatal("reused id accepted")
	}
}

// TestSearchWhileChanging: searches on one view run while new views are
// made from it; they keep their answers, and under -race this shows views
// share nothing mutable.
func TestSearchWhileChanging(t *testing.T) {
	dir := t.TempDir()
	s := newSynth(5)
	var docs []Doc
	for id := int64(1); id <= 300; id++ {
		docs = append(docs, s.doc(id))
	}
	x := mustAdd(t, Empty(), dir, "a.seg", docs, false)
	queries := []string{s.query(), s.query(), s.query()}
	var want [][]int64
	for _, q := range queries {
		want = append(want, ids(x.Search(q, 10)))
	}
	done := make(chan error)
	go func() {
		y := x
		for i := range 20 {
			var err error
			y, _, err = y.Delete([]int64{int64(i*7 + 1)}).Add("b.seg", []Doc{s.doc(int64(1000 + i))}, i%5 == 4)
			if err != nil {
				done <- err
				return
			}
		}
		done <- nil
	}()
	for i := range 300 {
		if got := ids(x.Search(queries[i%3], 10)); !slices.Equal(got, want[i%3]) {
			t.Fatalf("old view answers %v, first %v", got, want[i%3])
		}
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestLongQueryKeepsRareTerms: past MaxQueryTerms distinct terms, the rarest
// are scored, so a telling word at the end of a pasted page still counts.
func TestLongQueryKeepsRareTerms(t *testing.T) {
	var docs []Doc
	var common []string
	for i := range 400 {
		common = append(common, word(int64(i+1)))
	}
	for id := int64(1); id <= 20; id++ {
		docs = append(docs, Doc{ID: id, Body: strings.Join(common, " ")})
	}
	docs = append(docs, Doc{ID: 21, Body: "only here: zebrafinch"})
	x := mustAdd(t, Empty(), t.TempDir(), "a.seg", docs, false)
	got := x.Search(strings.Join(common, " ")+" zebrafinch", 30)
	if !slices.Contains(ids(got), 21) {
		t.Fatalf("rare last term lost: %v", ids(got))
	}
	if w := queryWeight(x, "zebrafinch unknownword"); w <= 0 || w != queryWeight(x, "zebrafinch") {
		t.Fatalf("query weight %v", w)
	}
}

// Search is the ranking of query alone, and SearchWith with the evidence
// of the documents in also (Query.Search): how the tests ask.
func (x *Index) Search(query string, k int) []Result {
	top, _ := x.SearchWith(query, k, nil)
	return top
}

func (x *Index) SearchWith(query string, k int, also []int64) ([]Result, []Evidence) {
	return x.Query(query).Search(k, also)
}

// Contains reports whether a live document has the chunk id.
func (x *Index) Contains(id int64) bool {
	v, o := x.locate(id)
	return v != nil && !isDead(v.dead, o)
}
