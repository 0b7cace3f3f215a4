package search

import (
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/prose"
	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

// records chunks text as the reindex would, with ids from 1.
func records(path, text string, pageStarts []int) []schema.Record {
	var out []schema.Record
	for _, c := range chunk.Split(text, pageStarts, chunk.Config{Size: 1000, Overlap: 200}, nil) {
		out = append(out, schema.Record{
			ID: int64(len(out) + 1), Path: path, Ext: ".txt", ChunkIndex: c.Index, CharStart: c.CharStart, CharEnd: c.CharEnd,
			Page: c.Page, LineStart: c.LineStart, LineEnd: c.LineEnd, Text: c.Text,
		})
	}
	return out
}

func TestJoinChunksRestoresText(t *testing.T) {
	for seed := range uint64(20) {
		text := prose.Random(seed, 1+int(seed)*3)
		recs := records("a.txt", text, nil)
		if got := joinChunks(recs, nil); got != text {
			t.Fatalf("seed %d: %d chunks joined differ from the text\n got %q\nwant %q", seed, len(recs), got, text)
		}
	}
}

func TestJoinChunksMarksPages(t *testing.T) {
	// Pages joined as the PDF reader joins them.
	pages := []string{prose.Random(1, 4), prose.Random(2, 1), prose.Random(3, 6), prose.Random(4, 3)}
	var starts []int
	text := ""
	for i, p := range pages {
		if i > 0 {
			text += "\n\n"
		}
		starts = append(starts, len([]rune(text)))
		text += p
	}
	recs := records("a.pdf", text, starts)
	unmark := func(s string) string {
		for n := 1; n <= len(pages); n++ {
			s = strings.Replace(s, fmt.Sprintf("--- page %d ---\n\n", n), "", 1)
		}
		return s
	}
	got := joinChunks(recs, starts)
	for n, p := range pages {
		mark := fmt.Sprintf("--- page %d ---\n\n", n+1)
		if strings.Count(got, mark) != 1 || !strings.Contains(got, mark+p[:40]) {
			t.Fatalf("page %d not marked where it begins:\n%s", n+1, got)
		}
	}
	if unmark(got) != text {
		t.Fatalf("text changed by marking pages:\n%q\n%q", unmark(got), text)
	}

	// A stretch from the middle starts with the mark of its page.
	mid := recs[len(recs)/2:]
	mid = mid[:min(3, len(mid))]
	part := joinChunks(mid, starts)
	if want := fmt.Sprintf("--- page %d ---\n\n", mid[0].Page); !strings.HasPrefix(part, want) {
		t.Errorf("stretch from chunk %d starts %q, want %q", mid[0].ChunkIndex, part[:min(40, len(part))], want)
	}

	// An index without page starts marks each page once, in order, from
	// the chunks' pages.
	f := &schema.FileEntry{Path: "a.pdf"}
	got = joinChunks(recs, pageStartsOf(f, recs))
	last := -1
	for n := 1; n <= recs[len(recs)-1].Page; n++ {
		i := strings.Index(got, fmt.Sprintf("--- page %d ---", n))
		if i <= last {
			t.Fatalf("page %d mark at %d, after %d:\n%s", n, i, last, got)
		}
		last = i
	}
}

func TestPassagesMergeOverlaps(t *testing.T) {
	a := records("a.txt", prose.Random(7, 30), nil)
	b := records("b.txt", prose.Random(8, 5), nil)
	if len(a) < 12 || len(b) < 1 {
		t.Fatalf("corpus too small: %d, %d chunks", len(a), len(b))
	}
	cands := []candidate{
		{rec: a[3], score: 0.9}, {rec: a[4], score: 0.8}, {rec: b[0], score: 0.7}, {rec: a[10], score: 0.6}, {rec: a[2], score: 0.55}, {rec: a[5], score: 0.5}, {rec: a[8], score: 0.4},
	}
	res := passages(slices.Clone(cands), 3, 0.2)
	if len(res) != 3 {
		t.Fatalf("%d passages, want 3: %+v", len(res), res)
	}
	// Ranked below the third passage's start, a[2] and a[5] still join the
	// first passage: what a passage holds does not depend on topK.
	if r := res[0]; r.Path != "a.txt" || r.ChunkIndex != 3 || !slices.Equal(r.Chunks, []int{2, 3, 4, 5}) || r.Score != 0.9 ||
		r.CharStart != a[2].CharStart || r.CharEnd != a[5].CharEnd || r.LineStart != a[2].LineStart || r.LineEnd != a[5].LineEnd {
		t.Errorf("first passage = %+v", r)
	}
	if res[1].Path != "b.txt" || res[2].ChunkIndex != 10 || !slices.Equal(res[2].Chunks, []int{10}) {
		t.Errorf("passages = %+v", res)
	}
	if want := collapseSpace(joinChunks(a[2:6], nil)); res[0].Snippet != want {
		t.Errorf("snippet\n got %q\nwant %q", res[0].Snippet, want)
	}
	for k := 1; k <= 4; k++ {
		if more := passages(slices.Clone(cands), k+1, 0.2); !reflect.DeepEqual(passages(slices.Clone(cands), k, 0.2), more[:k]) {
			t.Errorf("the first %d passages change when %d are asked for", k, k+1)
		}
	}

	// A chunk bridging two passages merges them into the better one.
	res = passages([]candidate{{rec: a[3], score: 0.9}, {rec: a[5], score: 0.8}, {rec: b[0], score: 0.7}, {rec: a[4], score: 0.6}, {rec: a[8], score: 0.5}}, 4, 0.2)
	if len(res) != 3 || !slices.Equal(res[0].Chunks, []int{3, 4, 5}) || res[1].Path != "b.txt" || res[2].ChunkIndex != 8 {
		t.Fatalf("bridged passages = %+v", res)
	}
	if strings.Count(res[0].Snippet, a[4].Text[:40]) > 1 {
		t.Errorf("overlap repeated in %q", res[0].Snippet)
	}

	// The threshold drops weak chunks; scores never rise down the list.
	res = passages(slices.Clone(cands), 10, 0.52)
	for i, r := range res {
		if r.Score < 0.52 || (i > 0 && r.Score > res[i-1].Score) {
			t.Errorf("passage %d score %v", i, r.Score)
		}
	}
	if len(res) != 3 {
		t.Errorf("%d passages above 0.52, want 3 (a3-a5 merged, b0, a10): %+v", len(res), res)
	}
}

// A document whose every chunk matches comes back as passages of at most
// maxPassageChunks chunks that share no text, not as one huge passage.
func TestPassagesBounded(t *testing.T) {
	a := records("a.txt", prose.Random(11, 60), nil)
	if len(a) < 20 {
		t.Fatalf("%d chunks", len(a))
	}
	var cands []candidate
	for i, r := range a {
		cands = append(cands, candidate{rec: r, score: 0.9 - float64(i)*0.001})
	}
	res := passages(cands, 5, 0.2)
	if len(res) != 5 {
		t.Fatalf("%d passages", len(res))
	}
	for i, r := range res {
		if len(r.Chunks) > maxPassageChunks {
			t.Errorf("passage %d holds chunks %v", i, r.Chunks)
		}
		for _, o := range res[:i] {
			if r.CharStart <= o.CharEnd && o.CharStart <= r.CharEnd {
				t.Errorf("passages %v and %v share text", o.Chunks, r.Chunks)
			}
		}
	}
}

func TestCollapseSpace(t *testing.T) {
	got := collapseSpace("  # Title\n\nline one\nline two   with\tspace\n \n\n\nlast \u00a0\n")
	if want := "# Title\n\nline one\nline two with space\n\nlast"; got != want {
		t.Fatalf("got %q, want %q", got, want)
	}
}

// passages walks candidates best first and groups them: a chunk whose text
// overlaps or touches a passage already formed joins it (merging passages it
// bridges) unless that would make a passage of more than maxPassageChunks
// chunks, in which case it is skipped; any other chunk starts a new
// passage. The walk covers every candidate down to the first below
// threshold, and the first topK passages are returned: so the passages a
// search returns do not depend on topK, and a larger topK only appends.
// The result is best first, and no text appears twice. (The search's
// grouping, group and results, on candidates holding whole records.)
func passages(cands []candidate, topK int, threshold float64) []Result {
	ps, _ := group(cands, threshold, nil) // cannot fail without a source
	res, _ := results(ps[:min(topK, len(ps))], false, nil)
	return res
}
