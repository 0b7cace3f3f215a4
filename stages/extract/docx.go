package extract

import (
	"archive/zip"
	"compress/flate"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"path"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// Zip bomb guards for the main document part of a DOCX.
const (
	maxDocxRatio = 200     // uncompressed/compressed; real documents stay far below
	ratioFloor   = 1 << 20 // parts smaller than this are never refused for ratio
)

// WordprocessingML namespaces: transitional (what Word and LibreOffice
// write) and strict ISO 29500.
const (
	nsW       = "http://schemas.openxmlformats.org/wordprocessingml/2006/main"
	nsWStrict = "http://purl.oclc.org/ooxml/wordprocessingml/main"
	nsMC      = "http://schemas.openxmlformats.org/markup-compatibility/2006"
)

// readDOCX reads the body text of a Word document.
//
// Paragraphs are joined by "\n\n" and empty ones dropped; w:tab is "\t",
// w:br and w:cr are "\n". Deleted text (w:del, w:delText, w:moveFrom),
// field instructions (w:instrText) and the mc:Fallback copies of text
// boxes are skipped; a field's displayed result is kept.
//
// A table becomes one paragraph with one line per row and the cells of a
// row joined by "\t"; inside a cell, paragraphs, breaks and tabs become
// single spaces so that each row stays on one line. Headers, footers,
// footnotes and comments live in other parts and are not read.
func readDOCX(p string, f File, lim Limits) (*Document, error) {
	size, err := checkSize(p, f, lim)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, &FileError{Path: p, Reason: "not a Word document: not a valid zip archive", Err: err}
	}

	name := mainPartName(zr)
	var part *zip.File
	for _, f := range zr.File {
		if f.Name == name {
			part = f
			break
		}
	}
	if part == nil {
		return nil, &FileError{Path: p, Reason: "not a Word document: " + name + " missing"}
	}
	maxPart := lim.partBytes()
	if part.UncompressedSize64 > uint64(maxPart) {
		return nil, &FileError{Path: p, Reason: fmt.Sprintf("document part too large: %s exceeds limit %s",
			bytesize.Format(int64(min(part.UncompressedSize64, 1<<62))), bytesize.Format(maxPart))}
	}
	if part.UncompressedSize64 > ratioFloor && part.UncompressedSize64/max(part.CompressedSize64, 1) > maxDocxRatio {
		return nil, &FileError{Path: p, Reason: fmt.Sprintf("suspicious compression ratio %d:1 (zip bomb?)",
			part.UncompressedSize64/max(part.CompressedSize64, 1))}
	}
	rc, err := part.Open()
	if err != nil {
		return nil, &FileError{Path: p, Reason: "cannot open document part", Err: err}
	}
	defer rc.Close()
	// The declared size may lie; count what is really inflated.
	lr := &io.LimitedReader{R: rc, N: maxPart + 1}
	text, err := docxText(lr)
	if lr.N <= 0 {
		return nil, &FileError{Path: p, Reason: fmt.Sprintf("document part too large: exceeds limit %s", bytesize.Format(maxPart))}
	}
	var corrupt flate.CorruptInputError
	switch {
	case errors.Is(err, zip.ErrFormat), errors.Is(err, zip.ErrChecksum),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &corrupt):
		return nil, &FileError{Path: p, Reason: "corrupt document part", Err: err}
	case errors.Is(err, errTooDeep):
		return nil, &FileError{Path: p, Reason: "document XML has " + errTooDeep.Error()}
	case err != nil:
		return nil, &FileError{Path: p, Reason: "malformed document XML", Err: err}
	}
	return finish(p, text, lim)
}

// mainPartName finds the main document part through _rels/.rels, as Word
// does; generators may name it other than word/document.xml.
func mainPartName(zr *zip.Reader) string {
	const fallback = "word/document.xml"
	for _, f := range zr.File {
		if f.Name != "_rels/.rels" || f.UncompressedSize64 > 1<<20 {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			return fallback
		}
		defer rc.Close()
		var rels struct {
			Rel []struct {
				Type   string `xml:"Type,attr"`
				Target string `xml:"Target,attr"`
			} `xml:"Relationship"`
		}
		if xml.NewDecoder(io.LimitReader(rc, 1<<20)).Decode(&rels) != nil {
			return fallback
		}
		for _, r := range rels.Rel {
			if strings.HasSuffix(r.Type, "/officeDocument") && r.Target != "" {
				return strings.TrimPrefix(path.Clean("/"+r.Target), "/")
			}
		}
	}
	return fallback
}

// docxBody collects text while document.xml streams past.
type docxBody struct {
	out    strings.Builder   // finished paragraphs, "\n\n" apart
	paras  []strings.Builder // open paragraphs; text boxes nest them
	levels []int             // heading level of each open paragraph, 0 for body text
	tables [][]string        // open tables: their finished row lines
	rows   [][]string        // open rows: their cells
	runs   int               // depth of open w:r
	inText bool              // inside w:t
	// ODF repeats: of each open row, how often it stands (number-rows-
	// repeated) and how often each of its cells does (number-columns-
	// repeated); missing entries are 1.
	rowReps  []int
	cellReps [][]int
	budget   *charBudget // counts what is written and repeated; nil: no cap
}

func isW(n xml.Name) bool { return n.Space == nsW || n.Space == nsWStrict }

// maxXMLDepth is how deeply elements may nest in a document part: libxml2's
// default limit. Word's own documents stay far below it (a table in a cell
// in a table adds about 5 levels).
const maxXMLDepth = 256

var errTooDeep = fmt.Errorf("elements nested deeper than %d levels", maxXMLDepth)

// docxText streams WordprocessingML and returns the body text. The
// decoder keeps a stack entry per open element: xmlTokens' depth limit is
// what bounds its memory (20 million nested elements took 2 GB).
func docxText(r io.Reader) (string, error) {
	var b docxBody
	err := xmlTokens(xmlDecoder(r), func(tok xml.Token) bool {
		switch t := tok.(type) {
		case xml.StartElement:
			return b.start(t)
		case xml.EndElement:
			b.end(t)
		case xml.CharData:
			if b.inText {
				b.write(string(t))
			}
		}
		return false
	})
	if err != nil {
		return "", err
	}
	// Unclosed elements at EOF already made the decoder fail; nothing is pending.
	return b.out.String(), nil
}

// start handles an element's start; true means its content is not text
// (an mc:Fallback, deleted or field-code text) and is skipped.
func (b *docxBody) start(t xml.StartElement) (skip bool) {
	if t.Name.Space == nsMC && t.Name.Local == "Fallback" {
		return true
	}
	if !isW(t.Name) {
		return false
	}
	switch t.Name.Local {
	case "del", "moveFrom", "delText", "instrText":
		return true
	case "p":
		b.paras = append(b.paras, strings.Builder{})
		b.levels = append(b.levels, 0)
	case "pStyle", "outlineLvl":
		if n := len(b.levels); n > 0 && b.levels[n-1] == 0 {
			b.levels[n-1] = headingLevel(t)
		}
	case "r":
		b.runs++
	case "t":
		b.inText = b.runs > 0
	case "tab":
		b.write("\t") // a tab stop definition in w:pPr is outside any run
	case "br", "cr":
		b.write("\n")
	case "noBreakHyphen":
		b.write("-")
	case "tbl":
		b.startTable()
	case "tr":
		b.startRow()
	case "tc":
		b.startCell()
	}
	return false
}

// end handles an element's end.
func (b *docxBody) end(t xml.EndElement) {
	if !isW(t.Name) {
		return
	}
	switch t.Name.Local {
	case "p":
		b.endParagraph()
	case "r":
		b.runs = max(b.runs-1, 0)
	case "t":
		b.inText = false
	case "tr":
		b.endRow()
	case "tbl":
		b.endTable()
	}
}

// write appends run content to the innermost open paragraph.
func (b *docxBody) write(s string) {
	if b.runs == 0 || len(b.paras) == 0 || !b.budget.takeString(s, 1) {
		return
	}
	b.paras[len(b.paras)-1].WriteString(s)
}

func (b *docxBody) endParagraph() {
	n := len(b.paras)
	if n == 0 {
		return
	}
	text := strings.TrimSpace(b.paras[n-1].String())
	level := b.levels[n-1]
	b.paras, b.levels = b.paras[:n-1], b.levels[:n-1]
	if level > 0 && text != "" && len(b.rows) == 0 {
		// A heading becomes a markdown heading line, so one rule finds
		// the headings of .md and .docx files.
		text = strings.Repeat("#", level) + " " + strings.Join(strings.Fields(text), " ")
	}
	b.emit(text)
}

// headingLevel reads a paragraph's style (Title, Heading1..Heading9) or
// outline level (0..8) as a heading level 1..6; 0 means body text.
func headingLevel(t xml.StartElement) int {
	var val string
	for _, a := range t.Attr {
		if a.Name.Local == "val" {
			val = strings.ToLower(a.Value)
		}
	}
	level := 0
	switch {
	case t.Name.Local == "outlineLvl":
		if len(val) == 1 && val[0] >= '0' && val[0] <= '8' {
			level = int(val[0]-'0') + 1
		}
	case val == "title":
		level = 1
	case len(val) == len("heading1") && strings.HasPrefix(val, "heading") && val[7] >= '1' && val[7] <= '9':
		level = int(val[7] - '0')
	}
	return min(level, 6)
}

// emit hands a finished block to the open table cell, or to the body.
func (b *docxBody) emit(text string) {
	if text == "" {
		return
	}
	if n := len(b.rows); n > 0 && len(b.rows[n-1]) > 0 {
		row := b.rows[n-1]
		cell := &row[len(row)-1]
		flat := strings.Join(strings.Fields(text), " ")
		if *cell == "" {
			*cell = flat
		} else {
			*cell += " " + flat
		}
		return
	}
	if b.out.Len() > 0 {
		b.out.WriteString("\n\n")
	}
	b.out.WriteString(text)
}

func (b *docxBody) endRow() {
	n := len(b.rows)
	if n == 0 {
		return
	}
	cells, cellReps, rowReps := b.rows[n-1], b.cellReps[n-1], b.rowReps[n-1]
	b.rows, b.cellReps, b.rowReps = b.rows[:n-1], b.cellReps[:n-1], b.rowReps[:n-1]
	last := len(cells) - 1 // trailing empty cells say nothing, however often repeated
	for last >= 0 && cells[last] == "" {
		last--
	}
	if last < 0 {
		return
	}
	var line strings.Builder
	for i, c := range cells[:last+1] {
		reps := 1
		if i < len(cellReps) {
			reps = cellReps[i]
		}
		// The first copy was counted as it was written; the tabs and
		// the other copies are counted before they are built.
		if !b.budget.take(reps) || !b.budget.takeString(c, reps-1) {
			return
		}
		for k := 0; k < reps; k++ {
			if i > 0 || k > 0 {
				line.WriteByte('\t')
			}
			line.WriteString(c)
		}
	}
	text := strings.TrimRight(line.String(), "\t")
	if rowReps > 1 {
		if !b.budget.takeString(text+"\n", rowReps-1) {
			return
		}
		text = strings.Repeat(text+"\n", rowReps-1) + text
	}
	if t := len(b.tables); t > 0 {
		b.tables[t-1] = append(b.tables[t-1], text)
		return
	}
	b.emit(text) // a row outside any table: malformed, keep its text
}

func (b *docxBody) endTable() {
	n := len(b.tables)
	if n == 0 {
		return
	}
	block := strings.Join(b.tables[n-1], "\n")
	b.tables = b.tables[:n-1]
	b.emit(block)
}
