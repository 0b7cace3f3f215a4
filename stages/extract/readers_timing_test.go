package extract

import (
	"context"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"golang.org/x/text/encoding/charmap"
)

// benchText is about n bytes of seeded pseudo-prose in paragraphs.
func benchText(n int, words []string) string {
	r := rand.New(rand.NewPCG(1, 2))
	var sb strings.Builder
	for sb.Len() < n {
		for range 60 {
			sb.WriteString(words[r.IntN(len(words))])
			sb.WriteByte(' ')
		}
		sb.WriteString(".\n\n")
	}
	return sb.String()
}

func BenchmarkExtract(b *testing.B) {
	latin := []string{"search", "index", "paragraph", "Größe", "café", "naïve", "document", "vector", "lighthouse", "à"}
	cyr := []string{"поиск", "индекс", "документ", "вектор", "абзац", "Москва", "сервер"}
	dir := b.TempDir()
	utf8Text := benchText(4<<20, latin)
	cp1251, _ := charmap.Windows1251.NewEncoder().String(benchText(4<<20, cyr))
	cases := []struct{ name, file, body string }{
		{"txt-utf8", "a.txt", utf8Text},
		{"txt-windows1251", "b.txt", cp1251},
		{"html", "c.html", "<html><title>t</title><body><p>" + strings.ReplaceAll(utf8Text, "\n\n", "</p>\n<p>") + "</p></body></html>"},
		{"csv", "d.csv", "a,b,c\n" + strings.ReplaceAll(strings.ReplaceAll(utf8Text, " ", ","), ".\n\n", "\n")},
	}
	for _, c := range cases {
		p := filepath.Join(dir, c.file)
		if err := os.WriteFile(p, []byte(c.body), 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(len(c.body)))
			for b.Loop() {
				if _, err := Extract(context.Background(), p, DefaultLimits, testPDF); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	var doc strings.Builder
	doc.WriteString(`<w:document xmlns:w="` + nsW + `"><w:body>`)
	for _, para := range strings.Split(utf8Text, "\n\n") {
		doc.WriteString("<w:p><w:pPr><w:pStyle w:val=\"Normal\"/></w:pPr><w:r><w:rPr><w:b/></w:rPr><w:t xml:space=\"preserve\">" + para + "</w:t></w:r></w:p>")
	}
	doc.WriteString("</w:body></w:document>")
	bigDocx := writeDocx(b, "big.docx", doc.String())
	b.Run("docx-4MB-text", func(b *testing.B) {
		b.ReportAllocs()
		b.SetBytes(int64(doc.Len())) // uncompressed XML
		for b.Loop() {
			if _, err := Extract(context.Background(), bigDocx, DefaultLimits, testPDF); err != nil {
				b.Fatal(err)
			}
		}
	})
	paras := strings.Split(utf8Text, "\n\n")
	var odt, sheet, rtf strings.Builder
	odt.WriteString(`<office:document-content ` + nsT + `><office:body><office:text>`)
	sheet.WriteString(`<worksheet xmlns="` + nsS + `"><sheetData>`)
	rtf.WriteString(`{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Arial;}}`)
	for _, para := range paras {
		odt.WriteString("<text:p>" + para + "</text:p>")
		sheet.WriteString(`<row><c t="inlineStr"><is><t>` + para + `</t></is></c><c><v>4.1</v></c></row>`)
		rtf.WriteString(strings.NewReplacer("é", `\'e9`, "ö", `\'f6`, "ß", `\'df`, "ï", `\'ef`, "à", `\'e0`).Replace(para) + "\\par\n")
	}
	odt.WriteString("</office:text></office:body></office:document-content>")
	sheet.WriteString("</sheetData></worksheet>")
	rtf.WriteString("}")
	for _, c := range []struct {
		name, file string
		data       []byte
		size       int // uncompressed bytes, for MB/s
	}{
		{"odt-4MB-text", "big.odt", odtWith(b, odt.String()), odt.Len()},
		{"xlsx-4MB-text", "big.xlsx", xlsxWith(b, sheet.String()), sheet.Len()},
		{"epub-4MB-text", "big.epub", epubWith(b, "<html><body><p>"+strings.Join(paras, "</p><p>")+"</p></body></html>"), len(utf8Text)},
		{"rtf-4MB-text", "big.rtf", []byte(rtf.String()), rtf.Len()},
	} {
		p := filepath.Join(dir, c.file)
		if err := os.WriteFile(p, c.data, 0o644); err != nil {
			b.Fatal(err)
		}
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			b.SetBytes(int64(c.size))
			for b.Loop() {
				if _, err := Extract(context.Background(), p, DefaultLimits, testPDF); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	b.Run("docx-golden", func(b *testing.B) {
		p := "../../testdata/golden/lighthouse.docx"
		fi, err := os.Stat(p)
		if err != nil {
			b.Fatal(err)
		}
		b.ReportAllocs()
		b.SetBytes(fi.Size())
		for b.Loop() {
			if _, err := Extract(context.Background(), p, DefaultLimits, testPDF); err != nil {
				b.Fatal(err)
			}
		}
	})
}
