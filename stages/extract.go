package stages

import (
	"context"

	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Extractor reads the text of changed files. One value serves every worker
// of a pool.
type Extractor struct {
	Limits extract.Limits
	Force  bool // re-chunk even when the text is unchanged
}

// Apply reads a Changed file into job.Doc and job.Checksum. A file whose
// text is what the index already holds becomes Touched (its vectors stay);
// one that cannot be read becomes Failed with job.Err set. Other kinds pass
// through untouched.
func (x Extractor) Apply(ctx context.Context, job *FileJob) {
	if job.Kind != Changed {
		return
	}
	doc, err := extract.Extract(job.Abs, x.Limits)
	if err != nil {
		job.Kind, job.Err = Failed, err
		return
	}
	job.Doc, job.Checksum = doc, extract.Checksum(doc.Text)
	if !x.Force && job.Old != nil && job.Old.Checksum == job.Checksum {
		job.Kind, job.Doc = Touched, nil
	}
}
