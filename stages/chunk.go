package stages

import (
	"strings"

	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
)

// Chunker splits the text of changed files into chunks.
type Chunker struct {
	Config chunk.Config
	Tokens chunk.TokenCounter
}

// Apply fills job.Chunks for a Changed file and returns how many chunks it
// made; other kinds pass through with 0.
func (c Chunker) Apply(job *FileJob) int {
	if job.Kind != Changed {
		return 0
	}
	job.Chunks = chunk.Split(job.Doc.Text, job.Doc.PageStarts, c.Config, c.Tokens)
	if hasHeadings(job.Ext) {
		chunk.AddHeadings(job.Doc.Text, job.Chunks)
	}
	return len(job.Chunks)
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
