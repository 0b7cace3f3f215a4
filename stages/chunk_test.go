package stages

import (
	"context"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

func TestChunker(t *testing.T) {
	c := Chunker{Config: chunk.Default, Tokens: testTokenizer(t)}
	text := strings.Repeat("The checkout service retries each payment twice before it gives up.\n\n", 60)
	job := &FileJob{Kind: Changed, Doc: &extract.Document{Text: text}}
	n, err := c.Apply(context.Background(), job)
	if err != nil || n < 3 || n != len(job.Chunks) {
		t.Fatalf("Apply returned %d for %d chunks of a %d-char text", n, len(job.Chunks), len(text))
	}
	for i, ch := range job.Chunks {
		if ch.Index != i || ch.Text != text[ch.CharStart:ch.CharEnd] {
			t.Fatalf("chunk %d: index %d, text not at [%d,%d)", i, ch.Index, ch.CharStart, ch.CharEnd)
		}
	}
	for _, k := range []Kind{Unchanged, Touched, Failed} {
		job := &FileJob{Kind: k, Doc: &extract.Document{Text: text}}
		if n, err := c.Apply(context.Background(), job); err != nil || n != 0 || job.Chunks != nil {
			t.Errorf("kind %d was chunked", k)
		}
	}
}

func TestChunkerHeadings(t *testing.T) {
	c := Chunker{Config: chunk.Default, Tokens: testTokenizer(t)}
	text := "# Payments\n\n" + strings.Repeat("The checkout service retries each payment twice.\n\n", 30) +
		"## Refunds\n\n" + strings.Repeat("A refund goes back to the original card.\n\n", 30)
	for ext, want := range map[string]bool{".md": true, ".docx": true, ".txt": false} {
		job := &FileJob{Kind: Changed, Ext: ext, Doc: &extract.Document{Text: text}}
		if _, err := c.Apply(context.Background(), job); err != nil {
			t.Fatal(err)
		}
		first, last := job.Chunks[0], job.Chunks[len(job.Chunks)-1]
		if got := first.Headings == "Payments" && last.Headings == "Payments\nRefunds"; got != want {
			t.Errorf("%s: first chunk headings %q, last %q", ext, first.Headings, last.Headings)
		}
	}
}
