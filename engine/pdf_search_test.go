package engine

import (
	"bufio"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestSearchFindsEveryPDFSentence indexes real PDFs made by LibreOffice,
// groff, groff+ghostscript and pdflatex, then searches for every sentence of
// their source: one of the top three chunks must hold the sentence with its
// words separated as written, cited on its page (or the page before, when
// the chunk starts there and runs over).
func TestSearchFindsEveryPDFSentence(t *testing.T) {
	src := filepath.Join("..", "stages", "extract", "testdata", "pdf")
	type sentence struct {
		page int
		text string
	}
	var sentences []sentence
	f, err := os.Open(filepath.Join(src, "sentences.txt"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		page, text, ok := strings.Cut(sc.Text(), "\t")
		n, err := strconv.Atoi(page)
		if !ok || err != nil {
			t.Fatalf("bad line %q", sc.Text())
		}
		if len(strings.Fields(text)) >= 6 { // headings are too short to be a fair query
			sentences = append(sentences, sentence{n, text})
		}
	}
	f.Close()
	if len(sentences) < 15 {
		t.Fatalf("only %d sentences read", len(sentences))
	}
	for _, tool := range []string{"libreoffice", "groff", "ps2pdf", "pdflatex"} {
		t.Run(tool, func(t *testing.T) {
			data := t.TempDir()
			raw, err := os.ReadFile(filepath.Join(src, "river-"+tool+".pdf"))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(data, "river.pdf"), raw, 0o644)
			e := newEngine(t, Config{DataFolder: data})
			if res := reindex(t, e, ReindexRequest{}); res.FilesAdded != 1 || res.ChunksTotal == 0 {
				t.Fatalf("reindex: %+v", res)
			}
			snap := e.store.Acquire()
			defer snap.Release()
			for _, s := range sentences {
				q, err := e.embedder.Embed(nil, []string{s.text})
				if err != nil {
					t.Fatal(err)
				}
				hits, err := snap.Search(q, 3)
				if err != nil {
					t.Fatal(err)
				}
				found := false
				for _, h := range hits {
					if strings.Contains(strings.Join(strings.Fields(h.Record.Text), " "), s.text) &&
						(h.Record.Page == s.page || h.Record.Page == s.page-1) {
						found = true
						break
					}
				}
				if !found {
					t.Errorf("page %d sentence not found as written: %q (top hit page %d: %.120q)", s.page, s.text, hits[0].Record.Page, hits[0].Record.Text)
				}
			}
		})
	}
}
