package extract

import (
	"archive/zip"
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// zipOf builds a zip archive of the given parts (name, content), deflated.
func zipOf(t testing.TB, parts ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	for i := 0; i+1 < len(parts); i += 2 {
		w, err := zw.Create(parts[i])
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte(parts[i+1]))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

// The smallest valid skeletons of each zip-based format, with body as
// the text-bearing part's content.
func odtWith(t testing.TB, body string) []byte {
	return zipOf(t, "mimetype", "application/vnd.oasis.opendocument.text", "content.xml", body)
}

func pptxWith(t testing.TB, slide string) []byte {
	return zipOf(t,
		"ppt/presentation.xml", `<p:presentation xmlns:p="p" xmlns:r="r"><p:sldIdLst><p:sldId id="256" r:id="rId1"/></p:sldIdLst></p:presentation>`,
		"ppt/_rels/presentation.xml.rels", `<Relationships><Relationship Id="rId1" Target="slides/slide1.xml"/></Relationships>`,
		"ppt/slides/slide1.xml", slide)
}

func xlsxWith(t testing.TB, sheet string) []byte {
	return zipOf(t,
		"xl/workbook.xml", `<workbook xmlns:r="r"><sheets><sheet name="S" r:id="rId1"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="rId1" Target="worksheets/sheet1.xml"/></Relationships>`,
		"xl/worksheets/sheet1.xml", sheet)
}

func epubWith(t testing.TB, chapter string) []byte {
	return zipOf(t,
		"META-INF/container.xml", `<container><rootfiles><rootfile full-path="OEBPS/book.opf"/></rootfiles></container>`,
		"OEBPS/book.opf", `<package><manifest><item id="c1" href="c%201.xhtml"/></manifest><spine><itemref idref="c1"/></spine></package>`,
		"OEBPS/c 1.xhtml", chapter)
}

const nsT = `xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"`

func readBytes(t *testing.T, name string, b []byte) (*Document, error) {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	return Extract(context.Background(), p, DefaultLimits, nil)
}

// TestOfficeHostile: the zip-based readers and the RTF reader turn bombs,
// deep nesting and broken files into per-file errors with a reason, and
// read the small valid cases.
func TestOfficeHostile(t *testing.T) {
	deep := strings.Repeat("<text:span>", maxXMLDepth+1) + "x" + strings.Repeat("</text:span>", maxXMLDepth+1)
	spaces := strings.Repeat(" ", 4<<20) // inflates 4 MB from a few KB: over the ratio cap
	for _, tc := range []struct {
		name string
		data []byte
		err  string // wanted in the reason, or ""
		text string // wanted text when err is ""
	}{
		{"ok.odt", odtWith(t, `<office:document-content `+nsT+`><office:body><office:text><text:h text:outline-level="2">Tide <text:s text:c="3"/>table</text:h><text:p>One<text:tab/>two<text:line-break/>three</text:p><office:annotation><text:p>a comment</text:p></office:annotation></office:text></office:body></office:document-content>`), "", "## Tide table\n\nOne\ttwo\nthree"},
		{"deep.odt", odtWith(t, `<office:document-content `+nsT+`><text:p>`+deep+`</text:p></office:document-content>`), "malformed content.xml", ""},
		{"ratio.odt", odtWith(t, `<text:p `+nsT+`>`+spaces+`</text:p>`), "suspicious compression ratio", ""},
		{"no-content.odt", zipOf(t, "mimetype", "x"), "not an OpenDocument file: content.xml missing", ""},
		{"truncated.odt", odtWith(t, "<x/>")[:40], "not a valid zip archive", ""},
		{"ok.pptx", pptxWith(t, `<p:sld xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main" xmlns:p="p"><a:p><a:r><a:t>Channel 14</a:t></a:r><a:br/><a:r><a:t>at dusk</a:t></a:r></a:p></p:sld>`), "", "Channel 14\nat dusk"},
		{"ratio.pptx", pptxWith(t, `<p:sld>`+spaces+`</p:sld>`), "suspicious compression ratio", ""},
		{"ok.xlsx", xlsxWith(t, `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData><row><c t="inlineStr"><is><t>Port</t></is></c><c><v>4.1</v></c><c t="s"><v>99</v></c></row></sheetData></worksheet>`), "", "# S\n\nPort\t4.1"},
		{"deep.xlsx", xlsxWith(t, strings.Repeat("<a>", maxXMLDepth+1)), "malformed xl/worksheets/sheet1.xml", ""},
		{"ok.epub", epubWith(t, `<html><head><title>Ch 1</title></head><body><p>The pilot boards at the buoy.</p></body></html>`), "", "Ch 1\n\nThe pilot boards at the buoy."},
		{"no-root.epub", zipOf(t, "META-INF/container.xml", "<container/>"), "no rootfile", ""},
		{"ok.rtf", []byte(`{\rtf1\ansi\ansicpg1252{\fonttbl{\f0 Arial;}}{\*\generator x;}Caf\'e9 \u8364? ok\par {\deleted gone }kept\par}`), "", "Café € ok\n\nkept"},
		{"cp1251.rtf", []byte(`{\rtf1\ansi\ansicpg1251 \'cf\'f0\'e8\'e2\'e5\'f2\par}`), "", "Привет"},
		{"deep.rtf", []byte(`{\rtf1 ` + strings.Repeat("{", maxRTFDepth+1)), "malformed RTF", ""},
		{"bin.rtf", []byte(`{\rtf1 before{\*\blipuid x}{\pict\bin99999999 }after\par}`), "", "before"},
		{"not.rtf", []byte("plain words"), "not an RTF file", ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, err := readBytes(t, tc.name, tc.data)
			if tc.err != "" {
				wantFileError(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			checkText(t, doc.Text)
			if doc.Text != tc.text {
				t.Errorf("text %q, want %q", doc.Text, tc.text)
			}
		})
	}
}

// TestZipBudget: all parts of one file together inflate to at most
// Limits.MaxZipBytes, so a workbook of many modest sheets cannot exhaust
// memory.
func TestZipBudget(t *testing.T) {
	row := `<row><c t="inlineStr"><is><t>` + strings.Repeat("harbour ", 80<<10) + `</t></is></c></row>`
	b := zipOf(t,
		"xl/workbook.xml", `<workbook xmlns:r="r"><sheets><sheet name="A" r:id="r1"/><sheet name="B" r:id="r2"/></sheets></workbook>`,
		"xl/_rels/workbook.xml.rels", `<Relationships><Relationship Id="r1" Target="worksheets/a.xml"/><Relationship Id="r2" Target="worksheets/b.xml"/></Relationships>`,
		"xl/worksheets/a.xml", `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+row+`</sheetData></worksheet>`,
		"xl/worksheets/b.xml", `<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><sheetData>`+row+`</sheetData></worksheet>`)
	p := filepath.Join(t.TempDir(), "budget.xlsx")
	if err := os.WriteFile(p, b, 0o644); err != nil {
		t.Fatal(err)
	}
	lim := DefaultLimits
	lim.MaxZipBytes = 1 << 20
	_, err := Extract(context.Background(), p, lim, nil)
	wantFileError(t, err, "document part too large: xl/worksheets/b.xml")
}

// TestTextByName: files without an extension, and documentation files
// whose extension has no reader, are read as text.
func TestTextByName(t *testing.T) {
	for _, name := range []string{"README", "LICENSE", "copyright", "README.Debian", "Makefile", "notes.rst", "main.go", "config.yaml"} {
		doc, err := readBytes(t, name, []byte("Plain words about the lighthouse.\n"))
		if err != nil || doc.Text != "Plain words about the lighthouse.\n" {
			t.Errorf("%s: %v %+v", name, err, doc)
		}
	}
	for _, name := range []string{"photo.weird", "notes.bz2"} {
		_, err := readBytes(t, name, []byte("words"))
		wantFileError(t, err, "unsupported file type")
	}
	if !LooksLikeText([]byte("déjà vu\n")) || LooksLikeText([]byte("\x7fELF\x02\x01\x01\x00\x00\x00\x00\x00\x00\x00\x00\x00\x03\x00>\x00\x01\x00\x00\x00")) {
		t.Error("LooksLikeText")
	}
}

func gzipOf(t testing.TB, b []byte) []byte {
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestGzip: a gzip-compressed document is read by its inner name's
// reader; archives, bombs and corrupt streams are per-file errors that
// name the file on disk.
func TestGzip(t *testing.T) {
	rtf, err := os.ReadFile("../../testdata/golden/lighthouse.rtf")
	if err != nil {
		t.Fatal(err)
	}
	want, err := os.ReadFile("../../testdata/golden/lighthouse.rtf.expected.txt")
	if err != nil {
		t.Fatal(err)
	}
	for name, tc := range map[string]struct {
		data []byte
		text string
		err  string
	}{
		"README.gz":           {data: gzipOf(t, []byte("Read me\r\n")), text: "Read me\n"},
		"changelog.Debian.gz": {data: gzipOf(t, []byte("lighthouse (1.0) unstable\n")), text: "lighthouse (1.0) unstable\n"},
		"lighthouse.rtf.gz":   {data: gzipOf(t, rtf), text: string(want)},
		"bad.rtf.gz":          {data: gzipOf(t, []byte("not rtf")), err: "not an RTF file"},
		"src.tar.gz":          {data: gzipOf(t, []byte("x")), err: "compressed file of a type with no reader"},
		"truncated.txt.gz":    {data: gzipOf(t, []byte(strings.Repeat("words ", 1000)))[:40], err: "corrupt gzip file"},
		"plain.txt.gz":        {data: []byte("not gzip at all"), err: "not a gzip file"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), name)
			testutil.WriteFile(t, p, tc.data)
			doc, err := Extract(context.Background(), p, DefaultLimits, nil)
			if tc.err != "" {
				wantFileError(t, err, tc.err)
				if fe := (*FileError)(nil); errors.As(err, &fe) && fe.Path != p {
					t.Errorf("error names %q, not the file %q", fe.Path, p)
				}
				return
			}
			if err != nil || doc.Text != tc.text {
				t.Fatalf("got %v %+v, want %q", err, doc, tc.text)
			}
		})
	}
	// A bomb stops at the file size limit.
	p := filepath.Join(t.TempDir(), "bomb.txt.gz")
	testutil.WriteFile(t, p, gzipOf(t, make([]byte, 8<<20)))
	_, err = Extract(context.Background(), p, Limits{MaxFileBytes: 1 << 20, MaxChars: 1 << 20}, nil)
	wantFileError(t, err, "decompressed file too large: over the limit 1 MB")
}
