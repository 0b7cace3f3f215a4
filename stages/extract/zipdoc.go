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

// Zip-based formats (OpenDocument, PPTX, XLSX, EPUB) read several parts;
// each part has the DOCX reader's guards (Limits.MaxPartBytes,
// maxDocxRatio) and all parts of one file together inflate to at most
// Limits.MaxZipBytes.

// zipDoc is an open zip-based document.
type zipDoc struct {
	path   string
	kind   string // "an OpenDocument file", for messages
	zr     *zip.Reader
	budget int64 // bytes that parts may still inflate to
	part   int64 // bytes one part may inflate to
	byName map[string]*zip.File
}

func openZipDoc(p string, f File, lim Limits, kind string) (*zipDoc, error) {
	size, err := checkSize(p, f, lim)
	if err != nil {
		return nil, err
	}
	zr, err := zip.NewReader(f, size)
	if err != nil {
		return nil, &FileError{Path: p, Reason: "not " + kind + ": not a valid zip archive", Err: err}
	}
	z := &zipDoc{path: p, kind: kind, zr: zr, budget: lim.zipBytes(), part: lim.partBytes(), byName: map[string]*zip.File{}}
	for _, zf := range zr.File {
		z.byName[zf.Name] = zf
	}
	return z, nil
}

// has reports whether the archive holds a part called name.
func (z *zipDoc) has(name string) bool { return z.byName[name] != nil }

// read inflates the part name and hands it to parse; a missing part, a
// bomb or a corrupt stream is a *FileError, and so is an error of parse.
func (z *zipDoc) read(name string, parse func(io.Reader) error) error {
	part := z.byName[name]
	if part == nil {
		return &FileError{Path: z.path, Reason: "not " + z.kind + ": " + name + " missing"}
	}
	limit := min(z.part, z.budget)
	if part.UncompressedSize64 > uint64(limit) {
		return &FileError{Path: z.path, Reason: fmt.Sprintf("document part too large: %s is %s, over the limit %s",
			name, bytesize.Format(int64(min(part.UncompressedSize64, 1<<62))), bytesize.Format(limit))}
	}
	if part.UncompressedSize64 > ratioFloor && part.UncompressedSize64/max(part.CompressedSize64, 1) > maxDocxRatio {
		return &FileError{Path: z.path, Reason: fmt.Sprintf("suspicious compression ratio %d:1 (zip bomb?)",
			part.UncompressedSize64/max(part.CompressedSize64, 1))}
	}
	rc, err := part.Open()
	if err != nil {
		return &FileError{Path: z.path, Reason: "cannot open document part " + name, Err: err}
	}
	defer rc.Close()
	// The declared size may lie; count what is really inflated.
	lr := &io.LimitedReader{R: rc, N: limit + 1}
	err = parse(lr)
	z.budget -= limit + 1 - lr.N
	if lr.N <= 0 {
		return &FileError{Path: z.path, Reason: fmt.Sprintf("document part too large: %s exceeds the limit %s", name, bytesize.Format(limit))}
	}
	var corrupt flate.CorruptInputError
	var fe *FileError
	var textCap *textCapError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &fe):
		return err
	case errors.As(err, &textCap):
		return &FileError{Path: z.path, Reason: textCap.Error()}
	case errors.Is(err, zip.ErrFormat), errors.Is(err, zip.ErrChecksum),
		errors.Is(err, io.ErrUnexpectedEOF), errors.As(err, &corrupt):
		return &FileError{Path: z.path, Reason: "corrupt document part " + name, Err: err}
	}
	return &FileError{Path: z.path, Reason: "malformed " + name, Err: err}
}

// xmlDecoder decodes a part, with the charsets the text reader knows.
func xmlDecoder(r io.Reader) *xml.Decoder {
	d := xml.NewDecoder(r)
	d.CharsetReader = func(label string, in io.Reader) (io.Reader, error) {
		return lookupCharset(label).NewDecoder().Reader(in), nil
	}
	return d
}

// xmlTokens calls fn for each token of d until EOF, failing past
// maxXMLDepth (docx.go). skip, when fn returns it for a StartElement, skips
// that element's content, still counting depth: the decoder keeps a stack
// entry per open element even while skipping.
func xmlTokens(d *xml.Decoder, fn func(xml.Token) (skip bool)) error {
	depth := 0
	for {
		tok, err := nextToken(d, &depth)
		if errors.Is(err, io.EOF) {
			return nil
		}
		if err != nil {
			return err
		}
		if _, start := tok.(xml.StartElement); !start {
			fn(tok)
			continue
		}
		if fn(tok) {
			if err := skipElement(d, depth); err != nil {
				return err
			}
			depth--
		}
	}
}

// skipElement reads past the end of the element open at depth, failing
// past maxXMLDepth.
func skipElement(d *xml.Decoder, depth int) error {
	for level := depth; depth >= level; {
		if _, err := nextToken(d, &depth); err != nil {
			return err
		}
	}
	return nil
}

// nextToken reads d's next token and moves depth past it, failing past
// maxXMLDepth.
func nextToken(d *xml.Decoder, depth *int) (xml.Token, error) {
	tok, err := d.Token()
	if err != nil {
		return nil, err
	}
	switch tok.(type) {
	case xml.StartElement:
		if *depth++; *depth > maxXMLDepth {
			return nil, errTooDeep
		}
	case xml.EndElement:
		*depth--
	}
	return tok, nil
}

// relTarget resolves a relationship target against the folder of the part
// that names it, as OOXML and EPUB paths are written.
func relTarget(from, target string) string {
	if strings.HasPrefix(target, "/") {
		return strings.TrimPrefix(path.Clean(target), "/")
	}
	return strings.TrimPrefix(path.Join(path.Dir(from), target), "/")
}

// attr is the value of the attribute called local, in any namespace.
func attr(t xml.StartElement, local string) string {
	for _, a := range t.Attr {
		if a.Name.Local == local {
			return a.Value
		}
	}
	return ""
}

// eachPart reads the parts named, in order, skipping names the archive
// lacks (a broken reference costs that part only).
func (z *zipDoc) eachPart(names []string, parse func(name string, r io.Reader) error) error {
	for _, name := range names {
		if !z.has(name) {
			continue
		}
		if err := z.read(name, func(r io.Reader) error { return parse(name, r) }); err != nil {
			return err
		}
	}
	return nil
}

// relID is the relationship id (r:id) of an element, not its plain id.
func relID(t xml.StartElement) string {
	for _, a := range t.Attr {
		if a.Name.Local == "id" && a.Name.Space != "" {
			return a.Value
		}
	}
	return ""
}

// Block structure shared by the office readers (docxBody's stacks).

func (b *docxBody) startParagraph(level int) {
	b.paras = append(b.paras, strings.Builder{})
	b.levels = append(b.levels, level)
}

func (b *docxBody) startTable() { b.tables = append(b.tables, nil) }

func (b *docxBody) startRow() {
	b.rows, b.cellReps, b.rowReps = append(b.rows, nil), append(b.cellReps, nil), append(b.rowReps, 1)
}

func (b *docxBody) startCell() {
	if n := len(b.rows); n > 0 {
		b.rows[n-1] = append(b.rows[n-1], "")
		b.cellReps[n-1] = append(b.cellReps[n-1], 1)
	}
}

// repeatRow and repeatCell set how often the open row, and its last cell,
// stand in the table (ODF's number-rows-repeated, number-columns-repeated).
func (b *docxBody) repeatRow(n int) {
	if r := len(b.rowReps); r > 0 {
		b.rowReps[r-1] = n
	}
}

func (b *docxBody) repeatCell(n int) {
	if r := len(b.cellReps); r > 0 && len(b.cellReps[r-1]) > 0 {
		b.cellReps[r-1][len(b.cellReps[r-1])-1] = n
	}
}
