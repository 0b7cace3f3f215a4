package extract

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// With the stream check off, PDFium fills its default memory limit with
// the bomb, and the process must stay under 2 GiB; while PDFium's memory
// was a Go slice, copied as it grew, reading this file took 4.3 GiB. A
// child process reads it so that the kernel's peak RSS is this file's
// alone.
func TestReadPDFBombPeakRSS(t *testing.T) {
	if os.Getenv("EXTRACT_BOMB_CHILD") != "" {
		_, err := Extract(context.Background(), bombPDF, noStreamBudget, NewPDFEngine(PDFOptions{}, nil))
		var fe *FileError
		if !errors.As(err, &fe) || !strings.HasPrefix(fe.Reason, "PDF needs more than 1 GB of memory") {
			t.Fatalf("got %v, want a FileError: PDF needs more than 1 GB of memory", err)
		}
		return
	}
	if testing.Short() {
		t.Skip("fills 1 GiB in a child process")
	}
	cmd := exec.Command(os.Args[0], "-test.run=^TestReadPDFBombPeakRSS$", "-test.count=1")
	cmd.Env = append(os.Environ(), "EXTRACT_BOMB_CHILD=1")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	rss := cmd.ProcessState.SysUsage().(*syscall.Rusage).Maxrss << 10 // KiB on Linux
	t.Logf("child's peak RSS: %s", bytesize.Format(rss))
	if rss > 2<<30 {
		t.Fatalf("child's peak RSS %s is over 2 GB", bytesize.Format(rss))
	}
}
