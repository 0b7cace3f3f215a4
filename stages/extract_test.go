package stages

import (
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

func TestExtractor(t *testing.T) {
	dir := t.TempDir()
	text := filepath.Join(dir, "a.txt")
	if err := os.WriteFile(text, []byte("Leave requests go to the team lead.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	docx := filepath.Join("..", "testdata", "sample", "employee-handbook-leave.docx")
	x := Extractor{Limits: extract.DefaultLimits}
	ctx := context.Background()

	job := &FileJob{Abs: text, Kind: Changed}
	x.Apply(ctx, job)
	if job.Kind != Changed || job.Doc == nil || job.Checksum == "" {
		t.Fatalf("new text file: kind %d doc %v checksum %q err %v", job.Kind, job.Doc, job.Checksum, job.Err)
	}
	if job.Checksum != extract.Checksum(job.Doc.Text) {
		t.Errorf("checksum %q is not that of the extracted text", job.Checksum)
	}
	sum := job.Checksum

	// Same text as indexed: only mtime/size need refreshing.
	job = &FileJob{Abs: text, Kind: Changed, Old: &schema.FileEntry{Checksum: sum}}
	x.Apply(ctx, job)
	if job.Kind != Touched || job.Doc != nil {
		t.Errorf("unchanged text: kind %d doc %v", job.Kind, job.Doc)
	}
	job = &FileJob{Abs: text, Kind: Changed, Old: &schema.FileEntry{Checksum: sum}}
	Extractor{Limits: extract.DefaultLimits, Force: true}.Apply(ctx, job)
	if job.Kind != Changed || job.Doc == nil {
		t.Errorf("forced: kind %d", job.Kind)
	}

	job = &FileJob{Abs: docx, Kind: Changed}
	x.Apply(ctx, job)
	if job.Kind != Changed || len(job.Doc.Text) < 100 {
		t.Errorf("docx: kind %d err %v", job.Kind, job.Err)
	}

	job = &FileJob{Abs: filepath.Join(dir, "gone.txt"), Kind: Changed}
	x.Apply(ctx, job)
	if job.Kind != Failed || job.Err == nil {
		t.Errorf("missing file: kind %d err %v", job.Kind, job.Err)
	}

	// Unchanged files are not read at all (this path does not exist).
	job = &FileJob{Abs: filepath.Join(dir, "gone.txt"), Kind: Unchanged}
	x.Apply(ctx, job)
	if job.Kind != Unchanged || job.Err != nil || job.Doc != nil {
		t.Errorf("unchanged file was read: kind %d err %v", job.Kind, job.Err)
	}
}
