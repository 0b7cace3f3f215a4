package extract

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
)

// fuzzReader writes data to a file with extension ext and calls read
// directly, so a panic in our own code fails the fuzz run instead of
// being recovered by Extract.
func fuzzReader(f *testing.F, ext string, read reader, seeds ...string) {
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	matches, err := filepath.Glob(filepath.Join(hostileDir, "*"+ext))
	if err != nil {
		f.Fatal(err)
	}
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil && len(b) <= 16<<10 {
			f.Add(b)
		}
	}
	// Low zip caps: a mutated bomb inflating to 64 MB parses for seconds
	// and stalls the fuzzer; the caps themselves are tested in
	// TestHostileCorpus and TestZipBudget.
	lim := Limits{MaxFileBytes: 1 << 20, MaxChars: 1 << 20, MaxPartBytes: 1 << 20, MaxZipBytes: 2 << 20}
	f.Fuzz(func(t *testing.T, data []byte) {
		p := filepath.Join(t.TempDir(), "f"+ext)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			t.Fatal(err)
		}
		file, err := os.Open(p)
		if err != nil {
			t.Fatal(err)
		}
		defer file.Close()
		doc, err := read(p, file, lim)
		if err != nil {
			var fe *FileError
			if !errors.As(err, &fe) || fe.Reason == "" {
				t.Fatalf("error without a reason: %v (%T)", err, err)
			}
			return
		}
		checkText(t, doc.Text)
	})
}

func FuzzReadText(f *testing.F) {
	fuzzReader(f, ".txt", readText,
		"", "hello\r\nworld\r", "\xff\xfeh\x00i\x00", "\xfe\xff\x00h", "\x00\x00\xfe\xff\x00\x00\x00a",
		"a\u0301\u0308", "caf\xe9", "\xef\xbb\xbf\xef\xbb\xbf", "\u2028\u2029", "a\x00b")
}

func FuzzReadDOCX(f *testing.F) {
	fuzzReader(f, ".docx", readDOCX, "PK\x03\x04", "")
}

func FuzzReadHTML(f *testing.F) {
	fuzzReader(f, ".html", readHTML,
		"<title>t</title><p>a<br>b</p><pre> x\r\n y</pre>",
		`<meta charset="shift_jis"><p>`+"\x82\xa0",
		"<table><tr><td>a<td>b</table><script>x", "<svg><title>s</title></svg>z",
		"&nbsp;&#0;&#x10FFFF;&#xD800;", "<textarea>  a  </textarea><plaintext><p>")
}

func FuzzReadCSV(f *testing.F) {
	fuzzReader(f, ".csv", readCSV,
		"a,b\n1,2\n", "\"x\ny\",z\r\n", "a;b;c\n\"\"\"\n", "k\tv\nx\ty", "\"unterminated")
}

// goldenSeeds reads the golden documents with extension ext as seeds.
func goldenSeeds(f *testing.F, ext string) []string {
	matches, err := filepath.Glob(filepath.Join("../../testdata/golden", "*"+ext))
	if err != nil {
		f.Fatal(err)
	}
	var out []string
	for _, m := range matches {
		if b, err := os.ReadFile(m); err == nil {
			out = append(out, string(b))
		}
	}
	if len(out) == 0 {
		f.Fatalf("no golden %s files", ext)
	}
	return out
}

func FuzzReadODF(f *testing.F) {
	fuzzReader(f, ".odt", readODF, append(goldenSeeds(f, ".odt"), string(odtWith(f, "<x/>")), "PK\x03\x04")...)
}

func FuzzReadFlatODF(f *testing.F) {
	fuzzReader(f, ".fodt", readODF, append(goldenSeeds(f, ".fodt"), goldenSeeds(f, ".fodp")...)...)
}

func FuzzReadPPTX(f *testing.F) {
	fuzzReader(f, ".pptx", readPPTX, append(goldenSeeds(f, ".pptx"), string(pptxWith(f, "<a/>")))...)
}

func FuzzReadXLSX(f *testing.F) {
	fuzzReader(f, ".xlsx", readXLSX, append(goldenSeeds(f, ".xlsx"), string(xlsxWith(f, "<c s=\"0\"><v>1e308</v></c>")))...)
}

func FuzzReadEPUB(f *testing.F) {
	fuzzReader(f, ".epub", readEPUB, append(goldenSeeds(f, ".epub"), string(epubWith(f, "<p>x")))...)
}

func FuzzReadRTF(f *testing.F) {
	fuzzReader(f, ".rtf", readRTF, append(goldenSeeds(f, ".rtf"),
		`{\rtf1\u-3999?\'`, `{\rtf1\bin`, `{\rtf1\uc9\u65 abc}`, `{\rtf1\ansicpg932\'82\'a0}`, `{\rtf1{\*}}}}}\par\row\cell`)...)
}

func FuzzReadGzip(f *testing.F) {
	fuzzReader(f, ".txt.gz", readGzip, "\x1f\x8b", string(gzipOf(f, []byte("hello\r\n"))))
}
