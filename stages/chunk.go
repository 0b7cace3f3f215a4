package stages

import (
	"context"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

// Chunker splits the text of changed files into chunks.
type Chunker struct {
	Config chunk.Config
	Tokens chunk.TokenCounter
}

// Apply fills job.Chunks for a Changed file and returns how many chunks it
// made; other kinds pass through with 0. The error is ctx's cause once ctx
// has ended, even part way through one long document.
func (c Chunker) Apply(ctx context.Context, job *FileJob) (int, error) {
	if job.Kind != Changed {
		return 0, nil
	}
	chunks, _, err := chunk.SplitLimit(ctx, job.Doc.Text, job.Doc.PageStarts, c.Config, c.Tokens, 0)
	if err != nil {
		return 0, err
	}
	job.Chunks = chunks
	if hasHeadings(job.Ext) {
		chunk.AddHeadings(job.Doc.Text, job.Chunks)
	}
	return len(job.Chunks), nil
}

// hasHeadings: markdown, and DOCX whose reader writes heading-styled
// paragraphs as markdown headings. In plain text a leading # is too often
// a comment.
func hasHeadings(ext string) bool {
	switch strings.ToLower(ext) {
	case ".md", ".docx":
		return true
	}
	return false
}
