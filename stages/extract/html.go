package extract

import (
	"bytes"
	"errors"
	"io"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// readHTML reads the visible text of an HTML page. The <title> comes
// first, as its own paragraph. Script, style, noscript, template, and
// embedded SVG, MathML and iframe content are dropped. Block elements end a
// paragraph ("\n\n"); br, li, tr, dt and dd end a line; table cells in a
// row are joined by "\t", and blocks inside a cell become spaces so that
// each row stays on one line. White space collapses to one space except inside
// <pre>, <textarea> and <listing>.
func readHTML(path string, f File, lim Limits) (*Document, error) {
	size, err := checkSize(path, f, lim)
	if err != nil {
		return nil, err
	}
	// UTF-8 (as most pages are, and as the page says if it names a
	// charset) streams from the file: memory is the text, not the markup.
	head := make([]byte, min(size, 1024))
	n, _ := f.ReadAt(head, 0)
	if label := metaCharset(head[:n]); label == "" || label == "utf-8" || label == "utf8" {
		if r := utf8Stream(f, size); r != nil {
			return finish(path, htmlText(r), lim)
		}
	}
	b, err := readLimited(path, f, lim)
	if err != nil {
		return nil, err
	}
	s, err := decodeHTML(b)
	if errors.Is(err, errBinary) {
		return nil, &FileError{Path: path, Reason: "binary file"}
	}
	return finish(path, htmlText(strings.NewReader(s)), lim)
}

func decodeHTML(b []byte) (string, error) {
	if enc, n := bomEncoding(b); enc != nil {
		return decodeWith(enc, b[n:]), nil
	}
	if label := metaCharset(b[:min(len(b), 1024)]); label != "" {
		// A page that says UTF-16 in ASCII bytes cannot be UTF-16 (WHATWG).
		if strings.HasPrefix(label, "utf-16") {
			label = "utf-8"
		}
		if enc, ok := charsetByName(label); ok {
			return decodeWith(enc, b), nil
		}
	}
	return decodeBytes(b)
}

// metaCharset finds `charset=LABEL` as written in <meta charset> and in
// <meta http-equiv content="...; charset=...">; it returns the lower-case
// label or "".
func metaCharset(b []byte) string {
	lower := bytes.ToLower(b)
	for {
		i := bytes.Index(lower, []byte("charset"))
		if i < 0 {
			return ""
		}
		rest := bytes.TrimLeft(lower[i+len("charset"):], " \t\n\r\f")
		lower = lower[i+len("charset"):]
		if len(rest) == 0 || rest[0] != '=' {
			continue
		}
		rest = bytes.TrimLeft(rest[1:], " \t\n\r\f\"'")
		end := bytes.IndexAny(rest, " \t\n\r\f\"';>/")
		if end < 0 {
			end = len(rest)
		}
		if end > 0 {
			return string(rest[:end])
		}
	}
}

// Breaks between pieces of text, from weakest to strongest.
const (
	brNone = iota
	brSpace
	brCell
	brLine
	brPara
)

// breakText is what each break writes between two pieces of text.
var breakText = [...]string{brNone: "", brSpace: " ", brCell: "\t", brLine: "\n", brPara: "\n\n"}

var htmlBreak = map[atom.Atom]int{
	atom.Br: brLine, atom.Li: brLine, atom.Tr: brLine, atom.Dt: brLine, atom.Dd: brLine,
	atom.Option: brLine, atom.Caption: brLine,
	atom.Td: brCell, atom.Th: brCell,
}

var htmlBlocks = []atom.Atom{
	atom.P, atom.Div, atom.H1, atom.H2, atom.H3, atom.H4, atom.H5, atom.H6,
	atom.Section, atom.Article, atom.Header, atom.Footer, atom.Nav, atom.Aside,
	atom.Main, atom.Blockquote, atom.Pre, atom.Ul, atom.Ol, atom.Dl, atom.Table,
	atom.Form, atom.Figure, atom.Figcaption, atom.Hr, atom.Address, atom.Fieldset,
	atom.Details, atom.Summary, atom.Body, atom.Listing, atom.Textarea, atom.Legend,
}

// Elements whose content is never shown as text.
var htmlHidden = map[atom.Atom]bool{
	atom.Script: true, atom.Style: true, atom.Noscript: true, atom.Template: true,
	atom.Svg: true, atom.Math: true, atom.Iframe: true, atom.Object: true,
	atom.Noembed: true, atom.Noframes: true,
}

func init() {
	for _, a := range htmlBlocks {
		htmlBreak[a] = brPara
	}
}

// htmlWriter joins text pieces with the strongest break asked for
// between them; breaks at the start and end are dropped.
type htmlWriter struct {
	sb      strings.Builder
	pending int
}

func (w *htmlWriter) brk(level int) { w.pending = max(w.pending, level) }

func (w *htmlWriter) text(s string) {
	if s == "" {
		return
	}
	if w.sb.Len() > 0 {
		w.sb.WriteString(breakText[w.pending])
	}
	w.pending = brNone
	w.sb.WriteString(s)
}

// collapse writes s with white-space runs as single (pending) spaces.
func (w *htmlWriter) collapse(s string) {
	s = strings.ReplaceAll(s, "\u00a0", " ")
	lead := s != "" && isHTMLSpace(s[0])
	fields := strings.FieldsFunc(s, func(r rune) bool { return r < 0x80 && isHTMLSpace(byte(r)) })
	if lead {
		w.brk(brSpace)
	}
	for i, f := range fields {
		if i > 0 {
			w.brk(brSpace)
		}
		w.text(f)
	}
	if len(fields) > 0 && isHTMLSpace(s[len(s)-1]) {
		w.brk(brSpace)
	}
}

func isHTMLSpace(c byte) bool {
	return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f'
}

// htmlText tokenises r and returns its visible text.
func htmlText(r io.Reader) string {
	z := html.NewTokenizer(r)
	var h htmlState
	for {
		tt := z.Next()
		switch tt {
		case html.ErrorToken:
			return h.result()
		case html.TextToken:
			h.text(z.Text())
		case html.StartTagToken, html.SelfClosingTagToken, html.EndTagToken:
			name, _ := z.TagName()
			h.tag(atom.Lookup(name), tt != html.EndTagToken, tt == html.SelfClosingTagToken)
		}
	}
}

// htmlState is where htmlText stands in the document.
type htmlState struct {
	w       htmlWriter
	title   strings.Builder
	inTitle bool
	hidden  int // depth inside hidden elements
	pre     int // depth inside pre-formatted elements
	cells   int // depth inside td/th
}

// result is the title, then the body text.
func (h *htmlState) result() string {
	t := strings.Join(strings.Fields(h.title.String()), " ")
	if t == "" {
		return h.w.sb.String()
	}
	if h.w.sb.Len() == 0 {
		return t
	}
	return t + "\n\n" + h.w.sb.String()
}

// text takes a text token.
func (h *htmlState) text(b []byte) {
	switch {
	case h.hidden > 0:
	case h.inTitle:
		h.title.Write(b)
	case h.pre > 0:
		h.w.text(string(b))
	default:
		h.w.collapse(string(b))
	}
}

// tag takes a start (start true), self-closing or end tag of element a.
func (h *htmlState) tag(a atom.Atom, start, selfClosing bool) {
	switch {
	case htmlHidden[a]:
		if selfClosing {
			return
		}
		if start {
			h.hidden++
		} else {
			h.hidden = max(h.hidden-1, 0)
		}
		return
	case a == atom.Title:
		h.inTitle = start && !selfClosing
		return
	}
	if h.hidden > 0 {
		return
	}
	if a == atom.Pre || a == atom.Textarea || a == atom.Listing {
		if start && !selfClosing {
			h.pre++
		} else if !start {
			h.pre = max(h.pre-1, 0)
		}
	}
	level, ok := htmlBreak[a]
	switch {
	case !ok:
	case level == brCell:
		// A cell break belongs before a cell, not after it.
		if start {
			h.w.brk(level)
			if !selfClosing {
				h.cells++
			}
		} else {
			h.cells = max(h.cells-1, 0)
		}
	case a == atom.Tr:
		h.w.brk(level)
	case h.cells > 0:
		// Blocks inside a cell stay on the row's line.
		h.w.brk(brSpace)
	default:
		h.w.brk(level)
	}
}
