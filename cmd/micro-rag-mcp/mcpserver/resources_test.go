package mcpserver_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/index/storetest"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

const title = "team docs" // a space, so URIs must encode it

// One PostgreSQL server for the tests that run on every backend
// (storetest.Each).
func TestMain(m *testing.M) { pgtest.Main(m) }

// longDoc is numbered sentences, so a test can tell which part of the text
// a passage holds and whether any is repeated.
func longDoc(topic string, sentences int) string {
	var b strings.Builder
	for i := range sentences {
		fmt.Fprintf(&b, "Sentence number %d of the %s describes step %d of the migration.", i, topic, i)
		if i%6 == 5 {
			b.WriteString("\n\n")
		} else {
			b.WriteByte(' ')
		}
	}
	return b.String()
}

// indexedServer indexes the sample documents plus generated ones with the
// real model and connects an in-process client to a server over them.
func indexedServer(t *testing.T, store index.StoreURL) (*client.Client, string) {
	t.Helper()
	data := filepath.Join(t.TempDir(), "docs")
	if err := os.CopyFS(data, os.DirFS("../../../testdata/sample")); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"long.txt":            longDoc("long design record", 120),
		"huge.txt":            longDoc("appendix of warehouse tariffs", 1300), // over DocumentCharLimit
		"odd names/a#b%c.txt": "A file whose name holds a hash sign, a percent sign and a space: the walrus sings at noon.",
	}
	for name, text := range files {
		p := filepath.Join(data, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return serveOn(t, data, store), data
}

// serveOn indexes data into store and serves it to an in-process client.
func serveOn(t *testing.T, data string, store index.StoreURL) *client.Client {
	t.Helper()
	eng, err := engine.New(engine.Config{DataFolder: data, IndexFolder: filepath.Join(t.TempDir(), "index"), Store: store, NoInitialReindex: true,
		Logger: slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	eng.Start(ctx)
	t.Cleanup(func() { eng.Close() })
	if _, err := eng.Reindex(ctx, engine.ReindexRequest{}, nil); err != nil {
		t.Fatal(err)
	}
	s := mcpserver.New(eng, mcpserver.Options{Name: title, Version: "1", Instructions: "i", DocumentsPerPage: 3})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "test", Version: "0"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatal(err)
	}
	if res.Capabilities.Resources == nil {
		t.Fatal("resources capability not advertised")
	}
	return c
}

// Identical files in two folders come back as one result listing both.
func TestSearchMergesCopies(t *testing.T) { storetest.Each(t, testSearchMergesCopies) }

func testSearchMergesCopies(t *testing.T, store index.StoreURL) {
	guide := "Parental leave is twenty weeks at full pay, taken in up to three blocks before the child turns two."
	c := serveOn(t, writeFiles(t, map[string]string{
		"hr/leave.md":           guide,
		"archive/leave-copy.md": guide,
		"expenses.md":           "Expenses are filed within thirty days with the receipt attached.",
	}), store)
	res, out := callSearch(t, c, map[string]any{"query": "how long is parental leave", "score_threshold": 0.0})
	var paths []string
	for _, r := range out.Results {
		paths = append(paths, r.Path)
	}
	if len(out.Results) != 2 || len(out.Results[0].Paths) != 2 {
		t.Fatalf("results %v, first lists %v: want the copies as one result listing both", paths, out.Results[0].Paths)
	}
	both := strings.Join(out.Results[0].Paths, ",")
	if both != "hr/leave.md,archive/leave-copy.md" && both != "archive/leave-copy.md,hr/leave.md" || out.Results[0].Paths[0] != out.Results[0].Path {
		t.Errorf("paths %q, path %q", both, out.Results[0].Path)
	}
	text := res.Content[0].(mcp.TextContent).Text
	if !strings.Contains(text, "same text in") || strings.Count(text, "twenty weeks") != 1 {
		t.Errorf("text does not name the copy once: %q", text)
	}
}

func callSearch(t *testing.T, c *client.Client, args map[string]any) (*mcp.CallToolResult, mcpserver.ToolOutput) {
	t.Helper()
	req := mcp.CallToolRequest{}
	req.Params.Name = "search"
	req.Params.Arguments = args
	res, err := c.CallTool(context.Background(), req)
	if err != nil {
		t.Fatal(err)
	}
	if res.IsError {
		t.Fatalf("search %v: %v", args, res.Content)
	}
	var out mcpserver.ToolOutput
	decodeJSON(t, res.StructuredContent, &out)
	return res, out
}

func readResource(c *client.Client, uri string) (mcp.TextResourceContents, error) {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := c.ReadResource(context.Background(), req)
	if err != nil {
		return mcp.TextResourceContents{}, err
	}
	if len(res.Contents) != 1 {
		return mcp.TextResourceContents{}, fmt.Errorf("%d contents", len(res.Contents))
	}
	tc, ok := res.Contents[0].(mcp.TextResourceContents)
	if !ok {
		return mcp.TextResourceContents{}, fmt.Errorf("contents %T", res.Contents[0])
	}
	return tc, nil
}

func TestResources(t *testing.T) { storetest.Each(t, testResources) }

func testResources(t *testing.T, store index.StoreURL) {
	c, _ := indexedServer(t, store)
	ctx := context.Background()

	// Search: every result has a uri, and a resource_link block names it.
	res, out := callSearch(t, c, map[string]any{"query": "sentence number 64 of the long design record", "top_k": 3})
	if len(out.Results) == 0 || out.Results[0].Path != "long.txt" {
		t.Fatalf("results = %+v", out.Results)
	}
	// Chunks of long.txt rank close together: merged, no sentence twice.
	checkNumbered(t, out.Results[0].Snippet)
	var links []mcp.ResourceLink
	for _, content := range res.Content {
		if l, ok := content.(mcp.ResourceLink); ok {
			links = append(links, l)
		}
	}
	if len(links) != len(out.Results) {
		t.Fatalf("%d resource links for %d results", len(links), len(out.Results))
	}
	for i, r := range out.Results {
		want := fmt.Sprintf("micro-rag://team%%20docs/%s#chunk=%d", strings.ReplaceAll(r.Path, " ", "%20"), r.ChunkIndex)
		if r.URI != want && !strings.Contains(r.Path, "#") {
			t.Errorf("result %d uri %q, want %q", i, r.URI, want)
		}
		if links[i].URI != r.URI || links[i].Name != r.Path || links[i].Type != "resource_link" {
			t.Errorf("link %d = %+v for %s", i, links[i], r.URI)
		}
	}

	// A chunk URI reads the chunk with one neighbour on each side.
	top := out.Results[0]
	got, err := readResource(c, top.URI)
	if err != nil {
		t.Fatal(err)
	}
	first, last := got.Meta["first_chunk"], got.Meta["last_chunk"]
	if first != float64(max(0, top.ChunkIndex-1)) || last != float64(top.ChunkIndex+1) || got.URI != top.URI || got.MIMEType != "text/plain" {
		t.Errorf("chunk %d read as chunks %v-%v (%s, %s)", top.ChunkIndex, first, last, got.URI, got.MIMEType)
	}
	if !strings.Contains(got.Text, "Sentence number 64 of the long design record") {
		t.Errorf("chunk read lacks the sentence searched for:\n%s", got.Text)
	}
	checkNumbered(t, got.Text)
	// Three chunks of about 800 new characters each, overlaps once.
	if n := len([]rune(got.Text)); n < 1500 || n > 3000 {
		t.Errorf("chunk with neighbours is %d runes", n)
	}

	// A document URI reads the whole document, each sentence once.
	doc, err := readResource(c, "micro-rag://team%20docs/long.txt")
	if err != nil {
		t.Fatal(err)
	}
	if want := strings.TrimSpace(longDoc("long design record", 120)); doc.Text != want || doc.Meta["truncated"] != false {
		t.Errorf("long.txt read back differs (truncated=%v):\n%q", doc.Meta["truncated"], doc.Text)
	}

	// PDF pages are marked.
	pdf, err := readResource(c, "micro-rag://team%20docs/event-ingestion-design.pdf")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"--- page 1 ---", "--- page 2 ---", "--- page 3 ---", "exactly once within five minutes"} {
		if !strings.Contains(pdf.Text, want) {
			t.Errorf("PDF text lacks %q:\n%s", want, pdf.Text)
		}
	}

	// A huge document is cut with a note naming the next chunk to read.
	huge, err := readResource(c, "micro-rag://team%20docs/huge.txt")
	if err != nil {
		t.Fatal(err)
	}
	if n := len([]rune(huge.Text)); n > search.DocumentCharLimit+400 || n < search.DocumentCharLimit-1200 || huge.Meta["truncated"] != true {
		t.Errorf("huge.txt: %d runes, truncated=%v", n, huge.Meta["truncated"])
	}
	next := fmt.Sprintf("micro-rag://team%%20docs/huge.txt#chunk=%v", huge.Meta["last_chunk"].(float64)+1)
	if !strings.Contains(huge.Text, "[Cut: the document is longer than 100000 characters") || !strings.Contains(huge.Text, next) {
		t.Errorf("cut note missing or wrong (want %s):\n%s", next, huge.Text[len(huge.Text)-400:])
	}
	if _, err := readResource(c, next); err != nil {
		t.Errorf("the chunk the note names: %v", err)
	}

	// A name with "#", "%" and a space round-trips through its URI.
	_, odd := callSearch(t, c, map[string]any{"query": "the walrus sings at noon", "top_k": 1})
	if len(odd.Results) != 1 || odd.Results[0].Path != "odd names/a#b%c.txt" {
		t.Fatalf("odd name: %+v", odd.Results)
	}
	if u := odd.Results[0].URI; u != "micro-rag://team%20docs/odd%20names/a%23b%25c.txt#chunk=0" {
		t.Errorf("odd uri %q", u)
	} else if got, err := readResource(c, u); err != nil || !strings.Contains(got.Text, "walrus") {
		t.Errorf("read %s: %v %q", u, err, got.Text)
	}

	// Outside the index: clear errors.
	for uri, want := range map[string]string{
		"micro-rag://team%20docs/nope.md":                  `no document "nope.md" in this index`,
		"micro-rag://team%20docs/long.txt#chunk=999":       "there is no chunk 999",
		"micro-rag://team%20docs/long.txt#chunk=-1":        "#chunk=N with N a chunk number",
		"micro-rag://team%20docs/long.txt#chunk=x":         "#chunk=N with N a chunk number",
		"micro-rag://team%20docs/long.txt#page=2":          "#chunk=N with N a chunk number",
		"micro-rag://other/long.txt":                       `belongs to another index: this server is "team docs"`,
		"micro-rag://team%20docs/../etc/passwd":            `without empty, "." or ".." parts`,
		"micro-rag://team%20docs/ops/..%2F..%2Fetc/passwd": `without empty, "." or ".." parts`,
		"micro-rag://team%20docs/%2Fetc/passwd":            `without empty, "." or ".." parts`,
		"micro-rag://team%20docs/long.txt%zz":              "long.txt%zz", // no template matches
	} {
		_, err := readResource(c, uri)
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%s: err = %v, want %q", uri, err, want)
		}
	}
	if _, err := readResource(c, "file:///etc/passwd"); err == nil {
		t.Error("file URI read")
	}

	// Templates are listed; documents are listed in pages of three.
	tl, err := c.ListResourceTemplates(ctx, mcp.ListResourceTemplatesRequest{})
	if err != nil || len(tl.ResourceTemplates) != 2 {
		t.Fatalf("templates: %+v %v", tl, err)
	}
	var listed []string
	cursor := mcp.Cursor("")
	for pages := 0; ; pages++ {
		req := mcp.ListResourcesRequest{}
		req.Params.Cursor = cursor
		page, err := c.ListResourcesByPage(ctx, req)
		if err != nil {
			t.Fatal(err)
		}
		if len(page.Resources) > 3 || pages > 10 {
			t.Fatalf("page of %d", len(page.Resources))
		}
		for _, r := range page.Resources {
			if r.URI != mcpserver.DocumentURI(title, r.Name) || r.MIMEType != "text/plain" {
				t.Errorf("listed %+v", r)
			}
			listed = append(listed, r.Name)
		}
		if cursor = page.NextCursor; cursor == "" {
			break
		}
	}
	if all, err := c.ListResources(ctx, mcp.ListResourcesRequest{}); err != nil || len(all.Resources) != len(listed) {
		t.Errorf("following the cursors: %d documents, %v", len(all.Resources), err)
	}

	checkBadQueries(t, c)
	want := "employee-handbook-leave.docx,event-ingestion-design.pdf,huge.txt,long.txt,odd names/a#b%c.txt,onboarding-guide.md,ops/database-failover-runbook.md,postmortem-checkout-outage.txt,release-notes-2.4.txt"
	if strings.Join(listed, ",") != want {
		t.Errorf("listed %v", listed)
	}
}

// checkBadQueries: odd queries are answered, never a tool error (the
// engine's own test covers every mode).
func checkBadQueries(t *testing.T, c *client.Client) {
	t.Helper()
	for _, q := range []string{"the of and", "?!;:--", strings.Repeat("migration step ", 700)[:10000], "東京の天気", "🙂🚀🔥", "\u200b"} {
		res, out := callSearch(t, c, map[string]any{"query": q})
		text := res.Content[0].(mcp.TextContent).Text
		if len(out.Results) > 5 || len(text) > 20000 {
			t.Errorf("%.20q: %d results, %d bytes of text", q, len(out.Results), len(text))
		}
	}
}

// checkNumbered checks that numbered sentences appear in order, each once.
func checkNumbered(t *testing.T, text string) {
	t.Helper()
	prev := -1
	for _, part := range strings.Split(text, "Sentence number ")[1:] {
		var n int
		if _, err := fmt.Sscanf(part, "%d", &n); err != nil {
			continue
		}
		if prev >= 0 && n != prev+1 {
			t.Errorf("sentence %d follows %d", n, prev)
		}
		prev = n
	}
}

func TestURIRoundTrip(t *testing.T) {
	for _, path := range []string{"a.md", "dir/sub/file name.pdf", "caf\xe9.txt", "日本/データ.md", "a#b?c%d&e+f.txt", "x/y z/[1].docx"} {
		for _, ti := range []string{"docs", "team docs", "ünï/cödé"} {
			uri := mcpserver.ChunkURI(ti, path, 7)
			if strings.ContainsAny(uri[len("micro-rag://"):], " ?[]") || strings.Count(uri, "#") != 1 {
				t.Errorf("%q not escaped: %s", path, uri)
			}
			ref, err := mcpserver.ParseURI(ti, uri)
			if err != nil || ref.Path != path || ref.Chunk != 7 {
				t.Errorf("%s: %+v %v", uri, ref, err)
			}
			ref, err = mcpserver.ParseURI(ti, mcpserver.DocumentURI(ti, path))
			if err != nil || ref.Path != path || ref.Chunk != -1 {
				t.Errorf("document %q: %+v %v", path, ref, err)
			}
		}
	}
}

// decodeJSON converts structuredContent (a generic value after JSON) into v.
func decodeJSON(t *testing.T, structured any, v any) {
	t.Helper()
	b, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

// Copies of a long document, whose passages are cut to the default cap,
// are cut alike and still come back as one result listing both.
func TestSearchMergesCappedCopies(t *testing.T) {
	var b strings.Builder
	places := []string{"harbour", "meadow", "lantern", "orchard", "granite", "willow", "copper", "thistle"}
	for i := range 40 {
		fmt.Fprintf(&b, "The travel office books every journey to the %s depot by train and keeps the receipts in the %s archive. ",
			places[i%len(places)], places[(i*3+1)%len(places)])
		if i == 20 {
			b.WriteString("Parental leave is twenty weeks at full pay, taken in up to three blocks. ")
		}
	}
	c := serveOn(t, writeFiles(t, map[string]string{"hr/policy.md": b.String(), "archive/policy-copy.md": b.String()}), index.StoreURL{})
	_, out := callSearch(t, c, map[string]any{"query": "how long is parental leave", "score_threshold": 0.0})
	var merged *search.Result
	for i, r := range out.Results {
		if n := utf8.RuneCountInString(r.Snippet); n > search.PassageCap {
			t.Errorf("%s: passage of %d characters, over the cap %d", r.Path, n, search.PassageCap)
		}
		if len(r.Paths) == 2 && strings.Contains(r.Snippet, "twenty weeks") {
			merged = &out.Results[i]
		}
	}
	if merged == nil {
		t.Fatalf("no result lists both copies with the answer: %+v", out.Results)
	}
	if whole := b.Len(); len(merged.Chunks) < 4 || merged.CharEnd-merged.CharStart >= whole {
		t.Errorf("passage of chunks %v spans %d..%d of %d: not a cut long passage", merged.Chunks, merged.CharStart, merged.CharEnd, whole)
	}
	t.Logf("chunks %v span %d..%d of %d; snippet %d", merged.Chunks, merged.CharStart, merged.CharEnd, b.Len(), utf8.RuneCountInString(merged.Snippet))
}

// writeFiles writes files (path relative to the folder → text) into a new
// folder and returns it.
func writeFiles(t *testing.T, files map[string]string) string {
	t.Helper()
	data := t.TempDir()
	for name, text := range files {
		p := filepath.Join(data, name)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return data
}

// Names with control characters (a newline, an escape sequence) are listed
// by resources/list escaped, as the search text and its resource links
// show them, and their URIs read the document.
func TestResourceNamesEscaped(t *testing.T) {
	data := t.TempDir()
	paths := []string{"new\nline.md", "esc\x1b[31mred.md"}
	for i, p := range paths {
		text := fmt.Sprintf("Document %d: the heron waits in the shallows for fish.", i)
		if err := os.WriteFile(filepath.Join(data, p), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	c := serveOn(t, data, index.StoreURL{})
	list, err := c.ListResources(context.Background(), mcp.ListResourcesRequest{})
	if err != nil || len(list.Resources) != len(paths) {
		t.Fatalf("resources/list: %+v, %v", list, err)
	}
	for _, r := range list.Resources {
		ref, err := mcpserver.ParseURI(title, r.URI)
		if err != nil {
			t.Fatal(err)
		}
		if r.Name != term.Visible(ref.Path) || strings.ContainsAny(r.Name, "\n\x1b") {
			t.Errorf("resource %s named %q, want %q", r.URI, r.Name, term.Visible(ref.Path))
		}
		if got, err := readResource(c, r.URI); err != nil || !strings.Contains(got.Text, "heron") {
			t.Errorf("%s reads %+v, %v", r.URI, got, err)
		}
	}
}
