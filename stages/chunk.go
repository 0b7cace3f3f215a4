package stages

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

// Chunker splits the text of changed files into chunks.
type Chunker struct {
	Config chunk.Config
	Tokens chunk.TokenCounter
	// MaxChunks caps the chunks of one file (0 = no cap): the file is
	// indexed up to the cap and marked truncated (docs/command-line.md: Large files).
	MaxChunks int
}

// Apply fills job.Chunks for a Changed file and returns how many chunks it
// made; other kinds pass through with 0. The error is ctx's cause once ctx
// has ended, even part way through one long document.
func (c Chunker) Apply(ctx context.Context, job *FileJob) (int, error) {
	if job.Kind != Changed {
		return 0, nil
	}
	chunks, truncated, err := chunk.SplitLimit(ctx, job.Doc.Text, job.Doc.PageStarts, c.Config, c.Tokens, c.MaxChunks)
	if err != nil {
		return 0, err
	}
	job.Chunks = chunks
	if truncated {
		total := utf8.RuneCountInString(job.Doc.Text)
		end := chunks[len(chunks)-1].CharEnd
		job.Truncated = fmt.Sprintf("only the first %d chunks are indexed (characters 1-%d of %d, %d%%): the file is over the cap of %d chunks per file; split it, or raise --max-file-chunks",
			len(chunks), end, total, int(100*int64(end)/int64(total)), c.MaxChunks)
	}
	if hasHeadings(job.Ext) {
		chunk.AddHeadings(job.Doc.Text, job.Chunks)
	}
	return len(job.Chunks), nil
}

// hasHeadings: markdown, and DOCX whose reader writes heading-styled
// paragraphs as markdown headings. In plain text a leading # is too often
// a comment.
func hasHeadings(ext string) bool {
	return slices.Contains([]string{".md", ".docx"}, strings.ToLower(ext))
}
