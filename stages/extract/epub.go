package extract

import (
	"bytes"
	"encoding/xml"
	"io"
	"net/url"
	"strings"
)

func init() { readers[".epub"] = readEPUB }

// readEPUB reads an EPUB book: the XHTML documents of its spine, in
// reading order, each as the HTML reader reads a page (its <title> first),
// "\n\n" apart. Images, styles and the navigation document's links outside
// the spine are not read.
func readEPUB(p string, f File, lim Limits) (*Document, error) {
	z, err := openZipDoc(p, f, lim, "an EPUB book")
	if err != nil {
		return nil, err
	}
	var opf string
	err = z.read("META-INF/container.xml", func(r io.Reader) error {
		return xmlTokens(xmlDecoder(io.LimitReader(r, maxOOXRels)), func(tok xml.Token) bool {
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "rootfile" && opf == "" {
				opf = strings.TrimPrefix(attr(t, "full-path"), "/")
			}
			return false
		})
	})
	if err != nil {
		return nil, err
	}
	if opf == "" {
		return nil, &FileError{Path: p, Reason: "not an EPUB book: no rootfile in META-INF/container.xml"}
	}
	items := map[string]string{} // manifest id → part name
	var spine []string
	err = z.read(opf, func(r io.Reader) error {
		return xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
			t, ok := tok.(xml.StartElement)
			if !ok {
				return false
			}
			switch t.Name.Local {
			case "item":
				href := attr(t, "href")
				if u, err := url.PathUnescape(href); err == nil {
					href = u
				}
				items[attr(t, "id")] = relTarget(opf, href)
			case "itemref":
				spine = append(spine, attr(t, "idref"))
			}
			return false
		})
	})
	if err != nil {
		return nil, err
	}
	parts := make([]string, len(spine))
	for i, id := range spine {
		parts[i] = items[id]
	}
	var out []string
	budget := newCharBudget(lim)
	err = z.eachPart(parts, func(part string, r io.Reader) error {
		var buf bytes.Buffer
		if _, err := buf.ReadFrom(r); err != nil {
			return err
		}
		s, err := decodeHTML(buf.Bytes())
		if err != nil {
			return &FileError{Path: p, Reason: "binary content in " + part}
		}
		if text := htmlText(strings.NewReader(s)); text != "" {
			if !budget.takeString(text, 1) {
				return budget.err()
			}
			out = append(out, text)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return finish(p, strings.Join(out, "\n\n"), lim)
}
