package mcpserver_test

import (
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

func TestMergeCopies(t *testing.T) {
	res := []engine.Result{
		{Path: "a/guide.txt", Snippet: "Leave is 20 days.\nAsk HR.", Score: 0.9},
		{Path: "other.md", Snippet: "Something else.", Score: 0.8},
		{Path: "b/guide.docx", Snippet: "Leave is 20 days.  \n Ask   HR.", Score: 0.7}, // same text, other spacing
		{Path: "third.md", Snippet: "A third passage.", Score: 0.6},
		{Path: "c/guide.txt", Snippet: "Leave is 20 days. Ask HR.", Score: 0.5}, // a copy past top_k still merges
		{Path: "fourth.md", Snippet: "A fourth passage.", Score: 0.4},
	}
	got := mcpserver.MergeCopies(res, 3)
	var paths []string
	for _, h := range got {
		paths = append(paths, h.Path)
	}
	if want := []string{"a/guide.txt", "other.md", "third.md"}; !reflect.DeepEqual(paths, want) {
		t.Fatalf("results %v, want %v", paths, want)
	}
	if want := []string{"a/guide.txt", "b/guide.docx", "c/guide.txt"}; !reflect.DeepEqual(got[0].Paths, want) {
		t.Errorf("paths %v, want %v", got[0].Paths, want)
	}
	if got[1].Paths != nil || got[0].Score != 0.9 {
		t.Errorf("unmerged result lists paths %v; merged score %v", got[1].Paths, got[0].Score)
	}
}

func TestExcerpt(t *testing.T) {
	var lines []string
	for i := 0; i < 40; i++ {
		lines = append(lines, "Filler line about nothing in particular.")
	}
	lines[25] = "Parental leave is twenty weeks at full pay."
	passage := strings.Join(lines, "\n")
	got := mcpserver.Excerpt(passage, "How many weeks of parental leave?", 100)
	if !strings.Contains(got, "Parental leave is twenty weeks") {
		t.Errorf("excerpt %q misses the matching line", got)
	}
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") || utf8.RuneCountInString(got) > 102 {
		t.Errorf("excerpt %q: want a cut on both sides and at most 100 runes plus marks", got)
	}
	if got := mcpserver.Excerpt("Short\npassage.", "x", 100); got != "Short passage." {
		t.Errorf("short passage: %q", got)
	}
}
