package mcpserver

import (
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/micro-rag/micro-rag-mcp/engine"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

// URIScheme starts every resource URI: micro-rag://TITLE/PATH names an
// indexed document, micro-rag://TITLE/PATH#chunk=N one of its chunks. TITLE
// (the server's --title) and each PATH segment are percent-encoded, every
// byte outside A-Z a-z 0-9 - . _ ~, so file names that are not UTF-8
// survive the round trip.
const URIScheme = "micro-rag://"

// DocumentsPerPage is how many documents one resources/list page holds
// unless Options says otherwise.
const DocumentsPerPage = 500

// ChunkNeighbours is how many chunks on each side a chunk read includes.
const ChunkNeighbours = 1

const textMIME = "text/plain"

// DocumentURI names a document of the index served under title.
func DocumentURI(title, path string) string {
	segs := strings.Split(path, "/")
	for i, s := range segs {
		segs[i] = escape(s)
	}
	return URIScheme + escape(title) + "/" + strings.Join(segs, "/")
}

// ChunkURI names chunk i (from 0) of a document.
func ChunkURI(title, path string, i int) string {
	return DocumentURI(title, path) + "#chunk=" + strconv.Itoa(i)
}

// escape percent-encodes every byte but the URI's unreserved characters.
func escape(s string) string {
	const hex = "0123456789ABCDEF"
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_' || c == '~' {
			b.WriteByte(c)
			continue
		}
		b.WriteByte('%')
		b.WriteByte(hex[c>>4])
		b.WriteByte(hex[c&15])
	}
	return b.String()
}

// unescape decodes %XX escapes; any other byte stands for itself.
func unescape(s string) (string, error) {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '%' {
			b.WriteByte(s[i])
			continue
		}
		if i+2 >= len(s) {
			return "", fmt.Errorf("bad percent escape at the end of %q", s)
		}
		v, err := strconv.ParseUint(s[i+1:i+3], 16, 8)
		if err != nil {
			return "", fmt.Errorf("bad percent escape %q", s[i:i+3])
		}
		b.WriteByte(byte(v))
		i += 2
	}
	return b.String(), nil
}

// uriByteOK reports whether c may stand unescaped in a resource URI after
// the scheme: what the resource templates match ({title} takes only
// unreserved characters and escapes; {+path} and the fragment also the
// reserved ones), so that a URI they would not match is refused with the
// reason rather than with mcp-go's "handler not found".
func uriByteOK(c byte, reserved bool) bool {
	switch {
	case 'a' <= c && c <= 'z', 'A' <= c && c <= 'Z', '0' <= c && c <= '9', strings.IndexByte("-._~%", c) >= 0:
		return true
	case reserved:
		return strings.IndexByte(":/?#[]@!$&'()*+,;=", c) >= 0
	}
	return false
}

// checkURIBytes refuses a URI (rest is what follows the scheme) holding a
// byte that must be percent-encoded, such as a space, naming it and the
// URI to send instead.
func checkURIBytes(uri, rest string) error {
	host, _, _ := strings.Cut(rest, "/")
	bad := -1
	var fixed strings.Builder
	fixed.WriteString(URIScheme)
	for i := 0; i < len(rest); i++ {
		if c := rest[i]; uriByteOK(c, i >= len(host)) {
			fixed.WriteByte(c)
			continue
		}
		if bad < 0 {
			bad = i
		}
		fixed.WriteString(escape(rest[i : i+1]))
	}
	if bad < 0 {
		return nil
	}
	what := fmt.Sprintf("the character %q", rest[bad])
	switch c := rest[bad]; {
	case c == ' ':
		what = "a space"
	case c >= 0x80:
		what = "a non-ASCII character"
	}
	return fmt.Errorf("%q holds %s, which a URI must percent-encode (%%XX for each byte); send %s", uri, what, fixed.String())
}

// ResourceRef is a parsed resource URI.
type ResourceRef struct {
	Path  string // relative to the data folder, "/" separated
	Chunk int    // -1 for the whole document
}

// ParseURI checks that uri names a document or chunk of the index served
// under title and splits it. Its errors are meant for the client.
func ParseURI(title, uri string) (ResourceRef, error) {
	rest, ok := strings.CutPrefix(uri, URIScheme)
	if !ok {
		return ResourceRef{}, fmt.Errorf("%q is not a %s URI", uri, URIScheme)
	}
	if err := checkURIBytes(uri, rest); err != nil {
		return ResourceRef{}, err
	}
	host, rest, ok := strings.Cut(rest, "/")
	if !ok || rest == "" {
		return ResourceRef{}, fmt.Errorf("%q names no document: expected %sTITLE/PATH", uri, URIScheme)
	}
	if h, err := unescape(host); err != nil || h != title {
		return ResourceRef{}, fmt.Errorf("%q belongs to another index: this server is %q (%s%s/...)", uri, title, URIScheme, escape(title))
	}
	rawPath, frag, hasFrag := strings.Cut(rest, "#")
	ref := ResourceRef{Chunk: -1}
	segs := strings.Split(rawPath, "/")
	for i, s := range segs {
		u, err := unescape(s)
		if err != nil {
			return ResourceRef{}, fmt.Errorf("%q: %v", uri, err)
		}
		if u == "" || u == "." || u == ".." || strings.Contains(u, "/") {
			return ResourceRef{}, fmt.Errorf("%q: the path must be a file inside the data folder, relative, without empty, \".\" or \"..\" parts", uri)
		}
		segs[i] = u
	}
	ref.Path = strings.Join(segs, "/")
	if hasFrag {
		n, ok := strings.CutPrefix(frag, "chunk=")
		i, err := strconv.Atoi(n)
		if !ok || err != nil || i < 0 || n != strconv.Itoa(i) {
			return ResourceRef{}, fmt.Errorf("%q: the fragment must be #chunk=N with N a chunk number from 0", uri)
		}
		ref.Chunk = i
	}
	return ref, nil
}

// resources serves the index's documents and chunks as MCP resources.
type resources struct {
	eng     Engine
	title   string
	perPage int
	log     *slog.Logger
}

func (rs *resources) register(s *server.MCPServer, hooks *server.Hooks) {
	base := URIScheme + "{title}/{+path}"
	doc := mcp.NewResourceTemplate(base, "document",
		mcp.WithTemplateTitle("Indexed document"),
		mcp.WithTemplateDescription(fmt.Sprintf("The whole extracted text of an indexed document, PDF pages marked "+
			"\"--- page N ---\". Text past %d characters is left out with a note saying which chunk to read next.", isearch.DocumentCharLimit)),
		mcp.WithTemplateMIMEType(textMIME))
	chunk := mcp.NewResourceTemplate(base+"#chunk={chunk}", "passage",
		mcp.WithTemplateTitle("Passage with its neighbours"),
		mcp.WithTemplateDescription("Chunk N (from 0) of an indexed document together with the chunk before and the chunk after it, "+
			"overlaps written once. Search results link to these."),
		mcp.WithTemplateMIMEType(textMIME))
	// Both templates match a chunk URI (the path template takes "#"), so one
	// handler serves both and parses the URI itself.
	s.AddResourceTemplate(doc, rs.read)
	s.AddResourceTemplate(chunk, rs.read)
	// mcp-go lists only resources registered one by one; the documents
	// change with every reindex, so the listing is filled from the index
	// after mcp-go's own (empty) one. The cursor has mcp-go's format (the
	// last name, base64) so its own pass accepts it.
	hooks.AddAfterListResources(rs.list)
}

func (rs *resources) read(ctx context.Context, req mcp.ReadResourceRequest) ([]mcp.ResourceContents, error) {
	uri := req.Params.URI
	ref, err := ParseURI(rs.title, uri)
	if err != nil {
		return nil, errors.New(invalidURIPrefix + err.Error())
	}
	var t isearch.Text
	if ref.Chunk >= 0 {
		t, err = rs.eng.ReadChunk(ctx, ref.Path, ref.Chunk, ChunkNeighbours)
	} else {
		t, err = rs.eng.ReadDocument(ctx, ref.Path)
	}
	switch {
	case errors.Is(err, isearch.ErrNotIndexed):
		return nil, fmt.Errorf(notFoundPrefix+"%q: no document %q in this index (resources/list lists them)", uri, ref.Path)
	case errors.Is(err, isearch.ErrNoChunk):
		// The file shrank since a search named the chunk: not found, as a
		// removed file is, not an internal error.
		return nil, fmt.Errorf(notFoundPrefix+"%q: %w", uri, err)
	case err != nil:
		return nil, fmt.Errorf("%q: %w", uri, err)
	}
	text := t.Text
	if t.Truncated {
		text += fmt.Sprintf("\n\n[Cut: the document is longer than %d characters. This shows chunks 0-%d of %d; read %s and the chunks after it for the rest.]",
			isearch.DocumentCharLimit, t.LastChunk, t.Chunks, ChunkURI(rs.title, t.Path, t.LastChunk+1))
	}
	meta := map[string]any{
		"path": t.Path, "chunks": t.Chunks, "first_chunk": t.FirstChunk, "last_chunk": t.LastChunk,
		"char_start": t.CharStart, "char_end": t.CharEnd, "truncated": t.Truncated,
	}
	return []mcp.ResourceContents{mcp.TextResourceContents{Meta: meta, URI: uri, MIMEType: textMIME, Text: text}}, nil
}

func (rs *resources) list(ctx context.Context, _ any, req *mcp.ListResourcesRequest, res *mcp.ListResourcesResult) {
	if res == nil {
		return
	}
	after := ""
	if c := string(req.Params.Cursor); c != "" {
		b, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			return // mcp-go has already refused it
		}
		after = string(b)
	}
	docs, more, err := rs.eng.Documents(ctx, after, rs.perPage)
	if err != nil {
		rs.log.Warn("resources/list", "err", err)
		return
	}
	res.Resources = make([]mcp.Resource, 0, len(docs))
	for _, d := range docs {
		// The name reaches the client's display as the search text's
		// names do: control characters escaped (the URI names it exactly).
		r := mcp.NewResource(DocumentURI(rs.title, d.Path), term.Visible(d.Path),
			mcp.WithResourceDescription(strings.TrimPrefix(d.Ext, ".")+" document, "+engine.Counted(d.Chunks, "chunk")),
			mcp.WithMIMEType(textMIME),
			mcp.WithLastModified(time.Unix(0, int64(d.Mtime*1e9)).UTC().Format(time.RFC3339)))
		res.Resources = append(res.Resources, r)
	}
	res.NextCursor = ""
	if more {
		res.NextCursor = mcp.Cursor(base64.StdEncoding.EncodeToString([]byte(docs[len(docs)-1].Path)))
	}
}
