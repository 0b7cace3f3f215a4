package extract

import (
	"bytes"
	"errors"
	"strconv"
	"strings"

	"golang.org/x/text/encoding"
	"golang.org/x/text/encoding/charmap"
)

func init() { readers[".rtf"] = readRTF }

// maxRTFDepth bounds group nesting; Word and LibreOffice stay below 50.
const maxRTFDepth = 1024

var errRTFDepth = errors.New("groups nested deeper than 1024")

// readRTF reads the body text of a Rich Text Format document: paragraphs
// "\n\n" apart, \line as "\n", table cells joined by "\t" with one line per
// row. 8-bit text is decoded with the document's \ansicpg code page and
// \u escapes as Unicode. Font, colour and style tables, pictures, objects,
// headers, footers, footnotes, comments, field instructions and every
// ignorable destination ({\*\...}) are skipped; a field's result is kept.
func readRTF(p string, f File, lim Limits) (*Document, error) {
	b, err := readLimited(p, f, lim)
	if err != nil {
		return nil, err
	}
	if !bytes.HasPrefix(bytes.TrimLeft(b, " \t\r\n"), []byte(`{\rtf`)) {
		return nil, &FileError{Path: p, Reason: `not an RTF file: it does not start with {\rtf`}
	}
	text, err := rtfText(b, newCharBudget(lim))
	if textCap := (*textCapError)(nil); errors.As(err, &textCap) {
		return nil, &FileError{Path: p, Reason: textCap.Error()}
	}
	if err != nil {
		return nil, &FileError{Path: p, Reason: "malformed RTF", Err: err}
	}
	return finish(p, text, lim)
}

// rtfSkip are destinations whose content is not body text.
var rtfSkip = map[string]bool{
	"fonttbl": true, "colortbl": true, "stylesheet": true, "info": true, "pict": true, "object": true,
	"header": true, "headerl": true, "headerr": true, "headerf": true, "footer": true, "footerl": true,
	"footerr": true, "footerf": true, "footnote": true, "annotation": true, "fldinst": true, "themedata": true,
	"colorschememapping": true, "datastore": true, "latentstyles": true, "listtable": true,
	"listoverridetable": true, "rsidtbl": true, "generator": true, "xmlnstbl": true, "mmathPr": true,
	"filetbl": true, "revtbl": true, "pgdsctbl": true, "listtext": true, "pntext": true, "pntxta": true,
	"pntxtb": true, "shpinst": true, "shppict": true, "nonshppict": true, "xe": true, "tc": true,
	"bkmkstart": true, "bkmkend": true, "atnid": true, "atnauthor": true, "template": true,
}

// rtfSymbols are control words that stand for one character.
var rtfSymbols = map[string]string{
	"tab": "\t", "cell": "\t", "line": "\n", "emdash": "—", "endash": "–", "lquote": "‘",
	"rquote": "’", "ldblquote": "“", "rdblquote": "”", "bullet": "•", "emspace": " ", "enspace": " ",
	"qmspace": " ",
}

// rtfCodePages maps \ansicpg numbers that are not "windows-N" labels.
var rtfCodePages = map[int]string{932: "shift_jis", 936: "gbk", 949: "euc-kr", 950: "big5", 65001: "utf-8",
	10000: "macintosh", 20866: "koi8-r", 28591: "iso-8859-1"}

type rtfGroup struct {
	skip    bool // inside a destination that is not text
	deleted bool // a tracked deletion (\deleted)
	uc      int  // fallback characters after a \u escape
}

type rtfReader struct {
	out, para strings.Builder
	raw       []byte // 8-bit text waiting to be decoded
	enc       encoding.Encoding
	groups    []rtfGroup
	fallback  int  // characters still to skip after \u
	intbl     bool // the paragraph is in a table cell: \par is a space
	afterRow  bool // a table row ended: body text starts a paragraph
	level     int  // the paragraph's heading level (\outlinelevel + 1)
	budget    *charBudget
}

func (r *rtfReader) top() *rtfGroup { return &r.groups[len(r.groups)-1] }

// hidden reports whether text here is not body text.
func (r *rtfReader) hidden() bool { g := r.top(); return g.skip || g.deleted }

// text is about to be added: text after a table starts a paragraph.
func (r *rtfReader) text() {
	if r.afterRow && !r.intbl {
		r.afterRow = false
		r.endParagraph()
	}
}

func (r *rtfReader) flush() {
	if len(r.raw) > 0 {
		s := decodeWith(r.enc, r.raw)
		r.raw = r.raw[:0]
		if r.budget.takeString(s, 1) {
			r.para.WriteString(s)
		}
	}
}

// char takes one character of 8-bit text, unless skipped.
func (r *rtfReader) char(c byte) {
	switch {
	case r.hidden():
	case r.fallback > 0:
		r.fallback--
	default:
		r.text()
		r.raw = append(r.raw, c)
		// A single-byte code page can be decoded in pieces: the text is
		// counted as it grows, not once the file is read.
		if _, single := r.enc.(*charmap.Charmap); single && len(r.raw) >= 64<<10 {
			r.flush()
		}
	}
}

func (r *rtfReader) write(s string) {
	if !r.hidden() {
		r.text()
		r.flush()
		if r.budget.takeString(s, 1) {
			r.para.WriteString(s)
		}
	}
}

func (r *rtfReader) endParagraph() {
	r.flush()
	lines := strings.Split(r.para.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	text := strings.TrimSpace(strings.Join(lines, "\n"))
	r.para.Reset()
	if text == "" {
		return
	}
	if r.level > 0 && !r.intbl {
		text = strings.Repeat("#", r.level) + " " + strings.Join(strings.Fields(text), " ")
	}
	if r.out.Len() > 0 {
		r.out.WriteString("\n\n")
	}
	r.out.WriteString(text)
}

// rtfText tokenises an RTF document, its text counted against budget as
// it is built.
func rtfText(b []byte, budget *charBudget) (string, error) {
	r := &rtfReader{enc: charmap.Windows1252, groups: []rtfGroup{{uc: 1}}, budget: budget}
	for i := 0; i < len(b); i++ {
		if err := budget.err(); err != nil {
			return "", err
		}
		switch c := b[i]; c {
		case '{':
			r.flush()
			if len(r.groups) >= maxRTFDepth {
				return "", errRTFDepth
			}
			r.groups = append(r.groups, *r.top())
			r.fallback = 0
		case '}':
			r.flush()
			if len(r.groups) > 1 {
				r.groups = r.groups[:len(r.groups)-1]
			}
			r.fallback = 0
		case '\r', '\n':
		case '\\':
			i = r.control(b, i+1) - 1
		default:
			r.char(c)
		}
	}
	r.endParagraph()
	return r.out.String(), budget.err()
}

// control reads the control word or symbol starting at b[i] (after the
// backslash) and returns the index just past it.
func (r *rtfReader) control(b []byte, i int) int {
	if i >= len(b) {
		return i
	}
	if !isASCIILetter(b[i]) {
		return r.symbol(b, i)
	}
	word, param, hasParam, i := controlWord(b, i)
	if word == "bin" && hasParam && param > 0 {
		return min(i+param, len(b)) // binary data
	}
	r.word(word, param, hasParam)
	return i
}

// symbol handles the control symbol at b[i] and returns the index past it.
func (r *rtfReader) symbol(b []byte, i int) int {
	switch c := b[i]; {
	case c == '\'':
		if i+2 < len(b) {
			if v, err := strconv.ParseUint(string(b[i+1:i+3]), 16, 8); err == nil {
				r.char(byte(v))
			}
		}
		return min(i+3, len(b))
	case c == '*':
		r.top().skip = true
	case c == '~':
		r.write("\u00a0")
	case c == '_':
		r.write("-")
	case c == '\\' || c == '{' || c == '}':
		r.char(c)
	case c == '\r' || c == '\n':
		r.paragraph()
	}
	return i + 1 // one byte; \- and other symbols do nothing
}

// controlWord reads the letters and the optional numeric parameter of the
// control word at b[i], and returns the index past its delimiter.
func controlWord(b []byte, i int) (word string, param int, hasParam bool, next int) {
	start := i
	for i < len(b) && isASCIILetter(b[i]) {
		i++
	}
	word = string(b[start:i])
	pstart := i
	if i < len(b) && b[i] == '-' {
		i++
	}
	for i < len(b) && b[i] >= '0' && b[i] <= '9' && i-pstart < 11 {
		i++
	}
	if hasParam = i > pstart; hasParam {
		param, _ = strconv.Atoi(string(b[pstart:i]))
	}
	if i < len(b) && b[i] == ' ' {
		i++ // the delimiter belongs to the control word
	}
	return word, param, hasParam, i
}

// word applies one control word to the reader's state.
func (r *rtfReader) word(word string, param int, hasParam bool) {
	switch {
	case r.top().skip:
		// Inside a skipped destination nothing changes the body's state.
	case rtfSkip[word]:
		r.top().skip = true
	case word == "par" && r.intbl:
		r.write(" ")
	case word == "par" || word == "sect" || word == "page":
		r.paragraph()
	case word == "row":
		r.write("\n")
		r.afterRow = true
	case word == "intbl":
		r.intbl = true
	case word == "pard":
		r.intbl, r.level = false, 0
	case word == "outlinelevel" && hasParam:
		r.level = min(max(param+1, 1), 6)
	case word == "deleted":
		r.top().deleted = !hasParam || param != 0
	case word == "plain":
		r.top().deleted = false
	case word == "u" && hasParam:
		if param < 0 {
			param += 65536
		}
		r.write(string(rune(param)))
		if !r.hidden() {
			r.fallback = r.top().uc
		}
	case word == "uc" && hasParam:
		r.top().uc = max(param, 0)
	case word == "ansicpg" && hasParam:
		r.codePage(param)
	default:
		if s, ok := rtfSymbols[word]; ok {
			r.write(s)
		}
	}
}

// codePage switches the encoding of \' bytes to Windows code page cp.
func (r *rtfReader) codePage(cp int) {
	label, ok := rtfCodePages[cp]
	if !ok {
		label = "windows-" + strconv.Itoa(cp)
	}
	if enc, ok := charsetByName(label); ok {
		r.flush()
		r.enc = enc
	}
}

func (r *rtfReader) paragraph() {
	if !r.hidden() {
		r.endParagraph()
	}
}

func isASCIILetter(c byte) bool { return c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }
