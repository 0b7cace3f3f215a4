package stages

import (
	"context"
	"errors"
	"io/fs"
	"runtime/debug"

	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Extractor reads the text of changed files. One value serves every worker
// of a pool.
type Extractor struct {
	Folder *Folder // documents are opened through it, never by path
	Limits extract.Limits
	PDF    *extract.PDFEngine
	Force  bool // re-chunk even when the text is unchanged
}

// bigText is the text length past which a document's reading leaves
// enough garbage (decoder buffers, the reader's copies) to hand it back to
// the system at once, before the embedder's buffers are added to it: the
// 40 MB XLSX cell peaked at 564 MB RSS without this, 468 MB with it.
const bigText = 8 << 20

// Apply reads a Changed file into job.Doc and job.Checksum. A file whose
// text is what the index already holds becomes Touched (its vectors stay);
// one that cannot be read becomes Failed with job.Err set. Other kinds pass
// through untouched. The error is ctx's cause once ctx has ended.
func (x Extractor) Apply(ctx context.Context, job *FileJob) error {
	if job.Kind != Changed {
		return nil
	}
	doc, err := x.read(ctx, job)
	if ctx.Err() != nil {
		return context.Cause(ctx)
	}
	if errors.Is(err, fs.ErrNotExist) {
		job.Kind = Gone // deleted since the walk listed it
		return nil
	}
	if err != nil {
		job.Kind, job.Err = Failed, err
		return nil
	}
	job.Doc, job.Checksum = doc, extract.Checksum(doc.Text)
	if len(doc.Text) >= bigText {
		debug.FreeOSMemory()
	}
	// A truncated file is chunked again: the cap may have been raised.
	if !x.Force && job.Old != nil && job.Old.Checksum == job.Checksum && job.Old.Truncated == "" {
		job.Kind, job.Doc = Touched, nil
	}
	return nil
}

// read opens the job's file through the folder's root and reads that handle.
// The size and time recorded are those of the file opened, not of the
// walk: a file that changed in between is recorded as it was read.
func (x Extractor) read(ctx context.Context, job *FileJob) (*extract.Document, error) {
	f, fi, err := x.Folder.Open(job.Name)
	if err != nil {
		return nil, &extract.FileError{Path: job.Rel, Reason: "cannot open file", Err: err}
	}
	defer f.Close()
	job.Size, job.Mtime = fi.Size(), float64(fi.ModTime().UnixNano())/1e9
	return extract.Read(ctx, job.Rel, f, x.Limits, x.PDF)
}
