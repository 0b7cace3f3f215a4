package stages

import "github.com/micro-rag/micro-rag-mcp/stages/chunk"

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
	return len(job.Chunks)
}
