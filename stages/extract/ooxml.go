package extract

import (
	"cmp"
	"encoding/xml"
	"io"
	"math"
	"strconv"
	"strings"
	"time"
)

// DrawingML and SpreadsheetML namespaces, transitional and strict.
const (
	nsA        = "http://schemas.openxmlformats.org/drawingml/2006/main"
	nsAStrict  = "http://purl.oclc.org/ooxml/drawingml/main"
	nsS        = "http://schemas.openxmlformats.org/spreadsheetml/2006/main"
	nsSStrict  = "http://purl.oclc.org/ooxml/spreadsheetml/main"
	maxOOXRels = 1 << 20 // bytes of a relationships part or workbook read
)

func init() {
	readers[".pptx"] = readPPTX
	readers[".xlsx"] = readXLSX
}

// rels reads the relationships of part (its _rels/NAME.rels, such as
// "ppt/_rels/presentation.xml.rels"): id → target.
func (z *zipDoc) rels(part string) map[string]string {
	i := strings.LastIndexByte(part, '/')
	name := strings.TrimPrefix(part[:i+1]+"_rels/"+part[i+1:]+".rels", "/")
	out := map[string]string{}
	var doc struct {
		Rel []struct {
			ID     string `xml:"Id,attr"`
			Target string `xml:"Target,attr"`
			Mode   string `xml:"TargetMode,attr"`
		} `xml:"Relationship"`
	}
	if z.read(name, func(r io.Reader) error { return xmlDecoder(io.LimitReader(r, maxOOXRels)).Decode(&doc) }) != nil {
		return out
	}
	for _, r := range doc.Rel {
		if r.Mode != "External" {
			out[r.ID] = relTarget(part, r.Target)
		}
	}
	return out
}

// readPPTX reads the text of a PowerPoint presentation: each slide in
// presentation order, its paragraphs "\n\n" apart, a table's rows as lines
// with cells joined by "\t". Speaker notes, comments and slide masters are
// not read.
func readPPTX(p string, f File, lim Limits) (*Document, error) {
	z, err := openZipDoc(p, f, lim, "a PowerPoint file")
	if err != nil {
		return nil, err
	}
	const pres = "ppt/presentation.xml"
	var ids []string
	err = z.read(pres, func(r io.Reader) error {
		return xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "sldId" {
				ids = append(ids, relID(t))
			}
			return false
		})
	})
	if err != nil {
		return nil, err
	}
	rels := z.rels(pres)
	slides := make([]string, len(ids))
	for i, id := range ids {
		slides[i] = rels[id]
	}
	var out []string
	budget := newCharBudget(lim)
	err = z.eachPart(slides, func(_ string, r io.Reader) error {
		text, err := drawingText(r)
		if !budget.takeString(text, 1) {
			return budget.err()
		}
		if text != "" {
			out = append(out, text)
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	return finish(p, strings.Join(out, "\n\n"), lim)
}

func isA(n xml.Name) bool { return n.Space == nsA || n.Space == nsAStrict }

// drawingText collects the DrawingML paragraphs (a:p) of a slide.
func drawingText(r io.Reader) (string, error) {
	b := docxBody{runs: 1}
	inText := false
	err := xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			if !isA(t.Name) {
				return false
			}
			switch t.Name.Local {
			case "p":
				b.startParagraph(0)
			case "t":
				inText = true
			case "br":
				b.write("\n")
			case "tbl":
				b.startTable()
			case "tr":
				b.startRow()
			case "tc":
				b.startCell()
			}
		case xml.EndElement:
			if !isA(t.Name) {
				return false
			}
			switch t.Name.Local {
			case "p":
				b.endParagraph()
			case "t":
				inText = false
			case "tr":
				b.endRow()
			case "tbl":
				b.endTable()
			}
		case xml.CharData:
			if inText {
				b.write(string(t))
			}
		}
		return false
	})
	return b.out.String(), err
}

// readXLSX reads an Excel workbook: each sheet under a "# name" heading,
// one line per row with the cells' values (shared and inline strings,
// numbers as stored, formulas' cached results) joined by "\t". Empty rows
// and cells are left out. Of number formats only dates and times are
// applied, written as ISO 8601 ("2024-03-01", "06:42", "2024-03-01 06:42").
func readXLSX(p string, f File, lim Limits) (*Document, error) {
	z, err := openZipDoc(p, f, lim, "an Excel file")
	if err != nil {
		return nil, err
	}
	const book = "xl/workbook.xml"
	type sheet struct{ name, rid string }
	var sheets []sheet
	var dates xlsxDates
	err = z.read(book, func(r io.Reader) error {
		return xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "workbookPr" {
				dates.date1904 = attr(t, "date1904") == "1" || attr(t, "date1904") == "true"
			}
			if t, ok := tok.(xml.StartElement); ok && t.Name.Local == "sheet" {
				sheets = append(sheets, sheet{name: attr(t, "name"), rid: relID(t)})
			}
			return false
		})
	})
	if err != nil {
		return nil, err
	}
	rels := z.rels(book)
	var shared []string
	for _, target := range rels {
		if strings.HasSuffix(target, "styles.xml") && z.has(target) {
			if err := z.read(target, func(r io.Reader) (err error) {
				dates.styles, err = dateStyles(r)
				return err
			}); err != nil {
				return nil, err
			}
		}
		if strings.HasSuffix(target, "sharedStrings.xml") && z.has(target) {
			if err := z.read(target, func(r io.Reader) (err error) {
				shared, err = sharedStrings(r)
				return err
			}); err != nil {
				return nil, err
			}
		}
	}
	targets := make([]string, len(sheets))
	for i, s := range sheets {
		targets[i] = rels[s.rid]
	}
	i := 0
	budget := newCharBudget(lim)
	var out strings.Builder
	err = z.eachPart(targets, func(name string, r io.Reader) error {
		for targets[i] != name {
			i++
		}
		heading := "# " + strings.Join(strings.Fields(sheets[i].name), " ") + "\n\n"
		return sheetRows(budget.reader(r), shared, &dates, budget, &out, heading)
	})
	if err != nil {
		return nil, err
	}
	return finish(p, out.String(), lim)
}

func isS(n xml.Name) bool { return n.Space == nsS || n.Space == nsSStrict }

// sharedStrings reads the shared string table: each si's text runs (t),
// without phonetic guides (rPh), white space collapsed as it is copied so
// that a cell takes the entry as it is instead of a collapsed copy.
func sharedStrings(r io.Reader) ([]string, error) {
	var out []string
	var cur strings.Builder
	text := spaceWriter{b: &cur}
	inT := false
	err := xmlTokens(xmlDecoder(splitText(r)), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case !isS(t.Name):
			case t.Name.Local == "rPh":
				return true
			case t.Name.Local == "si":
				cur.Reset()
				text.pending = false
			case t.Name.Local == "t":
				inT = true
			}
		case xml.EndElement:
			switch {
			case !isS(t.Name):
			case t.Name.Local == "si":
				out = append(out, cur.String())
			case t.Name.Local == "t":
				inT = false
			}
		case xml.CharData:
			if inT {
				text.write(t)
			}
		}
		return false
	})
	return out, err
}

// sheetRows writes a worksheet's rows to out as lines of "\t"-joined cell
// values, heading before the first, the sheet after the previous one
// "\n\n" apart. Each cell's text is counted against budget before it is
// copied (one shared string may stand in every cell), and copied once: a
// 40 MB cell is held by the shared string table and out, not by row and
// sheet strings too.
func sheetRows(r io.Reader, shared []string, dates *xlsxDates, budget *charBudget, out *strings.Builder, heading string) error {
	var cells []string
	var val strings.Builder
	kind, style, inV := "", "", false
	err := xmlTokens(xmlDecoder(splitText(r)), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			if !isS(t.Name) {
				return false
			}
			switch t.Name.Local {
			case "row":
				cells = cells[:0]
			case "c":
				kind, style = attr(t, "t"), attr(t, "s")
				val.Reset()
			case "v", "t": // a value, or an inline string's text
				inV = true
			case "f", "rPh", "extLst":
				return true
			}
		case xml.EndElement:
			if !isS(t.Name) {
				return false
			}
			switch t.Name.Local {
			case "v", "t":
				inV = false
			case "c":
				v := val.String()
				switch kind {
				case "s":
					i, err := strconv.Atoi(strings.TrimSpace(v))
					v = ""
					if err == nil && i >= 0 && i < len(shared) {
						v = shared[i]
					}
				case "", "n":
					v = dates.format(style, v)
				}
				if !budget.takeString(v, 1) {
					return false // the reader stops the parse
				}
				cells = append(cells, collapseSpace(v))
			case "row":
				for len(cells) > 0 && cells[len(cells)-1] == "" {
					cells = cells[:len(cells)-1]
				}
				if len(cells) > 0 && budget.take(len(cells)) { // the tabs and the line end
					writeRow(out, &heading, cells)
				}
			}
		case xml.CharData:
			if inV {
				val.Write(t)
			}
		}
		return false
	})
	return cmp.Or(budget.err(), err)
}

// writeRow writes cells to out "\t"-joined, after heading if it is still
// to be written (then cleared), else after a line end. out grows once by
// the row's size, so a row holding one huge cell is allocated once, at its
// size, not doubled as it is written.
func writeRow(out *strings.Builder, heading *string, cells []string) {
	n := len(cells) // the tabs and the line end
	for _, c := range cells {
		n += len(c)
	}
	if *heading != "" {
		n += len(*heading) + 1
	}
	out.Grow(n)
	switch {
	case *heading == "":
		out.WriteByte('\n')
	case out.Len() > 0:
		out.WriteString("\n\n")
		fallthrough
	default:
		out.WriteString(*heading)
		*heading = ""
	}
	for j, c := range cells {
		if j > 0 {
			out.WriteByte('\t')
		}
		out.WriteString(c)
	}
}

// xlsxDates knows which cell styles show numbers as dates or times.
type xlsxDates struct {
	styles   []dateKind // by cell style index (cellXfs)
	date1904 bool
}

type dateKind uint8

const (
	notDate dateKind = iota
	dateOnly
	timeOnly
	dateTime
)

// builtinDates are the predefined number formats (ECMA-376 18.8.30) that
// show dates or times.
var builtinDates = map[int]dateKind{14: dateOnly, 15: dateOnly, 16: dateOnly, 17: dateOnly, 18: timeOnly,
	19: timeOnly, 20: timeOnly, 21: timeOnly, 22: dateTime, 45: timeOnly, 46: timeOnly, 47: timeOnly}

// formatKind classifies a custom format code: y or d outside quotes and
// brackets is a date, h or s a time.
func formatKind(code string) dateKind {
	var b strings.Builder
	quoted, bracket := false, false
	for _, r := range strings.ToLower(code) {
		switch {
		case r == '"':
			quoted = !quoted
		case quoted:
		case r == '[':
			bracket = true
		case r == ']':
			bracket = false
		case !bracket:
			b.WriteRune(r)
		}
	}
	c := b.String()
	date, tm := strings.ContainsAny(c, "yd"), strings.ContainsAny(c, "hs")
	switch {
	case date && tm:
		return dateTime
	case date:
		return dateOnly
	case tm:
		return timeOnly
	}
	return notDate
}

// dateStyles reads styles.xml: the date kind of each cell style.
func dateStyles(r io.Reader) ([]dateKind, error) {
	custom := map[int]dateKind{}
	var out []dateKind
	inXfs := false
	err := xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			switch {
			case !isS(t.Name):
			case t.Name.Local == "numFmt":
				if id, err := strconv.Atoi(attr(t, "numFmtId")); err == nil {
					custom[id] = formatKind(attr(t, "formatCode"))
				}
			case t.Name.Local == "cellXfs":
				inXfs = true
			case t.Name.Local == "xf" && inXfs:
				id, _ := strconv.Atoi(attr(t, "numFmtId"))
				k, ok := custom[id]
				if !ok {
					k = builtinDates[id]
				}
				out = append(out, k)
			}
		case xml.EndElement:
			if isS(t.Name) && t.Name.Local == "cellXfs" {
				inXfs = false
			}
		}
		return false
	})
	return out, err
}

// format writes the number v of a cell with style index style as a date
// or time if its style says so; otherwise v as stored.
func (d *xlsxDates) format(style, v string) string {
	i, err := strconv.Atoi(style)
	if err != nil || i < 0 || i >= len(d.styles) || d.styles[i] == notDate {
		return v
	}
	serial, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
	if err != nil || serial < 0 || serial > 2958465 { // past 9999-12-31
		return v
	}
	base := time.Date(1899, 12, 30, 0, 0, 0, 0, time.UTC)
	if d.date1904 {
		base = time.Date(1904, 1, 1, 0, 0, 0, 0, time.UTC)
	}
	t := base.Add(time.Duration(math.Round(serial*86400)) * time.Second)
	clock := "15:04"
	if t.Second() != 0 {
		clock = "15:04:05"
	}
	switch d.styles[i] {
	case dateOnly:
		return t.Format("2006-01-02")
	case timeOnly:
		return t.Format(clock)
	}
	return t.Format("2006-01-02 " + clock)
}
