package main

// End-to-end tests: the built binary over real stdio, with the real model
// (installed by make setup), FAISS and the sample documents.

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// indexTimeout bounds the wait for an initial index of the sample folder
// (model load plus a few dozen chunks) on a slow, busy CI machine.
const indexTimeout = 120 * time.Second

const testInst = "Search the sample docs.\nCite the path and page."

// startServer runs the binary as an MCP server on data and initializes it.
func startServer(t *testing.T, data string, extra ...string) *client.Client {
	t.Helper()
	return startServerEnv(t, nil, nil, data, extra...)
}

// startServerEnv is startServer with extra environment variables; check,
// if given, is handed the server's log when the test ends.
func startServerEnv(t *testing.T, env []string, check func(logs string), data string, extra ...string) *client.Client {
	t.Helper()
	args := append([]string{"--data-folder", data, "--title", "docs-" + filepath.Base(data),
		"--inst", testInst, "--log-level", "debug"}, extra...)
	return startCommandEnv(t, env, check, binary, args)
}

func startCommand(t *testing.T, command string, args []string) *client.Client {
	t.Helper()
	return startCommandEnv(t, nil, nil, command, args)
}

// startCommandEnv starts command as an MCP server and initializes it; env
// entries are added to this process's environment (by the transport).
func startCommandEnv(t *testing.T, env []string, check func(logs string), command string, args []string) *client.Client {
	t.Helper()
	c, _ := startCommandLogs(t, env, check, command, args)
	return c
}

// startCommandLogs is startCommandEnv that also returns the server's log
// as it is written.
func startCommandLogs(t *testing.T, env []string, check func(logs string), command string, args []string) (*client.Client, *testutil.SyncBuffer) {
	t.Helper()
	logs := &testutil.SyncBuffer{}
	c, err := client.NewStdioMCPClientWithOptions(command, env, args, transport.WithCommandStderrWriter(logs))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		c.Close()
		if check != nil {
			check(logs.String())
		}
		if t.Failed() {
			t.Logf("%s stderr:\n%s", filepath.Base(command), logs.String())
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	// The transport is already running; Client.Start also routes
	// notifications to OnNotification handlers.
	if err := c.Start(ctx); err != nil {
		t.Fatal(err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "e2e", Version: "0"}
	res, err := c.Initialize(ctx, init)
	if err != nil {
		t.Fatalf("initialize: %v", err)
	}
	if res.Instructions != testInst && command == binary {
		t.Errorf("instructions = %q", res.Instructions)
	}
	return c, logs
}

func callTool(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

func toolText(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// decode converts structuredContent (a generic map after JSON) into v.
func decode(t *testing.T, structured any, v any) {
	t.Helper()
	b, err := json.Marshal(structured)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("structuredContent %s: %v", b, err)
	}
}

func search(t *testing.T, c *client.Client, query string, topK int, threshold float64) []isearch.Result {
	t.Helper()
	return searchWith(t, c, map[string]any{"query": query, "top_k": topK, "score_threshold": threshold})
}

// searchWith calls the search tool with args and fails the test on any error.
func searchWith(t *testing.T, c *client.Client, args map[string]any) []isearch.Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	res, err := callTool(ctx, c, "search", args)
	if err != nil {
		t.Fatalf("search %v: %v", args, err)
	}
	if res.IsError {
		t.Fatalf("search %v: tool error %s", args, toolText(res))
	}
	var out mcpserver.ToolOutput
	decode(t, res.StructuredContent, &out)
	return out.Results
}

// waitForTop polls search until wantPath ranks first.
func waitForTop(t *testing.T, c *client.Client, query, wantPath string) []isearch.Result {
	t.Helper()
	deadline := time.Now().Add(indexTimeout)
	for {
		res := search(t, c, query, 5, 0.2)
		if len(res) > 0 && res[0].Path == wantPath {
			return res
		}
		if time.Now().After(deadline) {
			t.Fatalf("search %q never ranked %s first; last results %+v", query, wantPath, res)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

func reindex(t *testing.T, c *client.Client, args map[string]any) engine.ReindexResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	deadline := time.Now().Add(indexTimeout)
	for {
		res, err := callTool(ctx, c, "reindex", args)
		if err != nil {
			t.Fatalf("reindex: %v", err)
		}
		// The server's own initial reindex may still hold the lock.
		if res.IsError && strings.HasPrefix(toolText(res), "busy:") && time.Now().Before(deadline) {
			time.Sleep(300 * time.Millisecond)
			continue
		}
		if res.IsError {
			t.Fatalf("reindex: tool error %s", toolText(res))
		}
		var out engine.ReindexResult
		decode(t, res.StructuredContent, &out)
		return out
	}
}

// sampleQueries have one clearly right file each in testdata/sample.
var sampleQueries = []struct {
	query, path string
	pdf         bool
}{
	{"Redis connection pool exhausted after the TLS certificate rotation", "postmortem-checkout-outage.txt", false},
	{"how many weeks of paid parental leave do parents get", "employee-handbook-leave.docx", false},
	{"loader workers commit micro-batches together with log offsets for exactly-once delivery", "event-ingestion-design.pdf", true},
	{"promote a replica with patronictl during a manual database failover", "ops/database-failover-runbook.md", false},
	{"when will version 1 of the public REST API be switched off", "release-notes-2.4.txt", false},
	{"pick up the hardware security key at the front desk on your first day", "onboarding-guide.md", false},
}

// TestE2ESampleSearchUpdateDelete runs the product acceptance path over real
// stdio: search the sample folder, edit a file, delete one, search again.
func TestE2ESampleSearchUpdateDelete(t *testing.T) { eachBackend(t, testE2ESampleSearchUpdateDelete) }

func testE2ESampleSearchUpdateDelete(t *testing.T, b backend) {
	data := copySample(t)
	// Watching off: this test counts what explicit reindexes do.
	c := b.startServer(t, data, "--watch=false")

	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil || len(list.Tools) != 2 {
		t.Fatalf("tools/list: %v %v", list, err)
	}

	waitForTop(t, c, sampleQueries[0].query, sampleQueries[0].path)
	// A client that shows the model only the text block still sees the
	// answer to the leave question in the first passage.
	leave, err := callTool(context.Background(), c, "search", map[string]any{"query": sampleQueries[1].query})
	if err != nil || !strings.Contains(toolText(leave), "sixteen weeks") {
		t.Errorf("the text block of %q lacks %q: %v %s", sampleQueries[1].query, "sixteen weeks", err, toolText(leave))
	}
	for _, q := range sampleQueries {
		res := search(t, c, q.query, 3, 0.2)
		if len(res) == 0 || res[0].Path != q.path {
			t.Errorf("%q: top result %+v, want %s", q.query, res, q.path)
			continue
		}
		top := res[0]
		if top.Score <= 0.2 || top.Score > 1.0001 {
			t.Errorf("%q: score %v outside (0.2, 1]", q.query, top.Score)
		}
		if top.Snippet == "" || top.CharEnd <= top.CharStart || top.Mtime <= 0 || top.Ext != filepath.Ext(q.path) {
			t.Errorf("%q: incomplete result %+v", q.query, top)
		}
		// Chunks may span pages; a PDF hit must still name one.
		if q.pdf && (top.Page < 1 || top.Page > 3) {
			t.Errorf("%q: page %d, want 1-3", q.query, top.Page)
		}
		for i := 1; i < len(res); i++ {
			if res[i].Score > res[i-1].Score {
				t.Errorf("%q: results not sorted by score: %+v", q.query, res)
			}
		}
	}

	// Modify a file: the new text is found after a reindex.
	notes := filepath.Join(data, "release-notes-2.4.txt")
	f, err := os.OpenFile(notes, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	fmt.Fprintln(f, "\nKnown issue: the tangerine-colored export button crashes the app on tablets held upside down.")
	f.Close()
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(notes, later, later)
	r := reindex(t, c, map[string]any{})
	if r.FilesUpdated != 1 || r.FilesAdded != 0 || r.FilesRemoved != 0 {
		t.Errorf("after modify: %+v, want files_updated=1 only", r)
	}
	res := search(t, c, "the tangerine export button crashes on upside-down tablets", 3, 0.2)
	if len(res) == 0 || res[0].Path != "release-notes-2.4.txt" {
		t.Errorf("modified text not found first: %+v", res)
	}

	// Delete a file: its chunks are never returned again.
	if err := os.Remove(filepath.Join(data, "postmortem-checkout-outage.txt")); err != nil {
		t.Fatal(err)
	}
	r = reindex(t, c, map[string]any{})
	if r.FilesRemoved != 1 || r.FilesAdded != 0 || r.FilesUpdated != 0 {
		t.Errorf("after delete: %+v, want files_removed=1 only", r)
	}
	for _, q := range []string{sampleQueries[0].query, "thundering herd of TLS handshakes", "SEV-1 checkout outage postmortem"} {
		for _, hit := range search(t, c, q, 50, 0) {
			if hit.Path == "postmortem-checkout-outage.txt" {
				t.Errorf("%q: deleted file returned: %+v", q, hit)
			}
		}
	}
}

// TestE2EResources reads around a hit through resources over real stdio.
func TestE2EResources(t *testing.T) { eachBackend(t, testE2EResources) }

func testE2EResources(t *testing.T, b backend) {
	data := copySample(t)
	c := b.env().startServer(t, data) // the store by $MICRO_RAG_STORE
	q := sampleQueries[2]             // the PDF
	top := waitForTop(t, c, q.query, q.path)[0]
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	read := func(uri string) (string, error) {
		req := mcp.ReadResourceRequest{}
		req.Params.URI = uri
		res, err := c.ReadResource(ctx, req)
		if err != nil {
			return "", err
		}
		return res.Contents[0].(mcp.TextResourceContents).Text, nil
	}
	around, err := read(top.URI)
	if err != nil || !strings.Contains(collapse(around), collapse(top.Snippet)[:100]) {
		t.Fatalf("read %s: %v\n%s", top.URI, err, around)
	}
	doc, err := read(strings.Split(top.URI, "#")[0])
	if err != nil || !strings.Contains(doc, "--- page 3 ---") || !strings.Contains(collapse(doc), "exactly once within five minutes") {
		t.Fatalf("document: %v\n%s", err, doc)
	}
	list, err := c.ListResources(ctx, mcp.ListResourcesRequest{})
	if err != nil || len(list.Resources) != 6 {
		t.Fatalf("resources/list: %v %+v", err, list)
	}
	if _, err := read(strings.Replace(top.URI, "#chunk=", "#chunk=9", 1)); err == nil || !strings.Contains(err.Error(), "there is no chunk") {
		t.Errorf("bad chunk: %v", err)
	}
}

// TestE2EFirstRun: initialize and tools/list answer at once; a search right
// away returns (empty or not) without error; later searches find content.
func TestE2EFirstRun(t *testing.T) { eachBackend(t, testE2EFirstRun) }

func testE2EFirstRun(t *testing.T, b backend) {
	data := copySample(t)
	start := time.Now()
	c := b.startServer(t, data)
	if _, err := c.ListTools(context.Background(), mcp.ListToolsRequest{}); err != nil {
		t.Fatal(err)
	}
	t.Logf("initialize + tools/list answered after %v", time.Since(start))
	before := time.Now()
	res := search(t, c, sampleQueries[1].query, 5, 0.2)
	took := time.Since(before)
	t.Logf("first search: %d results after %v", len(res), took)
	// The engine waits up to 5 s for the model; allow slack for a loaded machine.
	if took > 15*time.Second {
		t.Errorf("first search took %v; it must give up waiting for the model after about 5 s", took)
	}
	waitForTop(t, c, sampleQueries[1].query, sampleQueries[1].path)
}

// TestE2ETwoInstances runs two servers on different folders at once.
func TestE2ETwoInstances(t *testing.T) { eachBackend(t, testE2ETwoInstances) }

func testE2ETwoInstances(t *testing.T, b backend) {
	docs := copySample(t)
	other := filepath.Join(t.TempDir(), "kitchen")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "sourdough.md"), []byte("# Sourdough\n\nFeed the starter twice a day with equal weights of rye flour and water. "+
		"Bake the loaf in a covered cast-iron pot at 250 degrees for twenty minutes, then uncover it.\n"), 0o644)
	os.WriteFile(filepath.Join(other, "tomatoes.txt"), []byte("Tomato seedlings go into the greenhouse in April. "+
		"Pinch out the side shoots every week and water at the base, never on the leaves.\n"), 0o644)

	var a, b2 *client.Client
	var wg sync.WaitGroup
	wg.Go(func() { a = b.startServer(t, docs) })
	wg.Go(func() { b2 = b.startServer(t, other) })
	wg.Wait()
	if t.Failed() {
		return
	}
	wg.Go(func() { waitForTop(t, a, sampleQueries[3].query, sampleQueries[3].path) })
	wg.Go(func() { waitForTop(t, b2, "how often should I feed the sourdough starter", "sourdough.md") })
	wg.Wait()
	for _, hit := range search(t, a, "feed the sourdough starter with rye flour", 50, 0) {
		if hit.Path == "sourdough.md" || hit.Path == "tomatoes.txt" {
			t.Errorf("instance A returned B's file %s", hit.Path)
		}
	}
	for _, hit := range search(t, b2, sampleQueries[3].query, 50, 0) {
		if !strings.HasPrefix(hit.Path, "sourdough") && !strings.HasPrefix(hit.Path, "tomatoes") {
			t.Errorf("instance B returned A's file %s", hit.Path)
		}
	}
}

// TestE2EBusyAcrossProcesses: while one process reindexes into an index
// folder, another process's reindex on that folder is refused as busy, and
// succeeds once the first process is gone.
func TestE2EBusyAcrossProcesses(t *testing.T) { eachBackend(t, testE2EBusyAcrossProcesses) }

func testE2EBusyAcrossProcesses(t *testing.T, b backend) {
	// Two data folders, one index: one index folder, or one schema.
	index := filepath.Join(t.TempDir(), "shared-index")
	b = b.schema("shared")
	big := bigFolder(t)
	logs := &testutil.SyncBuffer{}
	a := b.command("reindex", "--data-folder", big, "--index-folder", index)
	a.Stderr = logs
	a.Stdout = io.Discard
	if err := a.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- a.Wait() }()
	defer func() {
		a.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("reindex process stderr:\n%s", logs.String())
		}
	}()
	// Wait until process A reports progress, so it holds the lock.
	deadline := time.Now().Add(indexTimeout)
	for !strings.Contains(logs.String(), "reindex: ") {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("reindex process ended before reporting progress: %v", err)
		case <-time.After(100 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			t.Fatal("reindex process reported no progress")
		}
	}

	srv := b.startServer(t, copySample(t), "--index-folder", index)
	res, err := callTool(context.Background(), srv, "reindex", map[string]any{})
	if err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-exited:
		t.Fatalf("process A finished (%v) before B's reindex could be tested; make the big folder larger", err)
	default:
	}
	if !res.IsError || !strings.HasPrefix(toolText(res), "busy:") {
		t.Fatalf("reindex during another process's reindex: IsError=%v %q, want a busy error", res.IsError, toolText(res))
	}

	// Kill A: the kernel drops its lock with it, and B can reindex.
	a.Process.Kill()
	if err := <-exited; err == nil {
		t.Error("killed reindex process exited cleanly")
	}
	exited <- nil
	// A recorded its folder as the index's; B's is another folder, so B's
	// reindex is refused until the record is removed, as its message says.
	if err := os.Remove(filepath.Join(index, "data-folder.json")); err != nil {
		t.Fatal(err)
	}
	r := reindex(t, srv, map[string]any{})
	if r.ChunksTotal == 0 {
		t.Errorf("reindex after A exited: %+v", r)
	}
}

// sampleThenNotes starts a server without watching on a copy of the sample,
// waits for its first reindex, then copies the 200 notes of bigFolder into
// notes/, for the caller's explicit reindex to find.
func sampleThenNotes(t *testing.T, b backend) (data string, c *client.Client) {
	data = copySample(t)
	c = b.startServer(t, data, "--watch=false")
	waitForTop(t, c, sampleQueries[2].query, sampleQueries[2].path)
	reindex(t, c, map[string]any{}) // the initial reindex is over
	if err := os.CopyFS(filepath.Join(data, "notes"), os.DirFS(bigFolder(t))); err != nil {
		t.Fatal(err)
	}
	return data, c
}

// TestE2ECancelReindex cancels a long reindex from the client
// (notifications/cancelled); the previous index keeps answering.
func TestE2ECancelReindex(t *testing.T) { eachBackend(t, testE2ECancelReindex) }

func testE2ECancelReindex(t *testing.T, b backend) {
	data, c := sampleThenNotes(t, b)
	progressed := make(chan struct{}, 1)
	var progressCount int
	var mu sync.Mutex
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			progressCount++
			mu.Unlock()
			select {
			case progressed <- struct{}{}:
			default:
			}
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		select {
		case <-progressed:
		case <-time.After(20 * time.Second):
		}
		cancel()
	}()
	req := mcp.CallToolRequest{}
	req.Params.Name = "reindex"
	req.Params.Arguments = map[string]any{}
	req.Params.Meta = &mcp.Meta{ProgressToken: "cancel-me"}
	res, err := c.CallTool(ctx, req)
	if err == nil {
		t.Fatalf("reindex was not cancelled: %+v", res)
	}
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("reindex error %v, want context.Canceled", err)
	}
	mu.Lock()
	if progressCount == 0 {
		t.Error("no progress notification within 20 s of reindexing")
	}
	mu.Unlock()

	// The previous index answers. (The engine may have checkpointed part of
	// the cancelled run; that is allowed, a half-written index is not.)
	res2 := search(t, c, sampleQueries[2].query, 3, 0.2)
	if len(res2) == 0 || res2[0].Path != sampleQueries[2].path {
		t.Errorf("after cancel: %+v", res2)
	}
	// The lock was released: a reindex of one new file runs.
	os.WriteFile(filepath.Join(data, "after-cancel.md"), []byte("# After the cancel\n\nThe lock was released.\n"), 0o644)
	r := reindex(t, c, map[string]any{"path_glob": "after-cancel.md"})
	if r.FilesAdded != 1 {
		t.Errorf("reindex after cancel: %+v, want files_added=1", r)
	}
}

// TestE2EOffline runs a whole session with networking disabled (unshare -n):
// with the model cached, nothing needs the network. Local backend only:
// in its own network namespace the server cannot reach a PostgreSQL.
func TestE2EOffline(t *testing.T) {
	if _, err := exec.LookPath("unshare"); err != nil {
		t.Fatal("unshare (util-linux) is required: ", err)
	}
	probe := exec.Command("unshare", "-n", "true")
	if out, err := probe.CombinedOutput(); err != nil {
		t.Fatalf("unshare -n needs root or user namespaces: %v %s", err, out)
	}
	data := copySample(t)
	c := startCommand(t, "unshare", []string{"-n", binary, "--data-folder", data, "--title", "offline", "--inst", "x"})
	waitForTop(t, c, sampleQueries[4].query, sampleQueries[4].path)
}

// TestE2EStdoutIsProtocol speaks JSON-RPC to the binary directly and checks
// that every byte it writes to stdout is a JSON-RPC 2.0 message, with hostile
// files in the folder that the reindex must count as failed.
func TestE2EStdoutIsProtocol(t *testing.T) { eachBackend(t, testE2EStdoutIsProtocol) }

func testE2EStdoutIsProtocol(t *testing.T, b backend) {
	data := copySample(t)
	rng := rand.New(rand.NewPCG(7, 7))
	junk := make([]byte, 8192)
	for i := range junk {
		junk[i] = byte(rng.UintN(256))
	}
	os.WriteFile(filepath.Join(data, "random-bytes.txt"), junk, 0o644)
	os.WriteFile(filepath.Join(data, "corrupt.pdf"), append([]byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog"), junk[:2000]...), 0o644)
	os.WriteFile(filepath.Join(data, "not-really.docx"), []byte("This is plain text pretending to be a Word document.\n"), 0o644)

	// The store by $MICRO_RAG_STORE.
	s := b.env().startRaw(t, "--data-folder", data, "--title", "raw", "--inst", "raw\nsession", "--log-level", "debug")
	var init struct {
		Result struct {
			Instructions string `json:"instructions"`
		} `json:"result"`
	}
	if json.Unmarshal(s.initialize(`1`), &init); init.Result.Instructions != "raw\nsession" {
		t.Errorf("initialize result %+v", init)
	}
	s.call(`2`, "tools/list", nil)
	s.waitIndexed(sampleQueries[0].query, sampleQueries[0].path)
	rr := s.reindexTool(map[string]any{"force": true}, map[string]any{"progressToken": "p1"})
	if rr.FilesFailed != 3 {
		t.Errorf("files_failed = %d, want 3 (random bytes .txt, corrupt .pdf, text .docx): %+v", rr.FilesFailed, rr)
	}
	if rr.ChunksTotal == 0 {
		t.Errorf("reindex result %+v", rr)
	}
	s.close() // EOF ends the session; every stdout line must be JSON-RPC

	// Progress may trail the response, so look at the whole stream.
	progress := 0
	for _, line := range s.lines {
		var n map[string]any
		json.Unmarshal([]byte(line), &n)
		if n["method"] == "notifications/progress" {
			progress++
			p := n["params"].(map[string]any)
			if p["progressToken"] != "p1" || !strings.Contains(fmt.Sprint(p["message"]), "files") {
				t.Errorf("progress notification %v", p)
			}
		}
	}
	if progress == 0 {
		t.Error("no progress notification for a reindex with a progressToken")
	}
}

// TestPythonClient drives the server with the PyPI mcp SDK, an independent
// client implementation (installed by make setup-test).
func TestPythonClient(t *testing.T) { eachBackend(t, testPythonClient) }

func testPythonClient(t *testing.T, b backend) {
	py, err := exec.LookPath("python3")
	if err != nil {
		t.Fatal("python3 is required (make setup-test)")
	}
	if out, err := exec.Command(py, "-c", "import mcp").CombinedOutput(); err != nil {
		t.Fatalf("the Python mcp package is missing; run make setup-test: %s", out)
	}
	data := copySample(t)
	cmd := exec.Command(py, append([]string{"testdata/pyclient.py", binary, data, sampleQueries[3].query}, b.args()...)...)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("pyclient: %v\nstderr:\n%s", err, stderr.String())
	}
	var out struct {
		ServerName     string               `json:"server_name"`
		Instructions   string               `json:"instructions"`
		Tools          []string             `json:"tools"`
		SearchRequired []string             `json:"search_required"`
		Search         mcpserver.ToolOutput `json:"search"`
		Reindex        engine.ReindexResult `json:"reindex"`
		ReindexError   bool                 `json:"reindex_error"`
		BadTopKError   bool                 `json:"bad_top_k_error"`
		BadTopKText    string               `json:"bad_top_k_text"`
		Links          []string             `json:"links"`
		ReadURI        string               `json:"read_uri"`
		ReadText       string               `json:"read_text"`
		DocText        string               `json:"doc_text"`
		Listed         []string             `json:"listed"`
		Templates      []string             `json:"templates"`
		BadURIError    string               `json:"bad_uri_error"`
	}
	if err := json.Unmarshal(stdout.Bytes(), &out); err != nil {
		t.Fatalf("pyclient output %q: %v\nstderr:\n%s", stdout.String(), err, stderr.String())
	}
	if out.ServerName != "py-docs" || out.Instructions != "Answers from the team docs.\nCite paths." {
		t.Errorf("server info: %q %q", out.ServerName, out.Instructions)
	}
	if strings.Join(out.Tools, ",") != "reindex,search" || strings.Join(out.SearchRequired, ",") != "query" {
		t.Errorf("tools %v, search required %v", out.Tools, out.SearchRequired)
	}
	if len(out.Search.Results) == 0 || out.Search.Results[0].Path != sampleQueries[3].path {
		t.Errorf("search: %+v", out.Search)
	}
	if out.ReindexError || out.Reindex.ChunksTotal == 0 {
		t.Errorf("reindex: error=%v %+v", out.ReindexError, out.Reindex)
	}
	if !out.BadTopKError || !strings.Contains(out.BadTopKText, "top_k") {
		t.Errorf("top_k=99: error=%v %q", out.BadTopKError, out.BadTopKText)
	}
	if len(out.Links) != len(out.Search.Results) {
		t.Fatalf("%d resource links for %d results", len(out.Links), len(out.Search.Results))
	}
	for i, r := range out.Search.Results {
		if out.Links[i] != r.URI || !strings.HasPrefix(r.URI, "micro-rag://py-docs/") {
			t.Errorf("link %d %q, result uri %q", i, out.Links[i], r.URI)
		}
	}
	top := out.Search.Results[0]
	if out.ReadURI != top.URI || !strings.Contains(collapse(out.ReadText), collapse(top.Snippet)[:100]) {
		t.Errorf("read %s: %q does not hold the passage %q", out.ReadURI, out.ReadText, top.Snippet)
	}
	if !strings.Contains(out.DocText, "patronictl") || len(out.DocText) < len(out.ReadText) {
		t.Errorf("document text %q", out.DocText)
	}
	if len(out.Listed) != 6 || !slices.Contains(out.Listed, "ops/database-failover-runbook.md") || !slices.IsSorted(out.Listed) {
		t.Errorf("listed %v", out.Listed)
	}
	if strings.Join(out.Templates, " ") != "micro-rag://{title}/{+path} micro-rag://{title}/{+path}#chunk={chunk}" {
		t.Errorf("templates %v", out.Templates)
	}
	if !strings.Contains(out.BadURIError, `no document "no/such/file.md"`) {
		t.Errorf("bad URI: %q", out.BadURIError)
	}
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestE2EProgressTotalAndETA reindexes 200 notes plus the sample's PDF,
// DOCX and Markdown files with a progress token: the chunk total in the
// messages never decreases, is marked "~" while it is projected and ends
// at the result's count, and an ETA shows while chunks are left. progress
// and total count chunks: the value rises with every notification and is
// never more than one batch ahead of the chunks done that its message
// states, nor more than one behind; total, once given, is the run's count
// and stays; the last notification is total/total.
func TestE2EProgressTotalAndETA(t *testing.T) { eachBackend(t, testE2EProgressTotalAndETA) }

func testE2EProgressTotalAndETA(t *testing.T, b backend) {
	_, c := sampleThenNotes(t, b)
	var mu sync.Mutex
	var msgs []string
	var values []float64
	var totals []any
	c.OnNotification(func(n mcp.JSONRPCNotification) {
		if n.Method == "notifications/progress" {
			mu.Lock()
			msgs = append(msgs, fmt.Sprint(n.Params.AdditionalFields["message"]))
			v, _ := n.Params.AdditionalFields["progress"].(float64)
			values = append(values, v)
			totals = append(totals, n.Params.AdditionalFields["total"])
			mu.Unlock()
		}
	})
	req := mcp.CallToolRequest{}
	req.Params.Name = "reindex"
	req.Params.Arguments = map[string]any{"force": true}
	req.Params.Meta = &mcp.Meta{ProgressToken: "totals"}
	res, err := c.CallTool(context.Background(), req)
	if err != nil || res.IsError {
		t.Fatalf("reindex: %v %s", err, toolText(res))
	}
	var rr engine.ReindexResult
	decode(t, res.StructuredContent, &rr)
	// Notifications may trail the answer: wait for the last, at the total.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(50 * time.Millisecond) {
		mu.Lock()
		end := len(values) > 0 && values[len(values)-1] == float64(rr.ChunksTotal)
		mu.Unlock()
		if end {
			break
		}
	}
	mu.Lock()
	defer mu.Unlock()
	re := regexp.MustCompile(`chunks (\d+)/(~?)(\d+)(, ETA \S+)?`)
	last, projected, etas := 0, 0, 0
	for i, m := range msgs {
		g := re.FindStringSubmatch(m)
		if g == nil {
			t.Fatalf("progress message %q", m)
		}
		total, _ := strconv.Atoi(g[3])
		if total < last {
			t.Errorf("message %d of %d: chunk total %d after %d: %q", i+1, len(msgs), total, last, msgs)
		}
		last = total
		if g[2] == "~" {
			projected++
		}
		if g[4] != "" {
			etas++
		}
	}
	if len(msgs) < 5 || projected == 0 || etas == 0 {
		t.Errorf("%d messages, %d with a projected total, %d with an ETA: %q", len(msgs), projected, etas, msgs)
	}
	if last != rr.ChunksTotal {
		t.Errorf("last message's total %d, the run counted %d chunks", last, rr.ChunksTotal)
	}
	const batch = 64 // embed.DefaultMaxBatch
	var given any
	for i, m := range msgs {
		g := re.FindStringSubmatch(m)
		done, _ := strconv.Atoi(g[1])
		if v := values[i]; v > float64(done+batch) || v < float64(done-1) || i > 0 && v <= values[i-1] {
			t.Errorf("notification %d: progress %v (before: %v) with message %q", i+1, v, values[max(i-1, 0)], m)
		}
		if totals[i] != nil && totals[i] != float64(rr.ChunksTotal) || given != nil && totals[i] != given {
			t.Errorf("notification %d: total %v after %v; the run counted %d chunks", i+1, totals[i], given, rr.ChunksTotal)
		}
		given = totals[i]
	}
	if n := len(values); values[n-1] != float64(rr.ChunksTotal) || totals[n-1] != float64(rr.ChunksTotal) {
		t.Errorf("last notification %v/%v, want %d/%d", values[n-1], totals[n-1], rr.ChunksTotal, rr.ChunksTotal)
	}
}
