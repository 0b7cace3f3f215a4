package extract

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// FuzzReadPDF feeds arbitrary bytes to the PDF reader: it must return a
// document that keeps the package's invariants or a *FileError, and never
// panic.
func FuzzReadPDF(f *testing.F) {
	for _, dir := range []string{"testdata/pdf", "testdata/hostile"} {
		files, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
		if err != nil {
			f.Fatal(err)
		}
		for _, name := range files {
			data, err := os.ReadFile(name)
			if err != nil {
				f.Fatal(err)
			}
			f.Add(data)
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := testPDF.readBytes(context.Background(), "fuzz.pdf", data, DefaultLimits)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) {
				t.Fatalf("error %T %v is not a *FileError", err, err)
			}
			return
		}
		checkPDFInvariants(t, doc)
	})
}

// BenchmarkReadPDF reads the tool-made PDFs through Extract, engine warm.
func BenchmarkReadPDF(b *testing.B) {
	for _, name := range toolPDFs {
		path := filepath.Join("testdata/pdf", name)
		fi, err := os.Stat(path)
		if err != nil {
			b.Fatal(err)
		}
		b.Run(name, func(b *testing.B) {
			if _, err := Extract(context.Background(), path, DefaultLimits, testPDF); err != nil {
				b.Fatal(err) // starts the engine outside the timed loop
			}
			b.SetBytes(fi.Size())
			b.ReportAllocs()
			chars := 0
			for b.Loop() {
				doc, err := Extract(context.Background(), path, DefaultLimits, testPDF)
				if err != nil {
					b.Fatal(err)
				}
				chars += len(doc.Text)
			}
			b.ReportMetric(float64(chars)/b.Elapsed().Seconds(), "textbytes/s")
		})
	}
}
