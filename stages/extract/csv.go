package extract

import (
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// Caps on one CSV row, so that no file costs memory out of proportion to
// its text (docs/command-line.md, per-file limits). A file over them fails at once with the reason.
const (
	// maxCSVCells is Excel's column limit: a row wider than any spreadsheet.
	maxCSVCells = 16384
	// maxCSVCellBytes bounds one cell, and the first row held back to
	// decide whether it is a header.
	maxCSVCellBytes = 1 << 20
)

// readCSV reads a delimited table (comma, semicolon, tab or pipe, sniffed
// from the first line) in any encoding a text file may use. Each record
// becomes one line. When the first record looks like a header (every field
// non-empty and non-numeric, and more records follow), later records read
// "name: value; name2: value2", so each line carries its own context;
// otherwise fields are joined by "; ". Empty fields are left out, and line
// breaks inside a field become spaces.
//
// A UTF-8 file is parsed as it streams from disk, one cell at a time:
// memory is the text written out (at most lim.MaxChars) plus one cell and
// the first row, whatever the shape of the table. A file in another
// encoding is decoded whole first (its size again).
func readCSV(path string, f File, lim Limits) (*Document, error) {
	size, err := checkSize(path, f, lim)
	if err != nil {
		return nil, err
	}
	var src io.RuneReader
	var delim rune
	if r := utf8Stream(f, size); r != nil {
		head, _ := r.Peek(64 << 10)
		src, delim = r, sniffDelimiter(string(head))
	} else {
		s, err := readDecoded(path, f, lim)
		if err != nil {
			return nil, err
		}
		src, delim = strings.NewReader(s), sniffDelimiter(s)
	}
	t := csvTable{out: csvOut{max: lim.MaxChars}}
	if err := t.parse(src, delim); err != nil {
		return nil, &FileError{Path: path, Reason: err.Error()}
	}
	return finish(path, t.out.sb.String(), lim)
}

// csvTable turns the cells of a table into text as they are parsed.
type csvTable struct {
	out    csvOut
	row    int      // rows seen, the one being parsed included
	first  []string // the first row, held until it is known to be a header or not
	held   int      // bytes in first
	header []string
	plain  bool // the first row was written out: there is no header
	cells  int  // cells in the current row so far
}

// csvOut builds the text: one line per record, cells joined by "; ".
type csvOut struct {
	sb      strings.Builder
	max     int // bytes at most (a bound on code points), 0 = none
	started bool
}

func (o *csvOut) cell(name, v string) error {
	if o.started {
		o.sb.WriteString("; ")
	} else {
		if o.sb.Len() > 0 {
			o.sb.WriteByte('\n')
		}
		o.started = true
	}
	if name != "" {
		o.sb.WriteString(name)
		o.sb.WriteString(": ")
	}
	o.sb.WriteString(v)
	if o.max > 0 && o.sb.Len() > 4*o.max {
		// finish counts code points exactly; this only stops runaway growth.
		return fmt.Errorf("extracted text exceeds %d characters", o.max)
	}
	return nil
}

// parse reads records from src: RFC 4180 with lazy quotes (a quote inside
// a field is kept), CR LF or LF line ends, empty lines skipped.
func (t *csvTable) parse(src io.RuneReader, delim rune) error {
	var cell strings.Builder
	quoted, inQuotes, lineEmpty := false, false, true
	endCell := func() error {
		t.cells++
		if t.cells > maxCSVCells {
			return fmt.Errorf("CSV row %d has more than %d cells", t.row, maxCSVCells)
		}
		err := t.cell(cell.String())
		cell.Reset()
		quoted = false
		return err
	}
	add := func(c rune) error {
		cell.WriteRune(c)
		if cell.Len() > maxCSVCellBytes {
			return fmt.Errorf("CSV row %d has a cell over %s", t.row, bytesize.Format(maxCSVCellBytes))
		}
		return nil
	}
	for {
		c, _, err := src.ReadRune()
		if err == io.EOF {
			break
		}
		if err != nil {
			return err
		}
		if lineEmpty {
			if c == '\n' {
				continue // an empty line is no record
			}
			lineEmpty = false
			t.newRow()
		}
		switch {
		case inQuotes && c == '"':
			var done bool
			if c, inQuotes, done = quoteInQuotes(src, &cell, delim); done {
				continue
			}
		case inQuotes:
			if err := add(c); err != nil {
				return err
			}
			continue
		case c == '"' && cell.Len() == 0 && !quoted:
			inQuotes, quoted = true, true
			continue
		}
		switch c {
		case delim, '\n':
			if s := cell.String(); c == '\n' && strings.HasSuffix(s, "\r") {
				cell.Reset()
				cell.WriteString(s[:len(s)-1])
			}
			if err := endCell(); err != nil {
				return err
			}
			lineEmpty = c == '\n'
		case '\r':
			// Dropped before a line end; kept (as a space, later) elsewhere.
			cell.WriteRune(c)
		default:
			if err := add(c); err != nil {
				return err
			}
		}
	}
	if !lineEmpty {
		if err := endCell(); err != nil {
			return err
		}
	}
	if t.row == 1 && !t.plain {
		return t.writeFirst() // a lone record is data, not a header
	}
	return nil
}

// newRow starts the next record.
func (t *csvTable) newRow() {
	t.row++
	t.cells = 0
	t.out.started = false
}

// quoteInQuotes reads on past a quote inside a quoted field: "" is one
// quote, a quote before a delimiter or a line end closes the field (that
// rune, c, is left for the caller to handle: done is false), and any other
// quote is kept (lazy quotes). inQuotes says whether the field is still open.
func quoteInQuotes(src io.RuneReader, cell *strings.Builder, delim rune) (c rune, inQuotes, done bool) {
	next, _, err := src.ReadRune()
	switch {
	case err == nil && next == '"':
		cell.WriteRune('"')
		return 0, true, true
	case err != nil:
		return 0, false, true
	case next == delim || next == '\n' || next == '\r':
		return next, false, false // handled as a field or record end
	default:
		cell.WriteRune('"') // lazy: a quote inside a quoted field
		cell.WriteRune(next)
		return 0, true, true
	}
}

// cell takes one parsed cell of the current row.
func (t *csvTable) cell(v string) error {
	if t.row == 1 && !t.plain {
		t.first = append(t.first, v)
		if t.held += len(v); t.held > maxCSVCellBytes {
			// Too big to be a header: write it out as it comes.
			return t.writeFirst()
		}
		return nil
	}
	if t.row == 2 && t.cells == 1 && !t.plain {
		if looksLikeHeader(t.first) {
			t.header = cleanFields(t.first)
			t.first = nil
		} else if err := t.writeFirst(); err != nil {
			return err
		}
		t.out.started = false
	}
	v = clean(v)
	if v == "" {
		return nil
	}
	name := ""
	if i := t.cells - 1; i < len(t.header) {
		name = t.header[i]
	}
	return t.out.cell(name, v)
}

// writeFirst writes the held first row as data.
func (t *csvTable) writeFirst() error {
	t.plain = true
	first := t.first
	t.first = nil
	for _, v := range first {
		if v = clean(v); v != "" {
			if err := t.out.cell("", v); err != nil {
				return err
			}
		}
	}
	return nil
}

// sniffDelimiter picks the most frequent of , ; tab | outside quotes in
// the first line; comma wins ties and empty input.
func sniffDelimiter(s string) rune {
	line, _, _ := strings.Cut(s[:min(len(s), 64<<10)], "\n")
	counts := map[rune]int{}
	quoted := false
	for _, c := range line {
		switch c {
		case '"':
			quoted = !quoted
		case ',', ';', '\t', '|':
			if !quoted {
				counts[c]++
			}
		}
	}
	best := ','
	for _, c := range []rune{';', '\t', '|'} {
		if counts[c] > counts[best] {
			best = c
		}
	}
	return best
}

func looksLikeHeader(rec []string) bool {
	if len(rec) == 0 {
		return false
	}
	for _, f := range rec {
		f = strings.TrimSpace(f)
		if f == "" {
			return false
		}
		if _, err := strconv.ParseFloat(strings.ReplaceAll(f, ",", ""), 64); err == nil {
			return false
		}
	}
	return true
}

// cleanFields trims each field and folds inner white space to one space.
func cleanFields(rec []string) []string {
	out := make([]string, len(rec))
	for i, f := range rec {
		out[i] = clean(f)
	}
	return out
}

func clean(f string) string { return strings.Join(strings.Fields(f), " ") }
