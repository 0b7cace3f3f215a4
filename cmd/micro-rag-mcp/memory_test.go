package main

// Peak memory of one reindex over one hostile-shaped file, read from the
// child process's rusage: each reader either reads the file within a
// bounded amount of memory or fails it at once with the reason.

import (
	"archive/zip"
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// maxPeakRSS is the goal for any one file, model loaded.
const maxPeakRSS = 600 << 20

// writeRepeat writes head, then unit n times, then tail, to path.
func writeRepeat(t *testing.T, path, head, unit string, n int, tail string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	w.WriteString(head)
	block := strings.Repeat(unit, max(1, (1<<20)/len(unit)))
	per := len(block) / len(unit)
	for left := n; left > 0; left -= per {
		if left < per {
			block = block[:left*len(unit)]
		}
		w.WriteString(block)
	}
	w.WriteString(tail)
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
}

// storedDocx writes a DOCX whose document.xml is stored, not deflated,
// so that no compression ratio check applies.
func storedDocx(t *testing.T, path string, writeXML func(io.Writer)) {
	t.Helper()
	os.MkdirAll(filepath.Dir(path), 0o755)
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	zw := zip.NewWriter(f)
	w, err := zw.CreateHeader(&zip.FileHeader{Name: "word/document.xml", Method: zip.Store})
	if err != nil {
		t.Fatal(err)
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	writeXML(bw)
	bw.Flush()
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
}

// peakReindex runs a reindex of data as a child process and returns its
// peak RSS, exit code and output.
func peakReindex(t *testing.T, data string) (peak int64, code int, out string) {
	t.Helper()
	cmd := exec.Command(binary, "reindex", "--data-folder", data, "--index-folder", filepath.Join(t.TempDir(), "idx"),
		"--exts", ".csv,.docx,.html", "--max-table-kib", "0") // the readers' own limits, not the size cap
	var buf bytes.Buffer
	cmd.Stdout, cmd.Stderr = &buf, &buf
	err := cmd.Run()
	if ee, ok := err.(*exec.ExitError); ok {
		code = ee.ExitCode()
	} else if err != nil {
		t.Fatal(err)
	}
	ru, ok := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	if !ok {
		t.Fatal("no rusage")
	}
	return ru.Maxrss << 10, code, buf.String() // Linux: Maxrss in KiB
}

// TestReaderMemory: the inputs that took gigabytes (issue 22) now fail
// with their reason, each within maxPeakRSS of peak memory. Local backend
// only: the readers' memory does not depend on the store.
func TestReaderMemory(t *testing.T) {
	const docHead = `<?xml version="1.0"?><w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>`
	tests := []struct {
		name, reason string
		make         func(path string)
	}{
		{"100 MiB row of empty CSV cells", "CSV row 2 has more than 16384 cells", func(dir string) {
			writeRepeat(t, filepath.Join(dir, "t.csv"), "h\nMARK", ",", 100<<20, "")
		}},
		{"256 MiB row of empty CSV cells", "CSV row 2 has more than 16384 cells", func(dir string) {
			writeRepeat(t, filepath.Join(dir, "t.csv"), "h\nMARK", ",", 256<<20-6, "")
		}},
		{"500,000-column CSV header", "CSV row 1 has more than 16384 cells", func(dir string) {
			var b strings.Builder
			for i := range 500_000 {
				fmt.Fprintf(&b, "col%d,", i)
			}
			os.MkdirAll(dir, 0o755)
			os.WriteFile(filepath.Join(dir, "t.csv"), []byte(b.String()+"x\n"+strings.Repeat("v,", 500_000)+"v\n"), 0o644)
		}},
		{"60 MB stored document.xml of 20M nested elements", "document XML has elements nested deeper than 256 levels", func(dir string) {
			storedDocx(t, filepath.Join(dir, "t.docx"), func(w io.Writer) {
				io.WriteString(w, docHead)
				io.WriteString(w, strings.Repeat("<a>", 20_000_000))
			})
		}},
		{"1M-deep balanced w:sdt", "document XML has elements nested deeper than 256 levels", func(dir string) {
			storedDocx(t, filepath.Join(dir, "t.docx"), func(w io.Writer) {
				io.WriteString(w, docHead+strings.Repeat("<w:sdt>", 1_000_000)+"<w:p><w:r><w:t>deep</w:t></w:r></w:p>"+
					strings.Repeat("</w:sdt>", 1_000_000)+"</w:body></w:document>")
			})
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			data := filepath.Join(t.TempDir(), "docs")
			tc.make(data)
			peak, code, out := peakReindex(t, data)
			t.Logf("peak RSS %d MB, exit %d", peak>>20, code)
			if peak > maxPeakRSS {
				t.Errorf("peak RSS %d MB, over %d MB", peak>>20, maxPeakRSS>>20)
			}
			if code != 0 || !strings.Contains(out, "files failed:    1") || !strings.Contains(out, tc.reason) {
				t.Errorf("exit %d, want the file failed with %q:\n%s", code, tc.reason, out)
			}
		})
	}
	// A 256 MiB page of nested markup is read, in bounded memory: the HTML
	// reader keeps counters, not a stack, and streams a UTF-8 file.
	t.Run("256 MiB of nested HTML", func(t *testing.T) {
		data := filepath.Join(t.TempDir(), "docs")
		writeRepeat(t, filepath.Join(data, "t.html"), "<html><body>", "<div>", (256<<20-20)/5, "deep")
		peak, code, out := peakReindex(t, data)
		t.Logf("peak RSS %d MB, exit %d", peak>>20, code)
		if peak > maxPeakRSS {
			t.Errorf("peak RSS %d MB, over %d MB", peak>>20, maxPeakRSS>>20)
		}
		if code != 0 || !strings.Contains(out, "files added:     1") {
			t.Errorf("exit %d:\n%s", code, out)
		}
	})
}
