package stages

import "github.com/micro-rag/micro-rag-mcp/index/schema"

// Filter decides which files need reading, from what files.json says.
type Filter struct {
	Before map[string]*schema.FileEntry // the index's files as the run began
	Force  bool                         // read every file
}

// Apply marks job Changed (ToRead set to its size), or Unchanged when its
// mtime and size match its entry in Before: an unchanged file is not read.
// A job the walker already marked Failed or Skipped passes as it is.
func (f Filter) Apply(job *FileJob) {
	if job.Kind == Failed || job.Kind == Skipped {
		return
	}
	job.Old = f.Before[job.Rel]
	job.Kind, job.ToRead = Changed, job.Size
	if !f.Force && job.Old != nil && job.Old.Mtime == job.Mtime && job.Old.Size == job.Size {
		job.Kind, job.ToRead = Unchanged, 0
	}
}
