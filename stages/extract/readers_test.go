package extract

import (
	"archive/zip"
	"bytes"
	"compress/flate"
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

const hostileDir = "../../testdata/hostile"

// checkText fails t unless s meets the promises of package doc.
// extractBytes writes content to a file called name and extracts it; the
// text must pass checkText.
func extractBytes(t *testing.T, name, content string) *Document {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := Extract(context.Background(), p, DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	checkText(t, doc.Text)
	return doc
}

func checkText(t testing.TB, s string) {
	t.Helper()
	switch {
	case !utf8.ValidString(s):
		t.Fatalf("invalid UTF-8: %q", trunc(s))
	case !norm.NFC.IsNormalString(s):
		t.Fatalf("not NFC: %q", trunc(s))
	case strings.ContainsAny(s, "\x00\r"):
		t.Fatalf("NUL or CR left: %q", trunc(s))
	}
}

func trunc(s string) string {
	if len(s) > 200 {
		return s[:200] + "..."
	}
	return s
}

// wantFileError fails t unless err is a *FileError whose reason holds want.
func wantFileError(t *testing.T, err error, want string) {
	t.Helper()
	var fe *FileError
	if !errors.As(err, &fe) {
		t.Fatalf("got error %v (%T), want *FileError with %q", err, err, want)
	}
	if !strings.Contains(fe.Reason, want) {
		t.Fatalf("reason %q, want it to contain %q", fe.Reason, want)
	}
}

func TestHostileCorpus(t *testing.T) {
	tests := []struct {
		file    string
		err     string   // wanted substring of FileError.Reason, or ""
		want    []string // wanted substrings of the text
		notWant []string
		exact   *string
	}{
		{file: "random-bytes.txt", err: "binary file"},
		{file: "empty.txt", exact: new("")},
		{file: "utf16le-bom.txt", want: []string{"Plain English saved", "gives the encoding away.\nSecond line", "entièrement hors ligne"}},
		{file: "utf16le-nobom.txt", want: []string{"Plain English saved by an old Windows tool as UTF-16.", "endings as that tool wrote them.\n"}},
		{file: "utf16le-nobom-russian.txt", want: []string{"Поисковый сервер хранит индекс", "Новосибирск"}},
		{file: "utf16be-bom.txt", want: []string{"Every second byte", "Schöne Grüße aus München"}},
		{file: "utf32le-bom.txt", want: []string{"Die Suchmaschine läuft vollständig lokal."}},
		{file: "windows-1251-russian.txt", want: []string{"Поисковый сервер", "всё ещё встречаются", "Москва, Казань"}},
		{file: "latin1-french.txt", want: []string{"entièrement hors ligne", "Où qu'ils soient rangés", "à Besançon comme à Noël"}},
		{file: "latin1-german.md", want: []string{"läuft vollständig", "Größere Ordner", "Übrigens", "Grüße aus München"}},
		{file: "shift_jis-japanese.txt", want: []string{"この検索サーバーは", "東京の事務所", "シフトJIS"}},
		{file: "utf8-one-bad-byte.txt", want: []string{"h\uFFFDrs ligne", "entièrement", "à Besançon"}},
		{file: "file with spaces.txt", exact: new("A file whose name has spaces in it.\n")},
		{file: "résumé 東京.md", want: []string{"# Résumé\n\nA Markdown file with a non-ASCII name, written in Tōkyō."}},
		{file: "nul-and-cr.txt", exact: new("Old Mac line ends\nand a stray NUL byte.\n")},
		{file: "cp1251-meta.html", want: []string{"Кодировка\n\nПоисковый сервер", "Москва"}},
		{file: "latin1-semicolon.csv", exact: new("Stadt: München; Einwohner: 1512491; Bundesland: Bayern\nStadt: Köln; Einwohner: 1084831; Bundesland: Nordrhein-Westfalen")},
		{file: "docx-valid.docx", exact: new("First paragraph of a small document.\n\nSecond paragraph, after it.")},
		{file: "docx-renamed-part.docx", exact: new("First paragraph of a small document.\n\nSecond paragraph, after it.")},
		{file: "docx-no-document.docx", err: "not a Word document: word/document.xml missing"},
		{file: "docx-truncated.docx", err: "not a valid zip archive"},
		{file: "docx-really-text.docx", err: "not a valid zip archive"},
		{file: "docx-bomb-1gb.docx", err: "document part too large: 1.0 GB exceeds limit 64 MB"},
		{file: "docx-bomb-ratio.docx", err: "suspicious compression ratio"},
	}
	for _, tc := range tests {
		t.Run(tc.file, func(t *testing.T) {
			doc, err := Extract(context.Background(), filepath.Join(hostileDir, tc.file), DefaultLimits, testPDF)
			if tc.err != "" {
				wantFileError(t, err, tc.err)
				if doc != nil {
					t.Fatal("document returned with an error")
				}
				return
			}
			if err != nil {
				t.Fatalf("Extract: %v", err)
			}
			checkText(t, doc.Text)
			if tc.exact != nil && doc.Text != *tc.exact {
				t.Fatalf("text %q, want %q", doc.Text, *tc.exact)
			}
			for _, w := range tc.want {
				if !strings.Contains(doc.Text, w) {
					t.Errorf("text lacks %q:\n%s", w, doc.Text)
				}
			}
			if strings.Contains(doc.Text, "\uFEFF") {
				t.Error("byte order mark left in text")
			}
		})
	}
}

// TestEmptyFileEveryFormat: a file of no bytes is an empty document in
// every format (reported as no text), not a corrupt one.
func TestEmptyFileEveryFormat(t *testing.T) {
	exts := []string{".pdf"}
	for ext := range readers {
		exts = append(exts, ext)
	}
	for _, ext := range exts {
		t.Run(ext, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "empty"+ext)
			if err := os.WriteFile(p, nil, 0o644); err != nil {
				t.Fatal(err)
			}
			doc, err := Extract(context.Background(), p, DefaultLimits, testPDF)
			if err != nil || doc.Text != "" || len(doc.Skipped) != 0 {
				t.Fatalf("got %+v, %v; want an empty document", doc, err)
			}
		})
	}
}

// TestNameWithNewline uses a name git cannot hold comfortably.
func TestNameWithNewline(t *testing.T) {
	p := filepath.Join(t.TempDir(), "two\nlines.txt")
	if err := os.WriteFile(p, []byte("line one\r\nline two\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := Extract(context.Background(), p, DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != "line one\nline two\n" {
		t.Fatalf("got %q", doc.Text)
	}
}

func TestLongLine(t *testing.T) {
	line := strings.Repeat("ab cd é ", 1<<20/8)
	p := filepath.Join(t.TempDir(), "long.md")
	if err := os.WriteFile(p, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	doc, err := Extract(context.Background(), p, DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Text != line {
		t.Fatalf("1 MB line changed: %d bytes back, %d in", len(doc.Text), len(line))
	}
}

// TestLargeText reads a 50 MB file within the default limits, and the
// same file is refused by stat under a smaller limit.
func TestLargeText(t *testing.T) {
	p := filepath.Join(t.TempDir(), "big.txt")
	para := []byte("Large files are read whole, normalised once and then chunked.\n\n")
	f, err := os.Create(p)
	if err != nil {
		t.Fatal(err)
	}
	block := bytes.Repeat(para, (1<<20)/len(para)+1)[:1<<20]
	for range 50 {
		if _, err := f.Write(block); err != nil {
			t.Fatal(err)
		}
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	doc, err := Extract(context.Background(), p, DefaultLimits, testPDF)
	if err != nil {
		t.Fatal(err)
	}
	if len(doc.Text) != 50<<20 {
		t.Fatalf("got %d bytes of text, want %d", len(doc.Text), 50<<20)
	}
	_, err = Extract(context.Background(), p, Limits{MaxFileBytes: 40 << 20, MaxChars: DefaultLimits.MaxChars}, testPDF)
	wantFileError(t, err, "file too large: 50 MB exceeds limit 40 MB")
	_, err = Extract(context.Background(), p, Limits{MaxFileBytes: 64 << 20, MaxChars: 1000}, testPDF)
	wantFileError(t, err, "extracted text exceeds 1000 characters")
}

func TestLimitsEveryReader(t *testing.T) {
	dir := t.TempDir()
	files := map[string]string{
		"a.txt":  strings.Repeat("word ", 100),
		"a.html": "<p>" + strings.Repeat("word ", 100) + "</p>",
		"a.csv":  strings.Repeat("word,word\n", 50),
		"a.rst":  strings.Repeat("word ", 100),
		"a.rtf":  `{\rtf1 ` + strings.Repeat("word ", 100) + `}`,
		"a.fodt": `<office:document ` + nsT + `><office:body><text:p>` + strings.Repeat("word ", 100) + `</text:p></office:body></office:document>`,
	}
	for name, body := range files {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := Extract(context.Background(), p, Limits{MaxFileBytes: 100}, testPDF)
		wantFileError(t, err, "file too large: ")
		_, err = Extract(context.Background(), p, Limits{MaxFileBytes: 1 << 20, MaxChars: 10}, testPDF)
		wantFileError(t, err, "extracted text exceeds 10 characters")
		// 0 means no size limit: the whole file is read, as within one.
		want, err := Extract(context.Background(), p, DefaultLimits, testPDF)
		if err != nil {
			t.Fatal(err)
		}
		doc, err := Extract(context.Background(), p, Limits{MaxFileBytes: 0, MaxChars: DefaultLimits.MaxChars}, testPDF)
		if err != nil || doc.Text != want.Text {
			t.Errorf("%s without a size limit: %v, %q", name, err, docText(doc))
		}
	}
	_, err := Extract(context.Background(), filepath.Join(hostileDir, "docx-valid.docx"), Limits{MaxFileBytes: 100}, testPDF)
	wantFileError(t, err, "file too large: 840 bytes exceeds limit 100 bytes")
	_, err = Extract(context.Background(), filepath.Join(hostileDir, "docx-valid.docx"), Limits{MaxFileBytes: 1 << 20, MaxChars: 10}, testPDF)
	wantFileError(t, err, "extracted text exceeds 10 characters")
	_, err = Extract(context.Background(), dir, DefaultLimits, testPDF) // no extension: read as text
	wantFileError(t, err, "not a regular file")
	os.WriteFile(filepath.Join(dir, "a.weird"), []byte("x"), 0o644)
	_, err = Extract(context.Background(), filepath.Join(dir, "a.weird"), DefaultLimits, testPDF)
	wantFileError(t, err, "unsupported file type")
	_, err = Extract(context.Background(), filepath.Join(dir, "missing.txt"), DefaultLimits, testPDF)
	wantFileError(t, err, "cannot open file")
}

// docText is doc's text, "" for no document.
func docText(doc *Document) string {
	if doc == nil {
		return ""
	}
	return doc.Text
}

// writeDocx builds a DOCX whose document part is body, in the test's
// temporary directory.
func writeDocx(t testing.TB, name, body string) string {
	t.Helper()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.Create("word/document.xml")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := w.Write([]byte(body)); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestDocxLyingHeader: the zip header declares 1 KB, the stream inflates
// to 10 MB. The reader must stop long before the end.
func TestDocxLyingHeader(t *testing.T) {
	var comp bytes.Buffer
	fw, _ := flate.NewWriter(&comp, flate.BestCompression)
	fw.Write([]byte(`<w:document xmlns:w="` + nsW + `"><w:body><w:p><w:r><w:t>`))
	spaces := bytes.Repeat([]byte(" "), 1<<20)
	for range 10 {
		fw.Write(spaces)
	}
	fw.Close()
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	w, err := zw.CreateRaw(&zip.FileHeader{Name: "word/document.xml", Method: zip.Deflate,
		CompressedSize64: uint64(comp.Len()), UncompressedSize64: 1024})
	if err != nil {
		t.Fatal(err)
	}
	w.Write(comp.Bytes())
	zw.Close()
	p := filepath.Join(t.TempDir(), "lying.docx")
	if err := os.WriteFile(p, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	_, err = Extract(context.Background(), p, DefaultLimits, testPDF)
	wantFileError(t, err, "corrupt document part")
}

func TestDocxStructure(t *testing.T) {
	const head = `<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="` + nsW +
		`" xmlns:mc="` + nsMC + `"><w:body>`
	const tail = `</w:body></w:document>`
	tests := []struct {
		name, body, want, err string
	}{
		{name: "tab stops in pPr are not text",
			body: `<w:p><w:pPr><w:tabs><w:tab w:val="left" w:pos="720"/></w:tabs></w:pPr><w:r><w:t>a</w:t><w:tab/><w:t>b</w:t><w:br/><w:t>c</w:t><w:cr/><w:t>d</w:t></w:r></w:p>`,
			want: "a\tb\nc\nd"},
		{name: "tracked deletion and moves are skipped",
			body: `<w:p><w:r><w:t xml:space="preserve">kept </w:t></w:r><w:del w:id="1"><w:r><w:delText>gone</w:delText></w:r></w:del><w:ins w:id="2"><w:r><w:t>added</w:t></w:r></w:ins></w:p><w:p><w:moveFrom><w:r><w:t>old place</w:t></w:r></w:moveFrom></w:p>`,
			want: "kept added"},
		{name: "field code hidden, result kept",
			body: `<w:p><w:r><w:t xml:space="preserve">Page </w:t></w:r><w:r><w:fldChar w:fldCharType="begin"/></w:r><w:r><w:instrText> PAGE \* MERGEFORMAT </w:instrText></w:r><w:r><w:fldChar w:fldCharType="separate"/></w:r><w:r><w:t>7</w:t></w:r><w:r><w:fldChar w:fldCharType="end"/></w:r></w:p>`,
			want: "Page 7"},
		{name: "empty paragraphs dropped",
			body: `<w:p/><w:p><w:r><w:t>one</w:t></w:r></w:p><w:p><w:r><w:t>   </w:t></w:r></w:p><w:p><w:r><w:t>two</w:t></w:r></w:p>`,
			want: "one\n\ntwo"},
		{name: "table rows are lines, cells tab separated",
			body: `<w:p><w:r><w:t>before</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:r><w:t>Name</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Role</w:t></w:r></w:p></w:tc></w:tr><w:tr><w:tc><w:p><w:r><w:t>Ada</w:t></w:r></w:p><w:p><w:r><w:t>Lovelace</w:t></w:r></w:p></w:tc><w:tc><w:p/></w:tc><w:tc><w:p><w:r><w:t>analyst</w:t></w:r></w:p></w:tc></w:tr></w:tbl><w:p><w:r><w:t>after</w:t></w:r></w:p>`,
			want: "before\n\nName\tRole\nAda Lovelace\t\tanalyst\n\nafter"},
		{name: "text box fallback not doubled",
			body: `<w:p><w:r><w:t>outer</w:t></w:r><w:r><mc:AlternateContent><mc:Choice Requires="wps"><w:drawing><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></w:drawing></mc:Choice><mc:Fallback><w:pict><w:txbxContent><w:p><w:r><w:t>boxed</w:t></w:r></w:p></w:txbxContent></w:pict></mc:Fallback></mc:AlternateContent></w:r></w:p>`,
			want: "boxed\n\nouter"},
		{name: "entities and NFC",
			body: `<w:p><w:r><w:t>caf` + "e\u0301" + ` &amp; &lt;tea&gt;</w:t></w:r></w:p>`,
			want: "caf\u00e9 & <tea>"},
		{name: "heading styles become markdown headings",
			body: `<w:p><w:pPr><w:pStyle w:val="Title"/></w:pPr><w:r><w:t>Manual</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Error</w:t></w:r><w:r><w:br/><w:t xml:space="preserve"> codes</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Normal"/><w:outlineLvl w:val="2"/></w:pPr><w:r><w:t>Outlined</w:t></w:r></w:p><w:p><w:pPr><w:pStyle w:val="Heading10"/></w:pPr><w:r><w:t>body</w:t></w:r></w:p><w:tbl><w:tr><w:tc><w:p><w:pPr><w:pStyle w:val="Heading1"/></w:pPr><w:r><w:t>cell</w:t></w:r></w:p></w:tc></w:tr></w:tbl>`,
			want: "# Manual\n\n## Error codes\n\n### Outlined\n\nbody\n\ncell"},
		{name: "unclosed XML", body: `<w:p><w:r><w:t>cut`, err: "malformed document XML"},
		{name: "nested within the depth limit",
			body: strings.Repeat(`<w:sdt>`, 250) + `<w:p><w:r><w:t>deep</w:t></w:r></w:p>` + strings.Repeat(`</w:sdt>`, 250),
			want: "deep"},
		// Fails at once, reading no further: the rest of the part is never closed.
		{name: "nested past the depth limit", body: strings.Repeat(`<a>`, 300), err: "document XML has elements nested deeper than 256 levels"},
		{name: "nested past the depth limit in a skipped part",
			body: `<mc:Fallback>` + strings.Repeat(`<w:del>`, 300), err: "nested deeper than 256 levels"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := head + tc.body + tail
			if tc.err != "" {
				body = head + tc.body
			}
			doc, err := Extract(context.Background(), writeDocx(t, "d.docx", body), DefaultLimits, testPDF)
			if tc.err != "" {
				wantFileError(t, err, tc.err)
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Text != tc.want {
				t.Fatalf("got  %q\nwant %q", doc.Text, tc.want)
			}
		})
	}
}

func TestHTML(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"title first, hidden parts dropped",
			`<!doctype html><html><head><title> My  page </title><style>p{color:red}</style><script>var a = "<p>x</p>";</script></head>` +
				`<body><noscript>enable js</noscript><template><p>tpl</p></template><h1>Head&amp;line</h1><p>Some   <b>bold</b>
				text.</p><div>Block<br>next line</div><svg><text>drawn</text></svg></body></html>`,
			"My page\n\nHead&line\n\nSome bold text.\n\nBlock\nnext line"},
		{"lists and tables",
			`<ul><li>one</li><li>two</li></ul><table><tr><th>k</th><th>v</th></tr><tr><td>a</td><td>1</td></tr></table>`,
			"one\ntwo\n\nk\tv\na\t1"},
		{"pre keeps white space",
			"<p>x  y</p><pre>a  b\n  c</pre><p>z</p>",
			"x y\n\na  b\n  c\n\nz"},
		{"crlf, nbsp and entities",
			"<p>caf&eacute;&nbsp;&nbsp;au\r\nlait</p>\r\n",
			"café au lait"},
		{"unclosed script eats the rest", "<p>seen</p><script>hidden", "seen"},
		{"plain text is text", "just text\nhere", "just text here"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := extractBytes(t, "p.html", tc.in)
			if doc.Text != tc.want {
				t.Fatalf("got  %q\nwant %q", doc.Text, tc.want)
			}
		})
	}
}

func TestCSV(t *testing.T) {
	tests := []struct{ name, in, want string }{
		{"header", "name,age,city\nAda,36,London\nAlan,,Wilmslow\n",
			"name: Ada; age: 36; city: London\nname: Alan; city: Wilmslow"},
		{"numeric first row is data", "1,2,3\n4,5,6\n", "1; 2; 3\n4; 5; 6"},
		{"empty header field means no header", "name,,city\nAda,x,London\n", "name; city\nAda; x; London"},
		{"ragged, quoted, lazy quotes", "a,b\n\"x, y\",\"multi\r\nline\",extra\nbad\"quote,z\n",
			"a: x, y; b: multi line; extra\na: bad\"quote; b: z"},
		{"tab separated", "k\tv\nalpha\tbeta\n", "k: alpha; v: beta"},
		{"header only", "just,a,header\n", "just; a; header"},
		{"empty", "", ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			doc := extractBytes(t, "t.csv", tc.in)
			if doc.Text != tc.want {
				t.Fatalf("got  %q\nwant %q", doc.Text, tc.want)
			}
		})
	}
}

// TestCSVCaps: a row of more than maxCSVCells cells, or a cell of more
// than maxCSVCellBytes, fails the file with the reason; a first row too
// big to hold is written out as data.
func TestCSVCaps(t *testing.T) {
	wide := strings.Repeat("c,", maxCSVCells) + "c\nx\n"
	for name, tc := range map[string]struct{ in, err string }{
		"wide header": {wide, "CSV row 1 has more than 16384 cells"},
		"wide row":    {"h\nMARK" + strings.Repeat(",", maxCSVCells+1), "CSV row 2 has more than 16384 cells"},
		"long cell":   {"h\n" + strings.Repeat("x", maxCSVCellBytes+1), "CSV row 2 has a cell over 1 MB"},
		"long quoted": {"h\n\"" + strings.Repeat("x", maxCSVCellBytes+1) + "\"", "CSV row 2 has a cell over 1 MB"},
	} {
		t.Run(name, func(t *testing.T) {
			p := filepath.Join(t.TempDir(), "t.csv")
			os.WriteFile(p, []byte(tc.in), 0o644)
			_, err := Extract(context.Background(), p, DefaultLimits, testPDF)
			wantFileError(t, err, tc.err)
		})
	}
	// A first row too big to be a header: written out as it came.
	big := strings.Repeat("word ", 4000)
	var rec []string
	for range (maxCSVCellBytes / len(big)) + 2 {
		rec = append(rec, big)
	}
	doc := extractBytes(t, "big.csv", strings.Join(rec, ",")+"\nname,x\n")
	if !strings.HasPrefix(doc.Text, strings.TrimSpace(big)+"; ") || !strings.HasSuffix(doc.Text, "\nname; x") {
		t.Errorf("big first row: %.80q ... %q", doc.Text, doc.Text[max(0, len(doc.Text)-40):])
	}
	// Not UTF-8: decoded whole, parsed alike.
	doc = extractBytes(t, "latin.csv", "Stadt;Land\nM\xfcnchen;Bayern\n")
	if doc.Text != "Stadt: München; Land: Bayern" {
		t.Errorf("latin-1: %q", doc.Text)
	}
}

func TestDecodeBytes(t *testing.T) {
	tests := []struct {
		name string
		in   []byte
		want string
		err  error
	}{
		{"utf8 bom", []byte("\xef\xbb\xbfhé"), "hé", nil},
		{"utf16be no bom", []byte("\x00H\x00e\x00l\x00l\x00o\x00 \x00w\x00o\x00r\x00l\x00d"), "Hello world", nil},
		{"utf16le odd tail", []byte("\xff\xfeH\x00i\x00!"), "Hi\uFFFD", nil},
		{"utf32be bom", []byte("\x00\x00\xfe\xff\x00\x00\x00A\x00\x01\xf6\x00"), "A\U0001F600", nil},
		{"binary NULs", bytes.Repeat([]byte{0, 0, 0, 1}, 100), "", errBinary},
		{"windows-1252 fallback for short bytes", []byte("caf\xe9"), "café", nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, err := decodeBytes(tc.in)
			if !errors.Is(err, tc.err) || (err == nil && got != tc.want) {
				t.Fatalf("got %q, %v; want %q, %v", got, err, tc.want, tc.err)
			}
		})
	}
}
