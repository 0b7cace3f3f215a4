package bench

import (
	"context"
	"os"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/stages/chunk"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// BenchmarkExtract reads every file of one type in the reader corpus per op;
// MB/s is over the files' size on disk.
func BenchmarkExtract(b *testing.B) {
	c := buildCorpus(b, readerCorpus)
	for _, ext := range []string{".txt", ".md", ".pdf", ".docx", ".html", ".csv"} {
		b.Run(ext[1:], func(b *testing.B) {
			files := corpusFiles(b, c.Dir, ext)
			if len(files) == 0 {
				b.Fatalf("no %s files in the reader corpus", ext)
			}
			var size int64
			for _, f := range files {
				// Warm-up outside the timing: PDFium's first start costs seconds.
				if _, err := extract.Extract(context.Background(), f, extract.DefaultLimits, benchPDF); err != nil {
					b.Fatal(err)
				}
				fi, err := os.Stat(f)
				if err != nil {
					b.Fatal(err)
				}
				size += fi.Size()
			}
			b.ReportAllocs()
			b.SetBytes(size)
			chars := 0
			start := time.Now()
			for b.Loop() {
				for _, f := range files {
					doc, err := extract.Extract(context.Background(), f, extract.DefaultLimits, benchPDF)
					if err != nil {
						b.Fatal(err)
					}
					chars += len(doc.Text)
				}
			}
			sec := time.Since(start).Seconds()
			b.ReportMetric(float64(b.N*len(files))/sec, "files/s")
			b.ReportMetric(float64(chars)/sec/1e6, "text-MB/s")
		})
	}
}

// BenchmarkChunk splits the extracted text of the reader corpus with the
// real tokenizer's 256-token budget.
func BenchmarkChunk(b *testing.B) {
	c := buildCorpus(b, readerCorpus)
	t := tok(b)
	var texts []*extract.Document
	var size int64
	for _, f := range corpusFiles(b, c.Dir) {
		doc, err := extract.Extract(context.Background(), f, extract.DefaultLimits, benchPDF)
		if err != nil {
			b.Fatal(err)
		}
		texts = append(texts, doc)
		size += int64(len(doc.Text))
	}
	b.ReportAllocs()
	b.SetBytes(size)
	n := 0
	start := time.Now()
	for b.Loop() {
		for _, d := range texts {
			n += len(chunk.Split(d.Text, d.PageStarts, chunk.Default, t))
		}
	}
	b.ReportMetric(float64(n)/time.Since(start).Seconds(), "chunks/s")
}
