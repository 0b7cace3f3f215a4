package mcpserver_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"
	"testing"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/search"
)

const instructions = "Search the team handbook.\nUse reindex after editing files.\n\n  Indented line kept."

// connect starts an in-process client. eng is nil for tests that must never
// reach the engine (listing, argument validation): a call through would panic.
func connect(t *testing.T, eng mcpserver.Engine) (*client.Client, *mcp.InitializeResult) {
	t.Helper()
	if eng == nil {
		eng = (*engine.Engine)(nil)
	}
	s := mcpserver.New(eng, mcpserver.Options{Name: "team-docs", Version: "1.2.3", Instructions: instructions})
	c, err := client.NewInProcessClient(s)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	ctx := context.Background()
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
	return c, res
}

func TestServerInfoAndInstructions(t *testing.T) {
	_, res := connect(t, nil)
	if res.ServerInfo.Name != "team-docs" || res.ServerInfo.Version != "1.2.3" {
		t.Errorf("serverInfo = %+v", res.ServerInfo)
	}
	if res.Instructions != instructions {
		t.Errorf("instructions = %q, want %q", res.Instructions, instructions)
	}
	if res.Capabilities.Tools == nil {
		t.Error("tools capability not advertised")
	}
}

// wireTools returns tools/list as the client sees it on the wire.
func wireTools(t *testing.T) map[string]map[string]any {
	t.Helper()
	c, _ := connect(t, nil)
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]map[string]any{}
	for _, tool := range list.Tools {
		b, err := json.Marshal(tool)
		if err != nil {
			t.Fatal(err)
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			t.Fatal(err)
		}
		out[tool.Name] = m
	}
	if len(list.Tools) != 2 || out["search"] == nil || out["reindex"] == nil {
		t.Fatalf("tools = %v, want exactly search and reindex", keys(out))
	}
	return out
}

func keys(m map[string]map[string]any) []string {
	var k []string
	for n := range m {
		k = append(k, n)
	}
	return k
}

func prop(t *testing.T, tool map[string]any, name string) map[string]any {
	t.Helper()
	props := tool["inputSchema"].(map[string]any)["properties"].(map[string]any)
	p, ok := props[name].(map[string]any)
	if !ok {
		t.Fatalf("property %q missing from %v", name, props)
	}
	return p
}

func TestSearchToolSchema(t *testing.T) {
	tool := wireTools(t)["search"]
	req, _ := tool["inputSchema"].(map[string]any)["required"].([]any)
	if len(req) != 1 || req[0] != "query" {
		t.Errorf("required = %v, want [query]", req)
	}
	if p := prop(t, tool, "query"); p["type"] != "string" {
		t.Errorf("query = %v", p)
	}
	topK := prop(t, tool, "top_k")
	if topK["type"] != "integer" || topK["default"] != 5.0 || topK["minimum"] != 1.0 || topK["maximum"] != 50.0 {
		t.Errorf("top_k = %v", topK)
	}
	th := prop(t, tool, "score_threshold")
	if th["type"] != "number" || th["default"] != 0.2 || th["minimum"] != 0.0 || th["maximum"] != 1.0 {
		t.Errorf("score_threshold = %v", th)
	}
	out, _ := tool["outputSchema"].(map[string]any)
	results, _ := out["properties"].(map[string]any)["results"].(map[string]any)
	item, _ := results["items"].(map[string]any)
	itemProps, _ := item["properties"].(map[string]any)
	for _, f := range []string{"path", "score", "snippet", "chunk_index", "char_start", "char_end", "mtime", "ext", "page", "line_start", "line_end"} {
		if itemProps[f] == nil {
			t.Errorf("output schema lacks results[].%s", f)
		}
	}
	ann := tool["annotations"].(map[string]any)
	if ann["readOnlyHint"] != true || ann["openWorldHint"] != false || ann["idempotentHint"] != true || ann["destructiveHint"] != false {
		t.Errorf("search annotations = %v", ann)
	}
}

func TestReindexToolSchema(t *testing.T) {
	tool := wireTools(t)["reindex"]
	if req, _ := tool["inputSchema"].(map[string]any)["required"].([]any); len(req) != 0 {
		t.Errorf("reindex has required arguments %v", req)
	}
	if p := prop(t, tool, "force"); p["type"] != "boolean" || p["default"] != false {
		t.Errorf("force = %v", p)
	}
	if p := prop(t, tool, "path_glob"); p["type"] != "string" {
		t.Errorf("path_glob = %v", p)
	}
	outProps, _ := tool["outputSchema"].(map[string]any)["properties"].(map[string]any)
	for _, f := range []string{"files_added", "files_updated", "files_removed", "files_failed", "chunks_total", "elapsed_ms"} {
		if outProps[f] == nil {
			t.Errorf("output schema lacks %s", f)
		}
	}
	ann := tool["annotations"].(map[string]any)
	if ann["destructiveHint"] != false || ann["openWorldHint"] != false || ann["idempotentHint"] != true || ann["readOnlyHint"] != false {
		t.Errorf("reindex annotations = %v", ann)
	}
}

// argsOnly is an engine whose searches parse their arguments and fail the
// test if they get further; nothing else of it may be called.
type argsOnly struct {
	mcpserver.Engine
	t *testing.T
}

func (e argsOnly) Answer(_ context.Context, args map[string]any, _ bool) (search.Output, error) {
	return search.AnswerCall(args, search.Source{View: func(*search.Options) (index.View, error) {
		e.t.Errorf("arguments %v reached the index", args)
		return nil, nil
	}}, search.Options{})
}

// TestArgumentErrors checks that bad arguments become tool errors (IsError)
// whose text names the problem, and never reach the index.
func TestArgumentErrors(t *testing.T) {
	c, _ := connect(t, argsOnly{t: t})
	cases := []struct {
		tool string
		args any
		want string
	}{
		{"search", map[string]any{}, `missing required argument "query"`},
		{"search", nil, `missing required argument "query"`},
		{"search", map[string]any{"query": ""}, `"query" must not be empty`},
		{"search", map[string]any{"query": "   \n"}, `"query" must not be empty`},
		{"search", map[string]any{"query": 42}, `"query" must be a string, got a number`},
		{"search", map[string]any{"query": "x", "top_k": 0}, `"top_k" must be between 1 and 50, got 0`},
		{"search", map[string]any{"query": "x", "top_k": 51}, `"top_k" must be between 1 and 50, got 51`},
		{"search", map[string]any{"query": "x", "top_k": 2.5}, `"top_k" must be an integer, got 2.5`},
		{"search", map[string]any{"query": "x", "top_k": "5"}, `"top_k" must be an integer, got a string`},
		{"search", map[string]any{"query": "x", "score_threshold": 1.5}, `"score_threshold" must be between 0 and 1, got 1.5`},
		{"search", map[string]any{"query": "x", "score_threshold": -0.1}, `"score_threshold" must be between 0 and 1`},
		{"search", map[string]any{"query": "x", "score_threshold": true}, `"score_threshold" must be a number, got a boolean`},
		{"search", map[string]any{"query": "x", "topk": 3}, `unknown argument "topk"`},
		{"search", []any{"x"}, "arguments must be a JSON object, got an array"},
		{"reindex", map[string]any{"force": "yes"}, `"force" must be a boolean, got a string`},
		{"reindex", map[string]any{"path_glob": 3}, `"path_glob" must be a string, got a number`},
		{"reindex", map[string]any{"path": "x"}, `unknown argument "path"`},
	}
	for _, tc := range cases {
		req := mcp.CallToolRequest{}
		req.Params.Name = tc.tool
		req.Params.Arguments = tc.args
		res, err := c.CallTool(context.Background(), req)
		if err != nil {
			t.Errorf("%s %v: protocol error %v, want a tool error", tc.tool, tc.args, err)
			continue
		}
		if !res.IsError {
			t.Errorf("%s %v: IsError false", tc.tool, tc.args)
			continue
		}
		text := res.Content[0].(mcp.TextContent).Text
		if !strings.Contains(text, tc.want) {
			t.Errorf("%s %v: error %q does not contain %q", tc.tool, tc.args, text, tc.want)
		}
	}
}

func TestParseReindexDefaults(t *testing.T) {
	r, err := mcpserver.ParseReindex(map[string]any{})
	if err != nil || r != (engine.ReindexRequest{}) {
		t.Errorf("reindex defaults: %+v, %v", r, err)
	}
}

// A search or reindex that failed because the database went away says so,
// and that it passes; other failures keep their own words alone.
func TestFailureTextSaysDatabaseUnreachable(t *testing.T) {
	refused := fmt.Errorf("postgres: kNN: failed to connect: %w", &net.OpError{Op: "dial", Net: "tcp", Err: syscall.ECONNREFUSED})
	for _, what := range []string{"search", "reindex"} {
		got := mcpserver.FailureText(what, refused)
		if !strings.HasPrefix(got, what+" failed: postgres: kNN") || !strings.Contains(got, "database cannot be reached") || !strings.Contains(got, "try again") {
			t.Errorf("FailureText(%s, refused) = %q", what, got)
		}
	}
	if got := mcpserver.FailureText("search", errors.New("disk full")); got != "search failed: disk full" {
		t.Errorf("FailureText(search, disk full) = %q", got)
	}
}
