package main

// The hardening battery: attacks on the built binary from the outside, one
// test per probe, so that none of the defects found regresses.

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// rawSession speaks JSON-RPC to the binary line by line, without an MCP
// library in between, and checks on close that stdout carried nothing but
// JSON-RPC 2.0 messages.
type rawSession struct {
	t     *testing.T
	cmd   *exec.Cmd
	stdin io.WriteCloser
	logs  *testutil.SyncBuffer

	mu      sync.Mutex
	cond    *sync.Cond
	lines   []string                   // every stdout line, in order
	byID    map[string]json.RawMessage // answers by the raw bytes of their id
	eof     bool
	readErr error
}

// startRaw starts the server with args.
func startRaw(t *testing.T, args ...string) *rawSession {
	t.Helper()
	return startRawCmd(t, exec.Command(binary, args...))
}

// startRawCmd starts cmd, a server prepared by the caller.
func startRawCmd(t *testing.T, cmd *exec.Cmd) *rawSession {
	t.Helper()
	s := &rawSession{t: t, logs: &testutil.SyncBuffer{}, byID: map[string]json.RawMessage{}}
	s.cond = sync.NewCond(&s.mu)
	s.cmd = cmd
	s.cmd.Stderr = s.logs
	var err error
	if s.stdin, err = s.cmd.StdinPipe(); err != nil {
		t.Fatal(err)
	}
	stdout, err := s.cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := s.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go s.read(stdout)
	t.Cleanup(func() {
		s.cmd.Process.Kill()
		s.cmd.Wait()
		if t.Failed() {
			t.Logf("server stderr:\n%s", s.logs.String())
		}
	})
	return s
}

func (s *rawSession) read(stdout io.Reader) {
	r := bufio.NewReaderSize(stdout, 1<<20)
	for {
		line, err := r.ReadString('\n')
		if line != "" {
			line = strings.TrimSuffix(line, "\n")
			var m struct {
				ID json.RawMessage `json:"id"`
			}
			s.mu.Lock()
			s.lines = append(s.lines, line)
			if json.Unmarshal([]byte(line), &m) == nil && m.ID != nil {
				s.byID[string(m.ID)] = json.RawMessage(line)
			}
			s.cond.Broadcast()
			s.mu.Unlock()
		}
		if err != nil {
			s.mu.Lock()
			s.eof = true
			if err != io.EOF {
				s.readErr = err
			}
			s.cond.Broadcast()
			s.mu.Unlock()
			return
		}
	}
}

// send writes one line; it appends the newline.
func (s *rawSession) send(line string) {
	s.t.Helper()
	if _, err := io.WriteString(s.stdin, line+"\n"); err != nil {
		s.t.Fatalf("writing to the server: %v", err)
	}
}

// call sends a request whose id is given as raw JSON and waits for its answer.
func (s *rawSession) call(id, method string, params any) json.RawMessage {
	s.t.Helper()
	msg := map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": method}
	if params != nil {
		msg["params"] = params
	}
	b, err := json.Marshal(msg)
	if err != nil {
		s.t.Fatal(err)
	}
	s.send(string(b))
	return s.await(id)
}

// await waits for the answer whose id is exactly the raw JSON id and takes it.
func (s *rawSession) await(id string) json.RawMessage {
	s.t.Helper()
	deadline := time.Now().Add(indexTimeout)
	timer := time.AfterFunc(indexTimeout, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for {
		if m, ok := s.byID[id]; ok {
			delete(s.byID, id)
			return m
		}
		if s.eof || time.Now().After(deadline) {
			s.t.Fatalf("no answer with id %s (eof=%v)", id, s.eof)
		}
		s.cond.Wait()
	}
}

// initialize runs the MCP handshake.
func (s *rawSession) initialize(id string) json.RawMessage {
	s.t.Helper()
	res := s.call(id, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "battery", "version": "0"}})
	s.send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return res
}

// tool calls a tool and returns its result object. meta, when given, is
// the request's _meta.
func (s *rawSession) tool(id, name string, args map[string]any, meta ...map[string]any) map[string]any {
	s.t.Helper()
	var m struct {
		Result map[string]any `json:"result"`
		Error  any            `json:"error"`
	}
	params := map[string]any{"name": name, "arguments": args}
	if len(meta) > 0 {
		params["_meta"] = meta[0]
	}
	raw := s.call(id, "tools/call", params)
	if err := json.Unmarshal(raw, &m); err != nil || m.Result == nil {
		s.t.Fatalf("tools/call %s: %s", name, raw)
	}
	return m.Result
}

// close ends the session with EOF on stdin, waits for a clean exit and
// checks that every stdout line was a JSON-RPC 2.0 message.
func (s *rawSession) close() {
	s.t.Helper()
	s.stdin.Close()
	done := make(chan error, 1)
	go func() { done <- s.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			s.t.Errorf("server exit after EOF: %v", err)
		}
	case <-time.After(30 * time.Second):
		s.cmd.Process.Kill()
		s.t.Fatal("server did not exit after stdin closed")
	}
	s.checkStdout()
}

func (s *rawSession) checkStdout() {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readErr != nil {
		s.t.Errorf("reading stdout: %v", s.readErr)
	}
	for i, line := range s.lines {
		var m map[string]json.RawMessage
		if err := json.Unmarshal([]byte(line), &m); err != nil {
			s.t.Errorf("stdout line %d is not JSON: %.200q", i+1, line)
			continue
		}
		_, hasID := m["id"]
		_, hasMethod := m["method"]
		if string(m["jsonrpc"]) != `"2.0"` || (!hasID && !hasMethod) {
			s.t.Errorf("stdout line %d is not a JSON-RPC 2.0 message: %.200q", i+1, line)
		}
	}
}

func serverArgs(data string, extra ...string) []string {
	return append([]string{"--data-folder", data, "--title", "battery", "--inst", "battery", "--log-level", "debug"}, extra...)
}

// TestBatteryJSONRPCWire: ids come back byte for byte, whatever their size;
// an over-long or malformed line gets an error and the session goes on.
// Local backend only: the framing never reaches the store.
func TestBatteryJSONRPCWire(t *testing.T) {
	s := startRaw(t, serverArgs(copySample(t))...)
	s.initialize(`9007199254740993`) // 2^53+1
	for _, id := range []string{`123456789012345678901234567890`, `-7`, `2.5`, `"x-1"`, `"micro-rag#1"`} {
		var m struct {
			ID json.RawMessage `json:"id"`
		}
		json.Unmarshal(s.call(id, "ping", nil), &m)
		if string(m.ID) != id {
			t.Errorf("ping id %s answered with id %s", id, m.ID)
		}
	}
	if ans := s.call(`18446744073709551617`, "tools/list", nil); !strings.Contains(string(ans), `"search"`) {
		t.Errorf("tools/list: %.300s", ans)
	}

	// 12 MiB in one line: refused with id null, never read whole.
	pad := strings.Repeat("a", 12<<20)
	s.send(`{"jsonrpc":"2.0","id":5,"method":"ping","params":{"pad":"` + pad + `"}}`)
	var e struct {
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	json.Unmarshal(s.await("null"), &e)
	if e.Error.Code != -32600 || !strings.Contains(e.Error.Message, "4194304") {
		t.Errorf("over-long line: %+v", e)
	}
	s.send(`{"jsonrpc":"2.0","id":6,"method":"ping"`) // malformed
	json.Unmarshal(s.await("null"), &e)
	if e.Error.Code != -32700 {
		t.Errorf("malformed line: %+v", e)
	}
	for _, id := range []string{`true`, `[1]`, `{}`} { // not an id JSON-RPC allows
		s.send(`{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}`)
		json.Unmarshal(s.await("null"), &e)
		if e.Error.Code != -32600 {
			t.Errorf("id %s: %+v", id, e)
		}
	}
	if ans := s.call(`7`, "ping", nil); !strings.Contains(string(ans), `"result"`) {
		t.Errorf("ping after bad input: %s", ans)
	}
	s.close()
}

// tree lists every path under dir with its size and mode, to show that a
// command changed nothing.
func tree(t *testing.T, dir string) string {
	t.Helper()
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			out = append(out, p+" "+err.Error())
			return nil
		}
		fi, _ := d.Info()
		b, _ := os.ReadFile(p)
		out = append(out, fmt.Sprintf("%s %v %d %x", p, fi.Mode(), fi.Size(), b))
		return nil
	})
	sort.Strings(out)
	return strings.Join(out, "\n")
}

// TestBatteryIndexFolder: the index never overwrites or swallows the user's
// files, and read-only commands create nothing. Local backend only: it is
// about the index folder on disk.
func TestBatteryIndexFolder(t *testing.T) {
	root := t.TempDir()
	data := filepath.Join(root, "docs")
	if err := os.CopyFS(data, os.DirFS("../../testdata/sample")); err != nil {
		t.Fatal(err)
	}
	// The user's own files under the names the index uses.
	for _, name := range []string{"files.json", "version", "manifest.jsonl", "faiss.index"} {
		os.WriteFile(filepath.Join(data, name+".txt"), []byte("user notes "+name), 0o644)
		os.WriteFile(filepath.Join(data, name), []byte("user file "+name), 0o644)
	}
	other := filepath.Join(root, "other")
	os.MkdirAll(other, 0o755)
	os.WriteFile(filepath.Join(other, "holiday.jpg"), []byte("not an index"), 0o644)
	before := tree(t, root)

	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"reindex into the data folder", []string{"reindex", "--data-folder", data, "--index-folder", data}, "is the data folder"},
		{"server on the data folder", serverArgs(data, "--index-folder", data), "is the data folder"},
		{"status with the index over the data folder", []string{"status", "--data-folder", data, "--index-folder", data + "/."}, "is the data folder"},
		{"reindex into a parent", []string{"reindex", "--data-folder", data, "--index-folder", root}, "contains the data folder"},
		{"reindex into a folder of other files", []string{"reindex", "--data-folder", data, "--index-folder", other}, "holds no micro-rag-mcp index"},
	} {
		code, stdout, stderr := runBinary(t, tc.args...)
		if code != 1 || stdout != "" || !strings.Contains(stderr, tc.want) {
			t.Errorf("%s: exit %d, stdout %q, stderr %q; want exit 1 saying %q", tc.name, code, stdout, stderr, tc.want)
		}
	}
	// Read-only commands on a folder never indexed create nothing.
	if code, stdout, stderr := runBinary(t, "search", "--data-folder", data, "parental leave"); code != 1 || stdout != "No passages matched \"parental leave\".\n" || !strings.Contains(stderr, "no passages matched") {
		t.Errorf("search on a folder never indexed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, stdout, stderr := runBinary(t, "status", "--data-folder", data); code != 0 || !strings.Contains(stdout, "files:") {
		t.Errorf("status on a folder never indexed: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if after := tree(t, root); after != before {
		t.Errorf("refused and read-only commands changed the disk:\nbefore:\n%s\nafter:\n%s", before, after)
	}

	// A user folder named index is the user's data: the default index is
	// refused with a hint, an index elsewhere indexes it.
	os.MkdirAll(filepath.Join(data, "index"), 0o755)
	os.WriteFile(filepath.Join(data, "index", "tide-report.txt"), []byte("Quarterly report of the harbour tide gauges: readings drifted by four centimetres."), 0o644)
	before = tree(t, data)
	code, _, stderr := runBinary(t, "reindex", "--data-folder", data)
	if code != 1 || !strings.Contains(stderr, "--index-folder") {
		t.Errorf("default index over a user folder named index: exit %d, %s", code, stderr)
	}
	idx := filepath.Join(root, "idx")
	if code, _, stderr := runBinary(t, "reindex", "--data-folder", data, "--index-folder", idx); code != 0 {
		t.Fatalf("reindex with the index elsewhere: exit %d\n%s", code, stderr)
	}
	code, stdout, stderr := runBinary(t, "search", "--data-folder", data, "--index-folder", idx, "--json", "harbour tide gauge readings drifted")
	var out struct {
		Results []struct {
			Path string `json:"path"`
		} `json:"results"`
	}
	if json.Unmarshal([]byte(stdout), &out); code != 0 || len(out.Results) == 0 || out.Results[0].Path != "index/tide-report.txt" {
		t.Errorf("user folder named index not searchable: exit %d %s %s", code, stdout, stderr)
	}
	if after := tree(t, data); after != before {
		t.Errorf("the data folder changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
}

// waitLine waits until some stdout line satisfies match.
func (s *rawSession) waitLine(what string, match func(string) bool) {
	s.t.Helper()
	deadline := time.Now().Add(indexTimeout)
	timer := time.AfterFunc(indexTimeout, func() { s.mu.Lock(); s.cond.Broadcast(); s.mu.Unlock() })
	defer timer.Stop()
	s.mu.Lock()
	defer s.mu.Unlock()
	for seen := 0; ; {
		for ; seen < len(s.lines); seen++ {
			if match(s.lines[seen]) {
				return
			}
		}
		if s.eof || time.Now().After(deadline) {
			s.t.Fatalf("no stdout line showing %s (eof=%v)", what, s.eof)
		}
		s.cond.Wait()
	}
}

// searchPaths runs the search tool and returns the result paths, failing on
// a tool error.
func (s *rawSession) searchPaths(id, query string) []string {
	s.t.Helper()
	res := s.tool(id, "search", map[string]any{"query": query})
	if res["isError"] == true {
		s.t.Fatalf("search %q: %v", query, res["content"])
	}
	var out struct {
		Results []isearch.Result `json:"results"`
	}
	decode(s.t, res["structuredContent"], &out)
	var paths []string
	for _, r := range out.Results {
		paths = append(paths, r.Path)
	}
	return paths
}

// waitIndexed polls search until query ranks path first.
func (s *rawSession) waitIndexed(query, path string) {
	s.t.Helper()
	deadline := time.Now().Add(indexTimeout)
	for i := 0; ; i++ {
		if p := s.searchPaths(fmt.Sprintf(`"wait-%d"`, i), query); len(p) > 0 && p[0] == path {
			return
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("%q never ranked %s first", query, path)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// reindexTool calls reindex, retrying while the server's own reindex runs.
func (s *rawSession) reindexTool(args map[string]any, meta ...map[string]any) engine.ReindexResult {
	s.t.Helper()
	deadline := time.Now().Add(indexTimeout)
	for i := 0; ; i++ {
		res := s.tool(fmt.Sprintf(`"reindex-%d"`, i), "reindex", args, meta...)
		if res["isError"] == true {
			if strings.Contains(fmt.Sprint(res["content"]), "busy:") && time.Now().Before(deadline) {
				time.Sleep(300 * time.Millisecond)
				continue
			}
			s.t.Fatalf("reindex: %v", res["content"])
		}
		var out engine.ReindexResult
		decode(s.t, res["structuredContent"], &out)
		return out
	}
}

// addNotes copies the first n notes of the shared big folder (4 chunks
// each) into dir/notes.
func addNotes(t *testing.T, dir string, n int) {
	t.Helper()
	notes := filepath.Join(dir, "notes")
	os.MkdirAll(notes, 0o755)
	for i := range n {
		name := fmt.Sprintf("note-%03d.txt", i)
		b, err := os.ReadFile(filepath.Join(bigFolder(t), name))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(notes, name), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// TestBatteryStopMidReindex: SIGTERM or EOF on stdin during a reindex ends
// the server promptly and cleanly; the index it leaves opens without a
// rebuild and completes.
func TestBatteryStopMidReindex(t *testing.T) { eachBackend(t, testBatteryStopMidReindex) }

func testBatteryStopMidReindex(t *testing.T, b backend) {
	for _, how := range []string{"SIGTERM", "EOF"} {
		t.Run(how, func(t *testing.T) {
			data := copySample(t)
			addNotes(t, data, 40)
			s := b.startRaw(t, serverArgs(data)...)
			s.initialize(`1`)
			s.waitIndexed(sampleQueries[0].query, sampleQueries[0].path)
			s.reindexTool(map[string]any{}) // the initial reindex is over
			// A forced reindex, stopped once it has embedded something.
			s.send(`{"jsonrpc":"2.0","id":"force","method":"tools/call","params":{"name":"reindex","arguments":{"force":true},"_meta":{"progressToken":"f"}}}`)
			s.waitLine("embedding progress", func(l string) bool {
				return strings.Contains(l, `"notifications/progress"`) && !strings.Contains(l, "chunks 0/")
			})
			start := time.Now()
			if how == "SIGTERM" {
				s.cmd.Process.Signal(syscall.SIGTERM)
			}
			s.close() // EOF, then a clean exit within 30 s
			t.Logf("%s: exited %v after the signal", how, time.Since(start).Round(time.Millisecond))

			s2 := b.startRaw(t, serverArgs(data)...)
			s2.initialize(`1`)
			r := s2.reindexTool(map[string]any{})
			if r.FilesFailed != 0 || r.ChunksTotal == 0 {
				t.Errorf("reindex after %s: %+v", how, r)
			}
			for i, q := range sampleQueries {
				if p := s2.searchPaths(fmt.Sprint(100+i), q.query); len(p) == 0 || p[0] != q.path {
					t.Errorf("after %s, %q finds %v, want %s first", how, q.query, p, q.path)
				}
			}
			s2.close()
			if logs := s2.logs.String(); strings.Contains(logs, "disagree") || strings.Contains(logs, "rebuilding") {
				t.Errorf("the index left by %s was rebuilt:\n%s", how, logs)
			}
		})
	}
}

// TestBatteryConcurrentSearches: 100 searches sent at once while a forced
// reindex runs are all answered from the previous snapshot.
func TestBatteryConcurrentSearches(t *testing.T) { eachBackend(t, testBatteryConcurrentSearches) }

func testBatteryConcurrentSearches(t *testing.T, b backend) {
	s := b.startRaw(t, serverArgs(copySample(t))...)
	s.initialize(`1`)
	s.waitIndexed(sampleQueries[0].query, sampleQueries[0].path)
	s.reindexTool(map[string]any{}) // the initial reindex is over

	call := func(id, name string, args map[string]any) string {
		b, _ := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": json.RawMessage(id), "method": "tools/call",
			"params": map[string]any{"name": name, "arguments": args}})
		return string(b)
	}
	var batch []string
	// The reindex's progress token is a number no float64 holds.
	const token = `123456789012345678901234567891`
	batch = append(batch, `{"jsonrpc":"2.0","id":"force","method":"tools/call","params":{"name":"reindex","arguments":{"force":true},"_meta":{"progressToken":`+token+`}}}`)
	for i := range 100 {
		q := sampleQueries[i%len(sampleQueries)]
		batch = append(batch, call(fmt.Sprint(1000+i), "search", map[string]any{"query": q.query, "top_k": 3}))
	}
	s.send(strings.Join(batch, "\n"))
	for i := range 100 {
		var m struct {
			Result struct {
				IsError           bool                 `json:"isError"`
				StructuredContent mcpserver.ToolOutput `json:"structuredContent"`
			} `json:"result"`
		}
		raw := s.await(fmt.Sprint(1000 + i))
		if err := json.Unmarshal(raw, &m); err != nil || m.Result.IsError {
			t.Errorf("search %d: %s", i, raw)
			continue
		}
		want := sampleQueries[i%len(sampleQueries)].path
		if r := m.Result.StructuredContent.Results; len(r) == 0 || r[0].Path != want {
			t.Errorf("search %d during the reindex: %+v, want %s first", i, r, want)
		}
	}
	var m struct {
		Result struct {
			IsError           bool                 `json:"isError"`
			StructuredContent engine.ReindexResult `json:"structuredContent"`
		} `json:"result"`
	}
	if raw := s.await(`"force"`); json.Unmarshal(raw, &m) != nil || m.Result.IsError ||
		m.Result.StructuredContent.ChunksEmbedded != m.Result.StructuredContent.ChunksTotal {
		t.Errorf("forced reindex beside the searches: %s", raw)
	}
	s.close()
	progress := 0
	for _, l := range s.lines {
		if strings.Contains(l, `"notifications/progress"`) {
			progress++
			if !strings.Contains(l, `"progressToken":`+token) {
				t.Errorf("progress notification with another token: %s", l)
			}
		}
	}
	if progress == 0 {
		t.Error("no progress notification for the forced reindex")
	}
}

// TestBatterySpecialFiles: FIFOs, sockets and device nodes under indexed
// names, directly or through links, never stall or fail a reindex.
func TestBatterySpecialFiles(t *testing.T) { eachBackend(t, testBatterySpecialFiles) }

func testBatterySpecialFiles(t *testing.T, b backend) {
	data := copySample(t)
	if err := syscall.Mkfifo(filepath.Join(data, "pipe.txt"), 0o644); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("unix", filepath.Join(data, "sock.md"))
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	if err := syscall.Mknod(filepath.Join(data, "null.txt"), syscall.S_IFCHR|0o644, 1<<8|3); err != nil { // /dev/null: major 1, minor 3
		t.Fatalf("mknod (the test runs as root in CI): %v", err)
	}
	// Rule files are read during the walk: a FIFO under their name must
	// not stall it either. It is no rule file, so its folder is left out.
	if err := syscall.Mkfifo(filepath.Join(data, "ops", ".micro-rag-ignore"), 0o644); err != nil {
		t.Fatal(err)
	}
	os.Symlink("pipe.txt", filepath.Join(data, "link-to-pipe.md"))
	os.Symlink("/dev/zero", filepath.Join(data, "zero.txt"))
	os.Symlink("/dev/stdin", filepath.Join(data, "stdin.txt"))

	s := b.startRaw(t, serverArgs(data)...)
	s.initialize(`1`)
	s.waitIndexed(sampleQueries[1].query, sampleQueries[1].path)
	r := s.reindexTool(map[string]any{"force": true})
	if r.ChunksTotal == 0 || r.FilesAdded != 0 || r.FilesFailed != 1 {
		t.Errorf("forced reindex with special files: %+v, want one failed (the FIFO rule file)", r)
	}
	for _, p := range s.searchPaths(`"s"`, "pipe socket device") {
		if strings.Contains(p, "pipe") || strings.Contains(p, "sock") || strings.Contains(p, "null") || strings.Contains(p, "zero") {
			t.Errorf("special file indexed: %s", p)
		}
	}
	for _, p := range s.searchPaths(`"ops"`, sampleQueries[3].query) {
		if strings.HasPrefix(p, "ops/") {
			t.Errorf("%s served though its folder's rule file is a FIFO", p)
		}
	}
	s.close()
}

// TestBatteryDiskFull: a reindex that fills the index's file system fails
// with the reason; the previous index keeps answering, and once there is
// room again the next reindex completes. Local backend only (the index
// folder's file system); TestBatteryConnectionLost is its counterpart.
func TestBatteryDiskFull(t *testing.T) {
	mnt := t.TempDir()
	if out, err := exec.Command("mount", "-t", "tmpfs", "-o", "size=256k", "tmpfs", mnt).CombinedOutput(); err != nil {
		t.Fatalf("this test needs to mount a small tmpfs (root, as in CI); mount failed: %v %s", err, out)
	}
	t.Cleanup(func() {
		if out, err := exec.Command("umount", mnt).CombinedOutput(); err != nil {
			t.Errorf("umount %s: %v %s", mnt, err, out)
		}
	})
	data := copySample(t)
	idx := filepath.Join(mnt, "index")
	// Watching off: the added notes must wait for the explicit reindex.
	s := startRaw(t, serverArgs(data, "--index-folder", idx, "--watch=false")...)
	s.initialize(`1`)
	s.waitIndexed(sampleQueries[3].query, sampleQueries[3].path)
	s.reindexTool(map[string]any{})

	addNotes(t, data, 60) // 240 chunks: 360 KiB of vectors alone
	res := s.tool(`"full"`, "reindex", map[string]any{})
	if res["isError"] != true || !strings.Contains(strings.ToLower(fmt.Sprint(res["content"])), "no space left") {
		t.Fatalf("reindex on a full disk: %v", res)
	}
	for i, q := range sampleQueries {
		if p := s.searchPaths(fmt.Sprint(200+i), q.query); len(p) == 0 || p[0] != q.path {
			t.Errorf("after the failed reindex, %q finds %v, want %s first", q.query, p, q.path)
		}
	}
	// The failed run left no uncommitted manifest tail, and status says it failed.
	var commit struct {
		ManifestBytes int64 `json:"manifest_bytes"`
	}
	if b, err := os.ReadFile(filepath.Join(idx, "commit.json")); err != nil || json.Unmarshal(b, &commit) != nil {
		t.Fatalf("commit.json: %v", err)
	}
	if fi, err := os.Stat(filepath.Join(idx, "manifest.jsonl")); err != nil || fi.Size() != commit.ManifestBytes {
		t.Errorf("manifest.jsonl after the failed run: %v, committed %d bytes", fi.Size(), commit.ManifestBytes)
	}
	_, st, _ := statusJSON(t, backend{}, "--data-folder", data, "--index-folder", idx)
	if !strings.Contains(string(st["last_run_error"]), "no space left") {
		t.Errorf("status last_run_error: %s", st["last_run_error"])
	}
	// Room again: the same reindex completes.
	if out, err := exec.Command("mount", "-o", "remount,size=64m", mnt).CombinedOutput(); err != nil {
		t.Fatalf("remount: %v %s", err, out)
	}
	if r := s.reindexTool(map[string]any{}); r.FilesAdded != 60 || r.FilesFailed != 0 {
		t.Errorf("reindex with room again: %+v", r)
	}
	if _, st, _ = statusJSON(t, backend{}, "--data-folder", data, "--index-folder", idx); string(st["last_run_error"]) != `""` {
		t.Errorf("status last_run_error after a good run: %s", st["last_run_error"])
	}
	s.close()
}

// TestBatterySymlinkSwap races forced reindexes against a goroutine that
// swaps a link between a file inside the data folder and one outside:
// the outside text must never reach the index or a result.
func TestBatterySymlinkSwap(t *testing.T) { eachBackend(t, testBatterySymlinkSwap) }

func testBatterySymlinkSwap(t *testing.T, b backend) {
	const marker = "QZX-OUTSIDE-4471"
	root := t.TempDir()
	data, outside, idx := filepath.Join(root, "docs"), filepath.Join(root, "private"), filepath.Join(root, "idx")
	os.MkdirAll(data, 0o755)
	os.MkdirAll(outside, 0o755)
	inside := filepath.Join(data, "lighthouse.md")
	os.WriteFile(inside, []byte("# Lighthouse\n\nThe keeper logs the lamp hours and the fog signal every night.\n"), 0o644)
	secret := filepath.Join(outside, "vault.md")
	os.WriteFile(secret, []byte("The vault combination is "+marker+", known to two people only.\n"), 0o644)
	link := filepath.Join(data, "swap.md")
	targets := []string{inside, secret, "lighthouse.md", "../private/vault.md"}
	if err := os.Symlink(inside, link); err != nil {
		t.Fatal(err)
	}
	stop := make(chan struct{})
	var swaps int
	var wg sync.WaitGroup
	wg.Go(func() {
		tmp := filepath.Join(data, ".swap.tmp")
		for i := 0; ; i++ {
			select {
			case <-stop:
				return
			default:
			}
			os.Remove(tmp)
			if os.Symlink(targets[i%len(targets)], tmp) == nil && os.Rename(tmp, link) == nil {
				swaps++
			}
		}
	})
	s := b.startRaw(t, serverArgs(data, "--index-folder", idx)...)
	s.initialize(`1`)
	const runs = 200
	failed := 0
	for range runs {
		failed += s.reindexTool(map[string]any{"force": true}).FilesFailed
	}
	close(stop)
	wg.Wait()
	t.Logf("%d forced reindexes, %d swaps, %d opens refused", runs, swaps, failed)
	res := s.tool(`"final"`, "search", map[string]any{"query": "vault combination known to two people", "top_k": 10, "score_threshold": 0})
	if strings.Contains(fmt.Sprint(res), marker) {
		t.Errorf("outside text in a search result: %v", res)
	}
	s.close()
	filepath.WalkDir(idx, func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			if b, _ := os.ReadFile(p); strings.Contains(string(b), marker) {
				t.Errorf("outside text in the index file %s", p)
			}
		}
		return nil
	})
	if b.postgres() && len(b.holding(t, "keeper logs the lamp")) == 0 {
		t.Error("the inside text is not in the database: the search for the outside text proves nothing")
	}
	if where := b.holding(t, marker); len(where) > 0 {
		t.Errorf("outside text in the database: %v", where)
	}
	if swaps < runs {
		t.Errorf("only %d swaps during %d reindexes: the race was not exercised", swaps, runs)
	}
}

// TestBatteryNames: Latin-1 and other non-UTF-8 names are found under a
// path that names the file on disk, never collide, and are not embedded
// again at the next start.
func TestBatteryNames(t *testing.T) { eachBackend(t, testBatteryNames) }

func testBatteryNames(t *testing.T, b backend) {
	data := filepath.Join(t.TempDir(), "docs")
	os.MkdirAll(filepath.Join(data, "r\xe9sum\xe9s"), 0o755)
	files := map[string]string{
		"caf\xe9.md":                 "The espresso machine descales itself every Sunday at dawn.",
		"caf\xc3\xa9.md":             "Oat milk is stored in the second refrigerator by the window.",
		"\xff-notes.md":              "Glacier ice cores record volcanic ash from ancient eruptions.",
		"\xfe-notes.md":              "Migrating cranes rest at the marsh for three weeks in October.",
		"100%41 budget.md":           "The bicycle repair fund grew by forty percent this quarter.",
		"r\xe9sum\xe9s/\xe9t\xe9.md": "Summer interns translate the harbour charts into Portuguese.",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(data, name), []byte(text+"\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	s := b.startRaw(t, serverArgs(data)...)
	s.initialize(`1`)
	s.reindexTool(map[string]any{})
	for name, text := range files {
		paths := s.searchPaths(`"n"`, text)
		if len(paths) == 0 {
			t.Errorf("%q not found", name)
			continue
		}
		if !utf8.ValidString(paths[0]) || schema.DecodePath(paths[0]) != name {
			t.Errorf("%q found as %q, which decodes to %q", name, paths[0], schema.DecodePath(paths[0]))
		}
		if _, err := os.Stat(filepath.Join(data, schema.DecodePath(paths[0]))); err != nil {
			t.Errorf("returned path %q names no file: %v", paths[0], err)
		}
	}
	s.close()
	// The next run finds nothing to do.
	code, stdout, stderr := b.run(t, "reindex", "--data-folder", data, "--json")
	var r engine.ReindexResult
	if json.Unmarshal([]byte(stdout), &r); code != 0 || r.FilesAdded+r.FilesUpdated+r.FilesRemoved+r.ChunksEmbedded != 0 || r.ChunksTotal != len(files) {
		t.Errorf("second run: exit %d %+v\n%s", code, r, stderr)
	}
}

// asNobody prepares the server to run as uid/gid 65534 on a tree it can
// reach: root's DAC override would hide every permission error. It
// returns the command and the folder to put documents in.
func asNobody(t *testing.T) (cmd func(args ...string) *exec.Cmd, data string) {
	t.Helper()
	base, err := os.MkdirTemp("", "battery-nobody-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(base) })
	os.Chmod(base, 0o755)
	files, err := model.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	ort, err := model.ORTLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	copies := map[string]string{
		binary: "bin/micro-rag-mcp", files.ONNX: "model/" + model.ONNXName,
		files.Tokenizer: "model/" + model.TokenizerName, ort: "lib/" + model.ORTLibName,
	}
	for from, to := range copies {
		if from, err = filepath.EvalSymlinks(from); err != nil {
			t.Fatal(err)
		}
		dst := filepath.Join(base, to)
		os.MkdirAll(filepath.Dir(dst), 0o755)
		if err := os.Link(from, dst); err != nil {
			b, err := os.ReadFile(from)
			if err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(dst, b, 0o755); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, dir := range []string{"data", "cache", "home", "index"} {
		os.Mkdir(filepath.Join(base, dir), 0o755)
		os.Chown(filepath.Join(base, dir), 65534, 65534)
	}
	return func(args ...string) *exec.Cmd {
		c := exec.Command(filepath.Join(base, "bin/micro-rag-mcp"), append(args,
			"--model-dir", filepath.Join(base, "model"), "--ort-lib", filepath.Join(base, "lib", model.ORTLibName),
			"--index-folder", filepath.Join(base, "index"))...)
		c.Env = []string{"HOME=" + filepath.Join(base, "home"), cachedir.Env + "=" + filepath.Join(base, "cache"), "PATH=/usr/bin:/bin"}
		c.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		return c
	}, filepath.Join(base, "data")
}

// TestBatteryUnreadableRuleFile: a rule file the server cannot read
// withholds its folder: the files there leave the index, and the reindex,
// the log and status name the rule file, until it is readable again.
func TestBatteryUnreadableRuleFile(t *testing.T) { eachBackend(t, testBatteryUnreadableRuleFile) }

func testBatteryUnreadableRuleFile(t *testing.T, b backend) {
	server, data := asNobody(t)
	if err := os.CopyFS(data, os.DirFS("../../testdata/sample")); err != nil {
		t.Fatal(err)
	}
	plan := "The choir rehearses the winter cantata in the old boathouse.\n"
	os.MkdirAll(filepath.Join(data, "private"), 0o755)
	os.WriteFile(filepath.Join(data, "private", "plan.md"), []byte(plan), 0o644)
	rule := filepath.Join(data, "private", ".gitignore")
	os.WriteFile(rule, []byte("nothing.md\n"), 0o644)
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error { return os.Lchown(p, 65534, 65534) })
	query := "choir rehearsal in the boathouse"

	s := startRawCmd(t, server(serverArgs(data, "--watch=false")...))
	s.initialize(`1`)
	s.reindexTool(map[string]any{})
	if p := s.searchPaths(`"f"`, query); len(p) == 0 || p[0] != "private/plan.md" {
		t.Fatalf("readable rules: %q finds %v", query, p)
	}

	os.Chmod(rule, 0)
	if r := s.reindexTool(map[string]any{}); r.FilesFailed != 1 || r.FilesRemoved != 1 {
		t.Errorf("unreadable rule file: %+v, want 1 failed, 1 removed", r)
	}
	for _, p := range s.searchPaths(`"g"`, query) {
		if strings.HasPrefix(p, "private/") {
			t.Errorf("%s is served though its folder's rule file cannot be read", p)
		}
	}
	if logs := s.logs.String(); !strings.Contains(logs, "private/.gitignore") || !strings.Contains(logs, "permission denied") {
		t.Errorf("the rule file and the reason are not logged:\n%s", logs)
	}
	out, err := server("status", "--data-folder", data).Output()
	if err != nil || !strings.Contains(string(out), "private/.gitignore") || !strings.Contains(string(out), "permission denied") {
		t.Errorf("status does not name the rule file (%v):\n%s", err, out)
	}
	// The reindex result names it too: a client sees no stderr.
	res := s.tool(`"again"`, "reindex", map[string]any{})
	var again engine.ReindexResult
	decode(t, res["structuredContent"], &again)
	text := fmt.Sprint(res["content"])
	if len(again.Failed) != 1 || again.Failed[0].Path != "private/.gitignore" || !strings.Contains(again.Failed[0].Reason, "permission denied") ||
		!strings.Contains(text, "Could not read: private/.gitignore: ") {
		t.Errorf("the reindex result does not name the rule file: %+v\n%s", again.Failed, text)
	}

	os.Chmod(rule, 0o644)
	if r := s.reindexTool(map[string]any{}); r.FilesFailed != 0 || r.FilesAdded != 1 {
		t.Errorf("readable again: %+v, want 1 added", r)
	}
	s.close()
}

// TestBatteryUnreadable runs the server as an unprivileged user: a file or
// folder it cannot read is counted failed, logged with the reason, and
// keeps its previous entries until it is readable again or really gone.
func TestBatteryUnreadable(t *testing.T) { eachBackend(t, testBatteryUnreadable) }

func testBatteryUnreadable(t *testing.T, b backend) {
	server, data := asNobody(t)
	if err := os.CopyFS(data, os.DirFS("../../testdata/sample")); err != nil {
		t.Fatal(err)
	}
	secret := filepath.Join(data, "secret.md")
	private := filepath.Join(data, "private")
	os.WriteFile(secret, []byte("The rooftop beehives produced sixty jars of linden honey.\n"), 0o644)
	os.MkdirAll(private, 0o755)
	os.WriteFile(filepath.Join(private, "plan.md"), []byte("The choir rehearses the winter cantata in the old boathouse.\n"), 0o644)
	filepath.WalkDir(data, func(p string, d fs.DirEntry, err error) error { return os.Lchown(p, 65534, 65534) })

	s := startRawCmd(t, server(serverArgs(data)...))
	s.initialize(`1`)
	s.reindexTool(map[string]any{})
	found := func(step string) {
		t.Helper()
		for q, want := range map[string]string{"linden honey from rooftop hives": "secret.md", "choir rehearsal in the boathouse": "private/plan.md"} {
			if p := s.searchPaths(`"f"`, q); len(p) == 0 || p[0] != want {
				t.Errorf("%s: %q finds %v, want %s first", step, q, p, want)
			}
		}
	}
	found("readable")

	os.Chmod(secret, 0)
	later := time.Now().Add(time.Hour)
	os.Chtimes(secret, later, later) // changed, so it must be read
	os.Chmod(private, 0)
	r := s.reindexTool(map[string]any{})
	if r.FilesFailed != 2 || r.FilesRemoved != 0 || r.FilesUpdated != 0 {
		t.Errorf("unreadable file and folder: %+v, want 2 failed, none removed", r)
	}
	found("unreadable")
	if logs := s.logs.String(); strings.Count(logs, "permission denied") < 2 || !strings.Contains(logs, "private") {
		t.Errorf("the reasons are not logged:\n%s", logs)
	}
	// status tells what a run would do: the folder's files are kept, not deleted.
	out, err := server("status", "--json", "--data-folder", data).Output()
	var st struct {
		ChangedOnDisk struct{ Deleted int } `json:"changed_on_disk"`
	}
	if err == nil {
		err = json.Unmarshal(out, &st)
	}
	if err != nil || st.ChangedOnDisk.Deleted != 0 {
		t.Errorf("status with an unreadable folder (%v): %d deleted, want 0:\n%s", err, st.ChangedOnDisk.Deleted, out)
	}

	os.Chmod(secret, 0o644)
	os.Chmod(private, 0o755)
	if r := s.reindexTool(map[string]any{}); r.FilesFailed != 0 || r.FilesRemoved != 0 {
		t.Errorf("readable again: %+v", r)
	}
	found("readable again")

	os.RemoveAll(private)
	if r := s.reindexTool(map[string]any{}); r.FilesRemoved != 1 || r.FilesFailed != 0 {
		t.Errorf("folder really gone: %+v, want 1 removed", r)
	}
	s.close()
}

// TestBatteryConnectionLost is TestBatteryDiskFull's counterpart on
// PostgreSQL: every connection of the server is cut while a reindex
// embeds. The reindex fails with the reason, searches keep answering from
// the previous index, status names the failure without the password, and
// the next reindex completes.
func TestBatteryConnectionLost(t *testing.T) {
	b := backend{dsn: pgtest.Database(t)}
	data := copySample(t)
	s := b.startRaw(t, serverArgs(data, "--watch=false")...)
	s.initialize(`1`)
	s.waitIndexed(sampleQueries[3].query, sampleQueries[3].path)
	s.reindexTool(map[string]any{})

	addNotes(t, data, 24)
	s.send(`{"jsonrpc":"2.0","id":"cut","method":"tools/call","params":{"name":"reindex","arguments":{},"_meta":{"progressToken":"c"}}}`)
	s.waitLine("embedding progress", func(l string) bool {
		return strings.Contains(l, `"notifications/progress"`) && !strings.Contains(l, "chunks 0/")
	})
	ctx, conn := b.connect(t)
	var cut int
	if err := conn.QueryRow(ctx, `SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
		WHERE datname = current_database() AND pid <> pg_backend_pid()`).Scan(&cut); err != nil || cut == 0 {
		t.Fatalf("cutting the server's connections: %v, %d cut", err, cut)
	}
	var m struct {
		Result struct {
			IsError bool `json:"isError"`
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
		} `json:"result"`
	}
	raw := s.await(`"cut"`)
	json.Unmarshal(raw, &m)
	if !m.Result.IsError || len(m.Result.Content) == 0 || !strings.Contains(m.Result.Content[0].Text, "terminating connection") {
		t.Errorf("reindex with its connections cut: %s", raw)
	}
	for i, q := range sampleQueries {
		if p := s.searchPaths(fmt.Sprint(200+i), q.query); len(p) == 0 || p[0] != q.path {
			t.Errorf("after the lost connection, %q finds %v, want %s first", q.query, p, q.path)
		}
	}
	_, st, _ := statusJSON(t, b, "--data-folder", data)
	if !strings.Contains(string(st["last_run_error"]), "terminating connection") {
		t.Errorf("status last_run_error: %s", st["last_run_error"])
	}
	if r := s.reindexTool(map[string]any{}); r.FilesAdded != 24 || r.FilesFailed != 0 {
		t.Errorf("reindex once connected again: %+v", r)
	}
	if _, st, _ = statusJSON(t, b, "--data-folder", data); string(st["last_run_error"]) != `""` {
		t.Errorf("status last_run_error after a good run: %s", st["last_run_error"])
	}
	s.close()
}

// TestBatteryReadOnlyCreatesNothing is TestBatteryIndexFolder's read-only
// half on PostgreSQL: search, status and list on a database never indexed
// answer without creating a schema or table there.
func TestBatteryReadOnlyCreatesNothing(t *testing.T) {
	b := backend{dsn: pgtest.Database(t)}
	data := copySample(t)
	for _, tc := range []struct {
		args []string
		code int
		says string
	}{
		{[]string{"search", "--data-folder", data, "parental leave"}, 1, "no passages matched"},
		{[]string{"status", "--data-folder", data}, 0, "files:"},
		{[]string{"list", "--data-folder", data}, 0, "0 documents"},
	} {
		if code, stdout, stderr := b.run(t, tc.args...); code != tc.code || !strings.Contains(stdout+stderr, tc.says) {
			t.Errorf("%s on a database never indexed: exit %d, want %d saying %q\n%s%s", tc.args[0], code, tc.code, tc.says, stdout, stderr)
		}
	}
	ctx, conn := b.connect(t)
	var schemas []string
	rows, err := conn.Query(ctx, `SELECT schema_name FROM information_schema.schemata
		WHERE schema_name NOT IN ('public', 'information_schema') AND schema_name NOT LIKE 'pg\_%'`)
	if err == nil {
		schemas, err = pgx.CollectRows(rows, pgx.RowTo[string])
	}
	if err != nil || len(schemas) > 0 {
		t.Errorf("read-only commands created schemas %v (%v)", schemas, err)
	}
}
