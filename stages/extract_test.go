package stages

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

func TestExtractor(t *testing.T) {
	dir := t.TempDir()
	if err := os.WriteFile(filepath.Join(dir, "a.txt"), []byte("Leave requests go to the team lead.\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join("..", "testdata", "sample", "employee-handbook-leave.docx"))
	if err != nil {
		t.Fatal(err)
	}
	testutil.WriteFile(t, filepath.Join(dir, "h.docx"), b)
	folder, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	x := Extractor{Folder: folder, Limits: extract.DefaultLimits}
	ctx := context.Background()

	job := &FileJob{Rel: "a.txt", Name: "a.txt", Kind: Changed}
	mustApply(t, x, ctx, job)
	if job.Kind != Changed || job.Doc == nil || job.Checksum == "" {
		t.Fatalf("new text file: kind %d doc %v checksum %q err %v", job.Kind, job.Doc, job.Checksum, job.Err)
	}
	if job.Checksum != extract.Checksum(job.Doc.Text) {
		t.Errorf("checksum %q is not that of the extracted text", job.Checksum)
	}
	sum := job.Checksum

	// Same text as indexed: only mtime/size need refreshing.
	job = &FileJob{Rel: "a.txt", Name: "a.txt", Kind: Changed, Old: &schema.FileEntry{Checksum: sum}}
	mustApply(t, x, ctx, job)
	if job.Kind != Touched || job.Doc != nil {
		t.Errorf("unchanged text: kind %d doc %v", job.Kind, job.Doc)
	}
	job = &FileJob{Rel: "a.txt", Name: "a.txt", Kind: Changed, Old: &schema.FileEntry{Checksum: sum}}
	mustApply(t, Extractor{Folder: folder, Limits: extract.DefaultLimits, Force: true}, ctx, job)
	if job.Kind != Changed || job.Doc == nil {
		t.Errorf("forced: kind %d", job.Kind)
	}

	job = &FileJob{Rel: "h.docx", Name: "h.docx", Kind: Changed}
	mustApply(t, x, ctx, job)
	if job.Kind != Changed || len(job.Doc.Text) < 100 {
		t.Errorf("docx: kind %d err %v", job.Kind, job.Err)
	}

	job = &FileJob{Rel: "gone.txt", Name: "gone.txt", Kind: Changed}
	mustApply(t, x, ctx, job)
	// Deleted since the walk: gone, as a deleted file, not a failure.
	if job.Kind != Gone || job.Err != nil {
		t.Errorf("missing file: kind %d err %v", job.Kind, job.Err)
	}

	// Unchanged files are not read at all (this path does not exist).
	job = &FileJob{Rel: "gone.txt", Name: "gone.txt", Kind: Unchanged}
	mustApply(t, x, ctx, job)
	if job.Kind != Unchanged || job.Err != nil || job.Doc != nil {
		t.Errorf("unchanged file was read: kind %d err %v", job.Kind, job.Err)
	}
}

func mustApply(t *testing.T, x Extractor, ctx context.Context, job *FileJob) {
	t.Helper()
	if err := x.Apply(ctx, job); err != nil {
		t.Fatal(err)
	}
}

func TestExtractorPDFAndCancel(t *testing.T) {
	dir := filepath.Join("..", "testdata", "sample")
	folder, err := OpenFolder(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer folder.Close()
	pdf := extract.NewPDFEngine(extract.PDFOptions{}, nil)
	defer pdf.Close()
	x := Extractor{Folder: folder, Limits: extract.DefaultLimits, PDF: pdf}
	const name = "event-ingestion-design.pdf"
	job := &FileJob{Rel: name, Name: name, Kind: Changed}
	mustApply(t, x, context.Background(), job)
	if job.Kind != Changed || len(job.Doc.PageStarts) == 0 {
		t.Fatalf("pdf: kind %d err %v", job.Kind, job.Err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	job = &FileJob{Rel: name, Name: name, Kind: Changed}
	if err := x.Apply(ctx, job); !errors.Is(err, context.Canceled) || job.Kind != Changed {
		t.Fatalf("cancelled: err %v, kind %d; want context.Canceled and the job left alone", err, job.Kind)
	}
}
