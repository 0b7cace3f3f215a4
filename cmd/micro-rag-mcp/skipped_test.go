package main

import (
	"compress/gzip"
	"encoding/json"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// writeMixedFolder adds to the sample folder files a demanding user keeps
// beside documents; skipped maps each added file to the reason it is not
// indexed with the default extensions (SkipReason).
func writeMixedFolder(t *testing.T, data string) (skipped map[string]string) {
	t.Helper()
	write := func(name string, b []byte) {
		p := filepath.Join(data, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	pdf, err := os.ReadFile("../../stages/extract/testdata/pdf/image-only.pdf")
	if err != nil {
		t.Fatal(err)
	}
	write("scans/image-only.pdf", pdf)
	write("empty.txt", nil)
	var gz strings.Builder
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("The changelog of the lighthouse project.\n"))
	zw.Close()
	write("pkg/changelog.gz", []byte(gz.String()))
	write("data.json", []byte(`{"port": "Skerry Point", "high water": "06:42"}`))
	// A table over the default size cap (--max-table-kib).
	write("exports/tides.csv", []byte("port,high water\n"+strings.Repeat("Skerry Point,06:42\n", int(stages.DefaultTableCap)/19+1)))
	write("photo.png", []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"))
	write("notes.weird", []byte("a file type nobody reads"))
	write("bin/tool", []byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00"))
	// Read by default: files without an extension that are text, and the
	// office and book formats made by LibreOffice (testdata/golden).
	write("pkg/README", []byte("The lighthouse package keeps the keeper's logs.\n"))
	write("pkg/copyright", []byte("Copyright 2026 The Skerry Point keepers.\n"))
	write("pkg/README.Debian", []byte("Debian notes for the lighthouse package.\n"))
	for _, name := range []string{"lighthouse.odt", "lighthouse.rtf", "lighthouse.epub", "tides.xlsx", "harbour.pptx"} {
		b, err := os.ReadFile(filepath.Join("../../testdata/golden", name))
		if err != nil {
			t.Fatal(err)
		}
		write("office/"+name, b)
	}
	return map[string]string{
		"scans/image-only.pdf": stages.SkipNoText, "empty.txt": stages.SkipNoText,
		"pkg/changelog.gz": stages.SkipCompressed, "data.json": stages.SkipNotEnabled, "exports/tides.csv": stages.SkipLargeTable,
		"photo.png": stages.SkipBinary, "notes.weird": stages.SkipNoReader, "bin/tool": stages.SkipBinary,
	}
}

// checkAccounted checks that every file of data (but the index) is either
// indexed with text, failed, or in a skip group, and that want's files are
// in the groups of their reasons.
func checkAccounted(t *testing.T, what, data string, withText int, failed int, groups []stages.SkipGroup, want map[string]string) {
	t.Helper()
	total := 0
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() && d.Name() == "index" {
			return filepath.SkipDir
		}
		if d.Type().IsRegular() {
			total++
		}
		return nil
	})
	if n := withText + failed + stages.SkipTotal(groups); n != total {
		t.Errorf("%s: %d files on disk, but %d with text + %d failed + %d skipped = %d: %+v",
			what, total, withText, failed, stages.SkipTotal(groups), n, groups)
	}
	for path, reason := range want {
		found := false
		for _, g := range groups {
			found = found || g.Reason == reason && strings.Contains(strings.Join(g.Examples, "\n")+"\n", path+"\n")
		}
		if !found {
			t.Errorf("%s: %s not reported as %s: %+v", what, path, reason, groups)
		}
	}
}

// TestSkippedFilesReported: reindex (CLI and tool) and status account for
// every file of a mixed folder, by reason, and say that OCR is not there.
func TestSkippedFilesReported(t *testing.T) { eachBackend(t, testSkippedFilesReported) }

func testSkippedFilesReported(t *testing.T, b backend) {
	data := copySample(t)
	want := writeMixedFolder(t, data)
	d := []string{"--data-folder", data}
	code, res, stderr := reindexJSON(t, b, d...)
	if code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	withText := res.FilesAdded - 2 // the image-only PDF and the empty file are added without text
	if withText != 6+3+5 || res.FilesFailed != 0 {
		t.Errorf("want the 6 sample files, 3 text files without a usual extension and 5 office files indexed: %+v", res)
	}
	checkAccounted(t, "reindex --json", data, withText, res.FilesFailed, res.Skipped, want)
	if res.FilesSkipped != stages.SkipTotal(res.Skipped) {
		t.Errorf("files_skipped %d, groups count %d", res.FilesSkipped, stages.SkipTotal(res.Skipped))
	}

	code, stdout, _ := b.run(t, append([]string{"reindex"}, d...)...)
	if code != 0 || !strings.Contains(stdout, "files skipped:   8") || !strings.Contains(stdout, "OCR is not available") ||
		!strings.Contains(stdout, "1 extension not enabled (.json): data.json") || !strings.Contains(stdout, "--add-exts") {
		t.Errorf("reindex table: exit %d\n%s", code, stdout)
	}
	st := statusOf(t, b, d...)
	checkAccounted(t, "status --json", data, st.Files-2, len(st.Failed), st.Skipped, want)
	code, stdout, _ = b.run(t, append([]string{"status"}, d...)...)
	if code != 0 || statusValue(stdout, "not indexed") != "8" || !strings.Contains(stdout, "2 no text: empty.txt, scans/image-only.pdf") {
		t.Errorf("status table: exit %d\n%s", code, stdout)
	}

	// list names every indexed file, the one without text with 0 chunks.
	code, stdout, stderr = b.run(t, append([]string{"list", "--json"}, d...)...)
	var listed struct{ Documents []engine.IndexedFile }
	if err := json.Unmarshal([]byte(stdout), &listed); code != 0 || err != nil || len(listed.Documents) != st.Files {
		t.Fatalf("list --json: exit %d, %v, %d documents for %d files\n%s", code, err, len(listed.Documents), st.Files, stderr)
	}
	for _, doc := range listed.Documents {
		if (doc.Chunks == 0) != (doc.Path == "scans/image-only.pdf" || doc.Path == "empty.txt") {
			t.Errorf("list: %+v", doc)
		}
	}
	code, stdout, _ = b.run(t, append([]string{"list", "--path-glob", "office/*"}, d...)...)
	if code != 0 || !strings.Contains(stdout, "office/lighthouse.rtf") || !strings.HasSuffix(stdout, "5 documents, 5 chunks\n") {
		t.Errorf("list --path-glob office/*: exit %d\n%s", code, stdout)
	}
	code, stdout, _ = b.run(t, append([]string{"list", "--path-glob", "office/lighthouse.rtf"}, d...)...)
	if code != 0 || !strings.HasSuffix(stdout, "\n1 document, 1 chunk\n") {
		t.Errorf("list of one file: exit %d\n%s", code, stdout)
	}

	// The tool's result says the same, in its structured content and text.
	c := b.startServer(t, data, "--watch=false")
	r := reindexWhenFree(t, c)
	var out engine.ReindexResult
	decode(t, r.StructuredContent, &out)
	checkAccounted(t, "reindex tool", data, res.FilesAdded-2, out.FilesFailed, out.Skipped, want)
	if text := toolText(r); !strings.Contains(text, "8 files seen but not indexed") || !strings.Contains(text, "OCR is not available") {
		t.Errorf("reindex tool text: %s", text)
	}
}
