package eval

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"embed"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/doc/comment"
	"go/format"
	"go/parser"
	"go/token"
	"io"
	"path/filepath"
	"strings"

	"golang.org/x/net/html"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
)

// Caps on one generated document, so no single source (cmd/go's 150 kB
// help, the spec's Expressions chapter) dominates the corpus.
const (
	maxReferenceChars = 12000
	maxSectionChars   = 16000
)

// LicenseNames are the Debian base-files licences used; symlinked aliases
// (GPL, LGPL, GFDL) are left out so no text appears twice.
var LicenseNames = []string{"Apache-2.0", "Artistic", "BSD", "CC0-1.0", "GFDL-1.2", "GFDL-1.3",
	"GPL-1", "GPL-2", "GPL-3", "LGPL-2", "LGPL-2.1", "LGPL-3", "MPL-1.1", "MPL-2.0"}

// LicenseDir holds the licences; a variable so tests can point elsewhere.
var LicenseDir = "/usr/share/common-licenses"

// packageReference renders one standard-library package as a reference
// page: its package comment, then its exported declarations with their
// comments, cut at maxReferenceChars after the package comment.
func packageReference(goroot, importPath string) (Document, error) {
	dir := filepath.Join(goroot, "src", importPath)
	ctxt := build.Default
	ctxt.GOROOT, ctxt.GOOS, ctxt.GOARCH, ctxt.CgoEnabled = goroot, "linux", "amd64", true
	bp, err := ctxt.ImportDir(dir, 0)
	if err != nil {
		return Document{}, fmt.Errorf("eval: package %s: %w", importPath, err)
	}
	fset := token.NewFileSet()
	var files []*ast.File
	for _, name := range append(bp.GoFiles, bp.CgoFiles...) {
		f, err := parser.ParseFile(fset, filepath.Join(dir, name), nil, parser.ParseComments)
		if err != nil {
			return Document{}, fmt.Errorf("eval: package %s: %w", importPath, err)
		}
		files = append(files, f)
	}
	pkg, err := doc.NewFromFiles(fset, files, importPath)
	if err != nil {
		return Document{}, fmt.Errorf("eval: package %s: %w", importPath, err)
	}
	title := "Package " + importPath
	if pkg.Name == "main" {
		title = "Command " + filepath.Base(importPath)
	}
	d := Document{Name: "reference/" + strings.ReplaceAll(importPath, "/", "-"), Blocks: []Block{{Title, title}}}
	d.Blocks = append(d.Blocks, commentBlocks(pkg.Parser().Parse(pkg.Doc))...)
	if pkg.Name == "main" {
		// A command's help is its whole page; cmd/go's is cut.
		for d.size() > 2*maxReferenceChars {
			d.Blocks = d.Blocks[:len(d.Blocks)-1]
		}
		return d, nil
	}
	decl := func(heading string, node ast.Node, text string) bool {
		if d.size() > maxReferenceChars {
			return false
		}
		d.Blocks = append(d.Blocks, Block{Heading, heading})
		var buf bytes.Buffer
		if format.Node(&buf, fset, node) == nil && buf.Len() < 600 {
			d.Blocks = append(d.Blocks, Block{Code, buf.String()})
		}
		d.Blocks = append(d.Blocks, commentBlocks(pkg.Parser().Parse(text))...)
		return true
	}
	for _, f := range pkg.Funcs {
		if !decl("func "+f.Name, f.Decl, f.Doc) {
			return d, nil
		}
	}
	for _, t := range pkg.Types {
		if !decl("type "+t.Name, t.Decl, t.Doc) {
			return d, nil
		}
		for _, f := range append(t.Funcs, t.Methods...) {
			if !decl("func "+f.Name, f.Decl, f.Doc) {
				return d, nil
			}
		}
	}
	return d, nil
}

// commentBlocks turns a parsed doc comment into blocks.
func commentBlocks(cd *comment.Doc) []Block {
	var out []Block
	for _, b := range cd.Content {
		switch b := b.(type) {
		case *comment.Heading:
			out = append(out, Block{Heading, inlineText(b.Text)})
		case *comment.Paragraph:
			out = append(out, Block{Para, inlineText(b.Text)})
		case *comment.Code:
			out = append(out, Block{Code, strings.TrimRight(b.Text, "\n")})
		case *comment.List:
			for _, it := range b.Items {
				var parts []string
				for _, c := range it.Content {
					if p, ok := c.(*comment.Paragraph); ok {
						parts = append(parts, inlineText(p.Text))
					}
				}
				out = append(out, Block{Item, strings.Join(parts, " ")})
			}
		}
	}
	return out
}

func inlineText(in []comment.Text) string {
	var sb strings.Builder
	for _, t := range in {
		switch t := t.(type) {
		case comment.Plain:
			sb.WriteString(string(t))
		case comment.Italic:
			sb.WriteString(string(t))
		case *comment.Link:
			sb.WriteString(inlineText(t.Text))
		case *comment.DocLink:
			sb.WriteString(inlineText(t.Text))
		}
	}
	return strings.Join(strings.Fields(sb.String()), " ")
}

// htmlBlocks reads the block structure of one of GOROOT's HTML documents:
// headings, paragraphs, list items and preformatted text.
func htmlBlocks(src []byte) []Block {
	var out []Block
	z := html.NewTokenizer(bytes.NewReader(src))
	var cur *Block
	var sb strings.Builder
	kinds := map[string]Kind{"h2": chapter, "h3": Heading, "h4": Heading, "p": Para, "li": Item, "pre": Code}
	flush := func() {
		if cur == nil {
			return
		}
		t := sb.String()
		if cur.Kind == Code {
			t = strings.Trim(t, "\n")
		} else {
			t = strings.Join(strings.Fields(t), " ")
		}
		if strings.TrimSpace(t) != "" {
			out = append(out, Block{cur.Kind, t})
		}
		cur = nil
		sb.Reset()
	}
	for {
		switch z.Next() {
		case html.ErrorToken:
			flush()
			return out
		case html.StartTagToken:
			name, _ := z.TagName()
			if k, ok := kinds[string(name)]; ok {
				flush()
				cur = &Block{Kind: k}
			}
		case html.EndTagToken:
			name, _ := z.TagName()
			if _, ok := kinds[string(name)]; ok {
				flush()
			}
		case html.TextToken:
			if cur != nil {
				sb.Write(z.Text())
			}
		}
	}
}

// markdownBlocks reads the block structure of a simple Markdown file.
func markdownBlocks(src string) []Block {
	var out []Block
	var para []string
	flush := func() {
		if len(para) > 0 {
			out = append(out, Block{Para, strings.Join(para, " ")})
			para = nil
		}
	}
	sc := bufio.NewScanner(strings.NewReader(src))
	var code []string
	inCode := false
	for sc.Scan() {
		l := sc.Text()
		switch {
		case strings.HasPrefix(l, "```"):
			if inCode {
				out = append(out, Block{Code, strings.Join(code, "\n")})
				code = nil
			} else {
				flush()
			}
			inCode = !inCode
		case inCode:
			code = append(code, l)
		case strings.HasPrefix(l, "#"):
			flush()
			out = append(out, Block{Heading, strings.TrimSpace(strings.TrimLeft(l, "#"))})
		case strings.TrimSpace(l) == "":
			flush()
		default:
			para = append(para, strings.TrimSpace(l))
		}
	}
	flush()
	return out
}

// textBlocks splits plain text into paragraphs at blank lines.
func textBlocks(src string) []Block {
	var out []Block
	for p := range strings.SplitSeq(strings.ReplaceAll(src, "\r\n", "\n"), "\n\n") {
		if t := strings.Join(strings.Fields(p), " "); t != "" {
			out = append(out, Block{Para, t})
		}
	}
	return out
}

// specSections splits the Go specification into one document per chapter,
// and a long chapter into parts at its section headings.
func specSections(src []byte) []Document {
	var docs []Document
	var name string // of the current chapter
	var part []Block
	emit := func() {
		if len(part) == 0 || name == "" {
			return
		}
		path := fmt.Sprintf("spec/%02d-%s", len(docs)+1, corpus.Slug(name))
		docs = append(docs, Document{Name: path, Blocks: append([]Block{{Title, "The Go Programming Language Specification: " + name}}, part...)})
		part = nil
	}
	size := 0
	for _, b := range htmlBlocks(src) {
		if b.Kind == chapter {
			emit()
			name, size = b.Text, 0
			continue
		}
		if b.Kind == Heading && size > maxSectionChars {
			emit()
			size = 0
		}
		part = append(part, b)
		size += len(b.Text)
	}
	emit()
	return docs
}

// goDocs holds go1.26.8's doc/ files (BSD licence, godoc/LICENSE). A Go
// toolchain fetched through the module proxy has no doc/ folder, so the
// corpus cannot take them from GOROOT on every machine.
//
//go:embed godoc/*.gz
var goDocs embed.FS

// goDocFile returns one of the shipped doc/ files, uncompressed.
func goDocFile(name string) ([]byte, error) {
	f, err := goDocs.Open("godoc/" + name + ".gz")
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", name, err)
	}
	return io.ReadAll(zr)
}

// guide reads one of the shipped doc/ documents.
func guide(file, title string) (Document, error) {
	b, err := goDocFile(file)
	if err != nil {
		return Document{}, err
	}
	var blocks []Block
	if strings.HasSuffix(file, ".md") {
		blocks = markdownBlocks(string(b))
	} else {
		blocks = htmlBlocks(b)
	}
	for i := range blocks {
		if blocks[i].Kind == chapter {
			blocks[i].Kind = Heading
		}
	}
	name := "guides/" + corpus.Slug(strings.TrimSuffix(file, filepath.Ext(file)))
	return Document{Name: name, Blocks: append([]Block{{Title, title}}, blocks...)}, nil
}
