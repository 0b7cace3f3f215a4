package extract

import (
	"context"
	"math/rand"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

const (
	nsSheet  = `xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"`
	nsTable  = `xmlns:table="urn:oasis:names:tc:opendocument:xmlns:table:1.0"`
	nsOffice = `xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0" xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0"`
)

// prose is n bytes of seeded words: it deflates about 3:1, under the
// compression-ratio guard, so only the expansion can stop a file.
func prose(n int) string {
	rng := rand.New(rand.NewSource(int64(n)))
	words := []string{"tide", "harbour", "pilot", "buoy", "channel", "ebb", "flood", "mooring", "quay", "swell"}
	var b strings.Builder
	for b.Len() < n {
		b.WriteString(words[rng.Intn(len(words))])
		b.WriteByte(' ')
	}
	return strings.TrimSpace(b.String())
}

func odsWith(t testing.TB, table string) []byte {
	return zipOf(t, "mimetype", "application/vnd.oasis.opendocument.spreadsheet", "content.xml",
		`<office:document-content `+nsOffice+` `+nsTable+`><office:body><office:spreadsheet><table:table table:name="Sheet1">`+
			table+`</table:table></office:spreadsheet></office:body></office:document-content>`)
}

// extractAllocs reads b as name with lim, returning the error and the
// bytes allocated meanwhile.
func extractAllocs(t *testing.T, name string, b []byte, lim Limits) (*Document, error, uint64) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	doc, err := Extract(context.Background(), p, lim, nil)
	runtime.ReadMemStats(&after)
	return doc, err, after.TotalAlloc - before.TotalAlloc
}

// TestAmplifyingFilesStopAtTheCap: in every zip/XML reader, a construct
// that copies a value (a shared string used by many cells, a repeated row
// or cell, a chapter or slide listed many times) is counted as it expands:
// the file fails with the cap's reason having allocated a small multiple
// of the cap, not the expansion (hundreds of MB to GB before).
func TestAmplifyingFilesStopAtTheCap(t *testing.T) {
	const capChars = 4 << 20
	shared := prose(1 << 20)
	var cells strings.Builder
	for range 400 { // 400 MB of text from one 1 MB string
		cells.WriteString(`<c t="s"><v>0</v></c>`)
	}
	chapter := `<html><body><p>` + prose(512<<10) + `</p></body></html>`
	var spine, slides strings.Builder
	for range 1000 {
		spine.WriteString(`<itemref idref="c1"/>`)
		slides.WriteString(`<p:sldId r:id="rId1"/>`)
	}
	slide := `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="p"><a:p><a:r><a:t>` + prose(512<<10) + `</a:t></a:r></a:p></p:sld>`
	line := `<table:table-cell><text:p>` + prose(1<<10) + `</text:p></table:table-cell>`
	for _, tc := range []struct {
		name, want string
		data       []byte
	}{
		{"shared.xlsx", "extracted text exceeds", zipOf(t,
			"xl/workbook.xml", `<workbook xmlns:r="r"><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`,
			"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Target="sharedStrings.xml"/></Relationships>`,
			"xl/sharedStrings.xml", `<sst `+nsSheet+`><si><t>`+shared+`</t></si></sst>`,
			"xl/worksheets/sheet1.xml", `<worksheet `+nsSheet+`><sheetData><row>`+cells.String()+`</row></sheetData></worksheet>`)},
		{"columns.ods", "extracted text exceeds", odsWith(t,
			`<table:table-row><table:table-cell table:number-columns-repeated="1000000000"><text:p>`+prose(1<<10)+`</text:p></table:table-cell></table:table-row>`)},
		{"rows.ods", "extracted text exceeds", odsWith(t,
			`<table:table-row table:number-rows-repeated="1000000000">`+line+`</table:table-row>`)},
		{"rows.fods", "extracted text exceeds", []byte(`<office:document ` + nsOffice + ` ` + nsTable + `><office:body><office:spreadsheet><table:table table:name="S">` +
			`<table:table-row table:number-rows-repeated="1000000000">` + line + `</table:table-row></table:table></office:spreadsheet></office:body></office:document>`)},
		// A spine or slide list naming one part a thousand times reads it
		// again each time; the text cap stops it before the inflate budget.
		{"spine.epub", "extracted text exceeds", zipOf(t,
			"META-INF/container.xml", `<container><rootfiles><rootfile full-path="b.opf"/></rootfiles></container>`,
			"b.opf", `<package><manifest><item id="c1" href="c.xhtml"/></manifest><spine>`+spine.String()+`</spine></package>`,
			"c.xhtml", chapter)},
		{"slides.pptx", "extracted text exceeds", zipOf(t,
			"ppt/presentation.xml", `<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst>`+slides.String()+`</p:sldIdLst></p:presentation>`,
			"ppt/_rels/presentation.xml.rels", `<Relationships><Relationship Id="rId1" Target="slides/slide1.xml"/></Relationships>`,
			"ppt/slides/slide1.xml", slide)},
	} {
		t.Run(tc.name, func(t *testing.T) {
			lim := DefaultLimits
			lim.MaxChars = capChars
			lim.MaxZipBytes = 16 << 20
			_, err, alloc := extractAllocs(t, tc.name, tc.data, lim)
			wantFileError(t, err, tc.want)
			if alloc > 160<<20 {
				t.Errorf("allocated %d MB for a %d MB cap", alloc>>20, capChars>>20)
			}
		})
	}
}

// TestODSRepeats: repeated rows and cells are expanded as stored; the
// trailing empty cells and rows spreadsheets pad with cost nothing.
func TestODSRepeats(t *testing.T) {
	cell := func(text, reps string) string {
		if reps != "" {
			reps = ` table:number-columns-repeated="` + reps + `"`
		}
		if text == "" {
			return `<table:table-cell` + reps + `/>`
		}
		return `<table:table-cell` + reps + `><text:p>` + text + `</text:p></table:table-cell>`
	}
	table := `<table:table-row table:number-rows-repeated="2">` + cell("zebra", "") + cell("yes", "3") + cell("", "16381") + `</table:table-row>` +
		`<table:table-row>` + cell("", "2") + cell("gap", "") + cell("", "16381") + `</table:table-row>` +
		`<table:table-row table:number-rows-repeated="1048570">` + cell("", "16384") + `</table:table-row>`
	for _, name := range []string{"r.ods", "r.fods"} {
		data := odsWith(t, table)
		if name == "r.fods" {
			data = []byte(`<office:document ` + nsOffice + ` ` + nsTable + `><office:body><office:spreadsheet><table:table table:name="Sheet1">` +
				table + `</table:table></office:spreadsheet></office:body></office:document>`)
		}
		doc, err, alloc := extractAllocs(t, name, data, DefaultLimits)
		if err != nil {
			t.Fatal(err)
		}
		want := "# Sheet1\n\nzebra\tyes\tyes\tyes\nzebra\tyes\tyes\tyes\n\t\tgap"
		if doc.Text != want {
			t.Errorf("%s: %q, want %q", name, doc.Text, want)
		}
		if alloc > 16<<20 {
			t.Errorf("%s: allocated %d MB for padding", name, alloc>>20)
		}
	}
}

// TestRTFStopsAtTheCap: an RTF whose text passes the cap fails as soon as
// its text does, having built no more than the cap (before: the whole
// text, then several copies of it, and only then the cap's error).
func TestRTFStopsAtTheCap(t *testing.T) {
	data := []byte(`{\rtf1\ansi ` + prose(24<<20) + `\par}`)
	lim := DefaultLimits
	lim.MaxChars = 4 << 20
	_, err, alloc := extractAllocs(t, "big.rtf", data, lim)
	wantFileError(t, err, "extracted text exceeds")
	if alloc > 3*uint64(len(data)) { // the file is read whole, and grown once to see its end
		t.Errorf("allocated %d MB for a %d MB file and a %d MB cap", alloc>>20, len(data)>>20, lim.MaxChars>>20)
	}
}

// TestXLSXHugeCell: a shared string far longer than maxTextRun, read in
// pieces and collapsed as it is read (white space runs across the pieces'
// ends), comes out as the whole string collapsed once.
func TestXLSXHugeCell(t *testing.T) {
	const size = 2 << 20
	shared := " " + strings.ReplaceAll(prose(size), "ebb ", "ebb \n\t ") + " "
	data := zipOf(t,
		"xl/workbook.xml", `<workbook xmlns:r="r"><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/><Relationship Id="rId2" Target="sharedStrings.xml"/></Relationships>`,
		"xl/sharedStrings.xml", `<sst `+nsSheet+`><si><t>`+shared+`</t></si></sst>`,
		"xl/worksheets/sheet1.xml", `<worksheet `+nsSheet+`><sheetData><row><c t="s"><v>0</v></c></row></sheetData></worksheet>`)
	doc, err, _ := extractAllocs(t, "cell.xlsx", data, DefaultLimits)
	if err != nil {
		t.Fatal(err)
	}
	if want := "# S\n\n" + collapseSpace(shared); doc.Text != want {
		t.Fatalf("text of %d bytes differs from the collapsed cell's %d", len(doc.Text), len(want))
	}
}
