package extract

import (
	"cmp"
	"encoding/xml"
	"errors"
	"io"
	"strconv"
	"strings"
)

// OpenDocument namespaces.
const (
	nsODFOffice = "urn:oasis:names:tc:opendocument:xmlns:office:1.0"
	nsODFText   = "urn:oasis:names:tc:opendocument:xmlns:text:1.0"
	nsODFTable  = "urn:oasis:names:tc:opendocument:xmlns:table:1.0"
)

func init() {
	for _, e := range []string{".odt", ".ods", ".odp", ".fodt", ".fods", ".fodp"} {
		readers[e] = readODF
	}
}

// readODF reads an OpenDocument text, spreadsheet or presentation, zipped
// (.odt, .ods, .odp: its content.xml) or flat (.fodt, .fods, .fodp).
//
// Paragraphs and headings (as markdown headings) are joined by "\n\n";
// a table, and each sheet under a "# name" heading, becomes one line per
// row with cells joined by "\t", as DOCX tables do. Slides follow each
// other, their notes included. Comments, tracked deletions, styles,
// headers and footers are not read.
func readODF(p string, f File, lim Limits) (*Document, error) {
	if strings.HasPrefix(strings.ToLower(p[strings.LastIndexByte(p, '.')+1:]), "f") {
		if _, err := checkSize(p, f, lim); err != nil {
			return nil, err
		}
		var r io.Reader = f
		if lim.MaxFileBytes > 0 { // bounded too: the file may grow after checkSize
			r = io.LimitReader(f, lim.MaxFileBytes+1)
		}
		budget := newCharBudget(lim)
		text, err := odfText(budget.reader(r), budget)
		if textCap := (*textCapError)(nil); errors.As(err, &textCap) {
			return nil, &FileError{Path: p, Reason: textCap.Error()}
		}
		if err != nil {
			return nil, &FileError{Path: p, Reason: "malformed OpenDocument XML", Err: err}
		}
		return finish(p, text, lim)
	}
	z, err := openZipDoc(p, f, lim, "an OpenDocument file")
	if err != nil {
		return nil, err
	}
	var text string
	budget := newCharBudget(lim)
	err = z.read("content.xml", func(r io.Reader) (err error) {
		text, err = odfText(budget.reader(r), budget)
		return err
	})
	if err != nil {
		return nil, err
	}
	return finish(p, text, lim)
}

// odfSkip are elements whose content is not document text.
var odfSkip = map[xml.Name]bool{
	{Space: nsODFOffice, Local: "annotation"}:          true,
	{Space: nsODFOffice, Local: "automatic-styles"}:    true,
	{Space: nsODFOffice, Local: "styles"}:              true,
	{Space: nsODFOffice, Local: "master-styles"}:       true,
	{Space: nsODFOffice, Local: "meta"}:                true,
	{Space: nsODFOffice, Local: "settings"}:            true,
	{Space: nsODFOffice, Local: "scripts"}:             true,
	{Space: nsODFOffice, Local: "font-face-decls"}:     true,
	{Space: nsODFText, Local: "tracked-changes"}:       true,
	{Space: nsODFText, Local: "note-citation"}:         true,
	{Space: nsODFText, Local: "sequence-decls"}:        true,
	{Space: nsODFText, Local: "variable-decls"}:        true,
	{Space: nsODFText, Local: "user-field-decls"}:      true,
	{Space: nsODFTable, Local: "table-column"}:         true,
	{Space: nsODFTable, Local: "named-expressions"}:    true,
	{Space: nsODFTable, Local: "database-ranges"}:      true,
	{Space: nsODFTable, Local: "calculation-settings"}: true,
}

// odfText streams an OpenDocument content (or flat) document; budget
// counts its text, repeated rows and cells included, as it is built.
func odfText(r io.Reader, budget *charBudget) (string, error) {
	b := docxBody{runs: 1, budget: budget} // ODF has no runs: all paragraph text counts
	sheets := false                        // inside office:spreadsheet: tables are sheets
	err := xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			if odfSkip[t.Name] {
				return true
			}
			switch t.Name {
			case xml.Name{Space: nsODFOffice, Local: "spreadsheet"}:
				sheets = true
			case xml.Name{Space: nsODFText, Local: "p"}:
				b.startParagraph(0)
			case xml.Name{Space: nsODFText, Local: "h"}:
				level, err := strconv.Atoi(attr(t, "outline-level"))
				if err != nil || level < 1 {
					level = 1
				}
				b.startParagraph(min(level, 6))
			case xml.Name{Space: nsODFText, Local: "s"}:
				n, err := strconv.Atoi(attr(t, "c"))
				if err != nil || n < 1 {
					n = 1
				}
				b.write(strings.Repeat(" ", min(n, 8)))
			case xml.Name{Space: nsODFText, Local: "tab"}:
				b.write("\t")
			case xml.Name{Space: nsODFText, Local: "line-break"}:
				b.write("\n")
			case xml.Name{Space: nsODFTable, Local: "table"}:
				if name := attr(t, "name"); sheets && name != "" && len(b.rows) == 0 {
					b.emit("# " + strings.Join(strings.Fields(name), " "))
				}
				b.startTable()
			case xml.Name{Space: nsODFTable, Local: "table-row"}:
				b.startRow()
				b.repeatRow(odfRepeat(t, "number-rows-repeated"))
			case xml.Name{Space: nsODFTable, Local: "table-cell"}, xml.Name{Space: nsODFTable, Local: "covered-table-cell"}:
				b.startCell()
				b.repeatCell(odfRepeat(t, "number-columns-repeated"))
			}
		case xml.EndElement:
			switch t.Name {
			case xml.Name{Space: nsODFText, Local: "p"}, xml.Name{Space: nsODFText, Local: "h"}:
				b.endParagraph()
			case xml.Name{Space: nsODFTable, Local: "table-row"}:
				b.endRow()
			case xml.Name{Space: nsODFTable, Local: "table"}:
				b.endTable()
			}
		case xml.CharData:
			b.write(string(t))
		}
		return false
	})
	if err := cmp.Or(budget.err(), err); err != nil {
		return "", err
	}
	return b.out.String(), nil
}

// odfRepeat is a table:number-*-repeated attribute: at least 1.
func odfRepeat(t xml.StartElement, name string) int {
	for _, a := range t.Attr {
		if a.Name.Space == nsODFTable && a.Name.Local == name {
			if n, err := strconv.Atoi(a.Value); err == nil && n > 1 {
				return n
			}
		}
	}
	return 1
}
