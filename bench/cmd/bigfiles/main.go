// Command bigfiles writes the single files of issue 34's memory table, each
// in its own folder under DIR (DIR/NAME/NAME.EXT), for
// /usr/bin/time -v micro-rag-mcp reindex --data-folder DIR/NAME:
// xlsxamp (one 1 MB shared string in 4,000 cells), xlsxcell (one 40 MB
// cell), epub (100,000 chapters), rtf (100 MB of text), odt (55 MB of
// text) and md (100,000 short lines). Words are seeded, so every run
// writes the same files.
package main

import (
	"archive/zip"
	"fmt"
	"math/rand"
	"os"
	"path/filepath"
	"strings"
)

func zipFile(path string, parts [][2]string) {
	f, err := os.Create(path)
	must(err)
	zw := zip.NewWriter(f)
	for _, p := range parts {
		w, err := zw.Create(p[0])
		must(err)
		_, err = w.Write([]byte(p[1]))
		must(err)
	}
	must(zw.Close())
	must(f.Close())
}

func must(err error) {
	if err != nil {
		fmt.Fprintln(os.Stderr, "bigfiles:", err)
		os.Exit(1)
	}
}

var rng = rand.New(rand.NewSource(1))

func words(n int) string {
	var b strings.Builder
	ws := []string{"alpha", "beta", "gamma", "delta", "river", "stone", "market", "engine", "window", "garden"}
	for i := 0; b.Len() < n; i++ {
		b.WriteString(ws[rng.Intn(len(ws))])
		if i%13 == 12 {
			b.WriteString(". ")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

const ns = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"

func xlsx(path string, shared []string, sheet string) {
	var ss strings.Builder
	ss.WriteString(`<sst xmlns="` + ns + `">`)
	for _, s := range shared {
		ss.WriteString("<si><t>" + s + "</t></si>")
	}
	ss.WriteString("</sst>")
	zipFile(path, [][2]string{
		{"xl/workbook.xml", `<workbook xmlns="` + ns + `" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`},
		{"xl/_rels/workbook.xml.rels", `<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Target="sharedStrings.xml"/></Relationships>`},
		{"xl/sharedStrings.xml", ss.String()},
		{"xl/worksheets/sheet1.xml", `<worksheet xmlns="` + ns + `"><sheetData>` + sheet + `</sheetData></worksheet>`},
	})
}

func main() {
	if len(os.Args) != 2 {
		fmt.Fprintln(os.Stderr, "usage: bigfiles DIR")
		os.Exit(2)
	}
	dir := os.Args[1]
	mk := func(name string) string {
		d := filepath.Join(dir, name)
		must(os.MkdirAll(d, 0o755))
		return filepath.Join(d, name)
	}
	// XLSX amplification: one ~1 MB shared string referenced by 4000 cells.
	var sheet strings.Builder
	for r := 0; r < 400; r++ {
		sheet.WriteString("<row>")
		for c := 0; c < 10; c++ {
			sheet.WriteString(`<c t="s"><v>0</v></c>`)
		}
		sheet.WriteString("</row>")
	}
	xlsx(mk("xlsxamp")+".xlsx", []string{words(1 << 20)}, sheet.String())
	// XLSX with one 40 MB cell.
	xlsx(mk("xlsxcell")+".xlsx", []string{words(40 << 20)}, `<row><c t="s"><v>0</v></c></row>`)
	// EPUB with 100,000 entries.
	var opf, spine strings.Builder
	parts := [][2]string{{"mimetype", "application/epub+zip"}, {"META-INF/container.xml", `<container><rootfiles><rootfile full-path="OPS/book.opf"/></rootfiles></container>`}}
	opf.WriteString(`<package><manifest>`)
	for i := 0; i < 100000; i++ {
		n := fmt.Sprintf("c%d.xhtml", i)
		opf.WriteString(fmt.Sprintf(`<item id="i%d" href="%s"/>`, i, n))
		spine.WriteString(fmt.Sprintf(`<itemref idref="i%d"/>`, i))
		parts = append(parts, [2]string{"OPS/" + n, "<html><body><p>chapter " + fmt.Sprint(i) + " " + words(40) + "</p></body></html>"})
	}
	opf.WriteString(`</manifest><spine>` + spine.String() + `</spine></package>`)
	parts = append(parts, [2]string{"OPS/book.opf", opf.String()})
	zipFile(mk("epub")+".epub", parts)
	// RTF of 100 MB text.
	must(os.WriteFile(mk("rtf")+".rtf", []byte(`{\rtf1\ansi `+words(100<<20)+`}`), 0o644))
	// ODT with 55 MB of text.
	odt := `<office:document-content xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"><office:body><office:text>`
	var ob strings.Builder
	ob.WriteString(odt)
	w := words(55 << 20)
	for i := 0; i < len(w); i += 4000 {
		ob.WriteString("<text:p>" + w[i:min(i+4000, len(w))] + "</text:p>")
	}
	ob.WriteString("</office:text></office:body></office:document-content>")
	zipFile(mk("odt")+".odt", [][2]string{{"mimetype", "application/vnd.oasis.opendocument.text"}, {"content.xml", ob.String()}})
	// Markdown: 100,000 short lines, 2 MB.
	var md strings.Builder
	for i := 0; i < 100000; i++ {
		fmt.Fprintf(&md, "line %d %s\n", i, words(10))
	}
	must(os.WriteFile(mk("md")+".md", []byte(md.String()), 0o644))
}
