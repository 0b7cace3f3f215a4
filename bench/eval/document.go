package eval

import (
	"fmt"
	"html"
	"strings"
)

// Kind is the role of a Block in a document.
type Kind int

const (
	Title   Kind = iota // one per document, first
	Heading             // a section
	Para                // running text
	Item                // one list item
	Code                // preformatted lines

	// chapter is an h2 heading of GOROOT's HTML, where the spec is cut
	// into documents; it never reaches a renderer.
	chapter
)

// Block is one unit of a document's structure; every format renders the
// same blocks, so a fact is in the same words whatever the file type.
type Block struct {
	Kind Kind
	Text string
}

// Document is one generated file before it is written: Name is its path
// in the corpus without the extension, Ext its file type.
type Document struct {
	Name   string
	Ext    string
	Blocks []Block
}

// Path is the document's path relative to the corpus folder.
func (d Document) Path() string { return d.Name + d.Ext }

// Text is the document as plain text, the body of a .txt file.
func (d Document) Text() string {
	var sb strings.Builder
	for _, b := range d.Blocks {
		switch b.Kind {
		case Title, Heading:
			rule := map[Kind]string{Title: "=", Heading: "-"}[b.Kind]
			fmt.Fprintf(&sb, "%s\n%s\n\n", b.Text, strings.Repeat(rule, min(78, len([]rune(b.Text)))))
		case Para:
			sb.WriteString(wrap(b.Text, 78) + "\n\n")
		case Item:
			sb.WriteString(wrap("  * "+b.Text, 78) + "\n\n")
		case Code:
			for l := range strings.SplitSeq(b.Text, "\n") {
				sb.WriteString("    " + l + "\n")
			}
			sb.WriteString("\n")
		}
	}
	return sb.String()
}

// markdownBlock and htmlBlock lay out one block of each kind.
var (
	markdownBlock = map[Kind]string{Title: "# %s\n\n", Heading: "## %s\n\n", Para: "%s\n\n", Item: "- %s\n\n", Code: "```\n%s\n```\n\n"}
	htmlBlock     = map[Kind]string{Title: "<h1>%s</h1>\n", Heading: "<h2>%s</h2>\n", Para: "<p>%s</p>\n", Item: "<ul><li>%s</li></ul>\n", Code: "<pre>%s</pre>\n"}
)

// Markdown is the document as CommonMark, the body of a .md file.
func (d Document) Markdown() string {
	var sb strings.Builder
	for _, b := range d.Blocks {
		fmt.Fprintf(&sb, markdownBlock[b.Kind], b.Text)
	}
	return sb.String()
}

// HTML is the document as a web page; LibreOffice turns it into PDF or DOCX
// with the title and headings as heading styles.
func (d Document) HTML() string {
	var sb strings.Builder
	title := ""
	if len(d.Blocks) > 0 {
		title = d.Blocks[0].Text
	}
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head><body>\n", html.EscapeString(title))
	for _, b := range d.Blocks {
		fmt.Fprintf(&sb, htmlBlock[b.Kind], html.EscapeString(b.Text))
	}
	sb.WriteString("</body></html>\n")
	return sb.String()
}

// wrap breaks text into lines of at most width bytes at spaces.
func wrap(text string, width int) string {
	var sb strings.Builder
	n := 0
	for i, w := range strings.Fields(text) {
		if i > 0 && n+1+len(w) > width {
			sb.WriteByte('\n')
			n = 0
		} else if i > 0 {
			sb.WriteByte(' ')
			n++
		}
		sb.WriteString(w)
		n += len(w)
	}
	return sb.String()
}

// size is the document's plain-text length in bytes.
func (d Document) size() int {
	n := 0
	for _, b := range d.Blocks {
		n += len(b.Text) + 2
	}
	return n
}
