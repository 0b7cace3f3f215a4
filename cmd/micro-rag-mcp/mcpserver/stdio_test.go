package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// wireSession runs ServeStdio on a bare mcp-go server and returns a writer
// for its stdin and a reader of its stdout lines.
func wireSession(t *testing.T) (in io.WriteCloser, lines <-chan string) {
	t.Helper()
	s := server.NewMCPServer("wire", "0")
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- ServeStdio(context.Background(), s, inR, outW, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	ch := readLines(outR)
	t.Cleanup(func() {
		inW.Close()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("ServeStdio: %v", err)
			}
		case <-time.After(time.Minute):
			t.Error("ServeStdio did not return after EOF")
		}
	})
	return inW, ch
}

// readLines sends each line read from r, and closes at its end.
func readLines(r io.Reader) <-chan string {
	ch := make(chan string, 64)
	go func() {
		defer close(ch)
		sc := bufio.NewScanner(r)
		sc.Buffer(make([]byte, 1<<16), 1<<20)
		for sc.Scan() {
			ch <- sc.Text()
		}
	}()
	return ch
}

func next(t *testing.T, lines <-chan string) string {
	t.Helper()
	select {
	case l, ok := <-lines:
		if !ok {
			t.Fatal("server output ended")
		}
		return l
	case <-time.After(3 * time.Minute): // a 4 MiB message takes 30 s under -race at load 25
		t.Fatal("no answer")
	}
	return ""
}

// rawID returns the bytes of a message's id member.
func rawID(t *testing.T, line string) string {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(line), &m); err != nil {
		t.Fatalf("answer %q is not a JSON object: %v", line, err)
	}
	return string(m["id"])
}

func TestWireKeepsIDsExact(t *testing.T) {
	in, lines := wireSession(t)
	ids := []string{
		`9007199254740993`,               // 2^53+1: float64 would make it ...992
		`123456789012345678901234567890`, // past int64 and float64 precision
		`-9223372036854775809`,
		`0`,
		`1.5`,
		`1e3`,
		`"abc"`,
		`"micro-rag#1"`, // looks like the wire layer's own ids
		`""`,
		`"\u00e9\n"`,
	}
	for _, id := range ids {
		msg := `{"jsonrpc":"2.0", "id" : ` + id + ` ,"method":"ping"}` + "\n"
		if _, err := io.WriteString(in, msg); err != nil {
			t.Fatal(err)
		}
		got := next(t, lines)
		if rawID(t, got) != id {
			t.Errorf("id %s came back as %s (%s)", id, rawID(t, got), got)
		}
		if !strings.Contains(id, idPrefix) && strings.Contains(got, idPrefix) {
			t.Errorf("the wire layer's id leaked: %s", got)
		}
	}
}

func TestWireCapsMessageSize(t *testing.T) {
	in, lines := wireSession(t)
	big := `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"pad":"` + strings.Repeat("x", MaxMessageBytes) + `"}}` + "\n"
	go io.WriteString(in, big+`{"jsonrpc":"2.0","id":8,"method":"ping"}`+"\n")
	got := next(t, lines)
	var e struct {
		ID    json.RawMessage `json:"id"`
		Error struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal([]byte(got), &e); err != nil {
		t.Fatal(err)
	}
	if string(e.ID) != "null" || e.Error.Code != -32600 || !strings.Contains(e.Error.Message, "4194304") {
		t.Errorf("over-long line answered %s", got)
	}
	if got := next(t, lines); rawID(t, got) != "8" {
		t.Errorf("next request answered %s", got)
	}
	// Just under the cap is served.
	pad := MaxMessageBytes - len(`{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":""}}`+"\n")
	go io.WriteString(in, `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"pad":"`+strings.Repeat("y", pad)+`"}}`+"\n")
	if got := next(t, lines); rawID(t, got) != "9" || !strings.Contains(got, "result") {
		t.Errorf("a message of exactly the cap answered %s", got)
	}
}

func TestWirePassesOtherMessages(t *testing.T) {
	w := &wire{pending: map[uint64][]byte{}, byRaw: map[string]uint64{}, progress: map[uint64][]byte{}}
	for _, line := range []string{
		`not json`,
		`[{"jsonrpc":"2.0","id":1,"method":"ping"}]`,
		`{"jsonrpc":"2.0","id":1,"result":{}}`, // a client's answer to a server request
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","id":null,"method":"ping"}`,
		`{"jsonrpc":"2.0","id":1,"method":"ping"} trailing`,
	} {
		if got, ok := w.inbound([]byte(line)); !ok || !bytes.Equal(got, []byte(line)) {
			t.Errorf("%s rewritten to %s", line, got)
		}
	}
	// A cancellation names the request by the client's id.
	req, _ := w.inbound([]byte(`{"jsonrpc":"2.0","id":123456789012345678901234567890,"method":"tools/call"}`))
	cancel, _ := w.inbound([]byte(`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":123456789012345678901234567890}}`))
	var r, c struct {
		ID     string `json:"id"`
		Params struct {
			RequestID string `json:"requestId"`
		} `json:"params"`
	}
	json.Unmarshal(req, &r)
	json.Unmarshal(cancel, &c)
	if r.ID == "" || r.ID != c.Params.RequestID {
		t.Errorf("request %s and its cancellation %s name different ids", req, cancel)
	}
}

// TestWireKeepsProgressTokensExact: a progress token comes back in every
// notification exactly as sent, even after the answer went out.
func TestWireKeepsProgressTokensExact(t *testing.T) {
	w := &wire{pending: map[uint64][]byte{}, byRaw: map[string]uint64{}, progress: map[uint64][]byte{}}
	var out bytes.Buffer
	w.out = &out
	for _, tok := range []string{`123456789012345678901234567890`, `"p-1"`, `7`} {
		in, _ := w.inbound([]byte(`{"jsonrpc":"2.0","method":"tools/call","params":{"_meta":{"progressToken":` + tok + `},"name":"reindex"},"id":5}`))
		var req struct {
			ID     string `json:"id"`
			Params struct {
				Meta struct {
					ProgressToken string `json:"progressToken"`
				} `json:"_meta"`
			} `json:"params"`
		}
		if err := json.Unmarshal(in, &req); err != nil || req.Params.Meta.ProgressToken != req.ID {
			t.Fatalf("rewritten request %s: %v", in, err)
		}
		out.Reset()
		w.Write([]byte(`{"jsonrpc":"2.0","id":"` + req.ID + `","result":{}}` + "\n"))
		w.Write([]byte(`{"jsonrpc":"2.0","method":"notifications/progress","params":{"progress":1,"progressToken":"` + req.ID + `"}}` + "\n"))
		lines := strings.Split(strings.TrimSpace(out.String()), "\n")
		if len(lines) != 2 || rawID(t, lines[0]) != "5" || !strings.Contains(lines[1], `"progressToken":`+tok+`}`) {
			t.Errorf("token %s came back as %q", tok, lines)
		}
	}
}

// TestWireRefusesIDsOfOtherTypes: JSON-RPC 2.0 ids are strings, numbers or
// null; a request with any other id is an Invalid Request, answered with
// id null because its id cannot be echoed. The session goes on.
func TestWireRefusesIDsOfOtherTypes(t *testing.T) {
	in, lines := wireSession(t)
	for _, id := range []string{`true`, `false`, `[1]`, `{}`, `{"a":1}`, `[]`} {
		msg := `{"jsonrpc":"2.0","id":` + id + `,"method":"ping"}` + "\n"
		if _, err := io.WriteString(in, msg); err != nil {
			t.Fatal(err)
		}
		got := next(t, lines)
		var e struct {
			ID    json.RawMessage `json:"id"`
			Error struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &e); err != nil {
			t.Fatalf("id %s answered %q: %v", id, got, err)
		}
		if string(e.ID) != "null" || e.Error.Code != -32600 {
			t.Errorf("id %s answered %s; want error -32600 with id null", id, got)
		}
	}
	if _, err := io.WriteString(in, `{"jsonrpc":"2.0","id":3,"method":"ping"}`+"\n"); err != nil {
		t.Fatal(err)
	}
	if got := next(t, lines); rawID(t, got) != "3" || !strings.Contains(got, `"result"`) {
		t.Errorf("ping after refused ids answered %s", got)
	}
}

// TestSDKLogLevels: the full queue note, which fails nothing, is debug;
// the SDK's other lines stay errors.
func TestSDKLogLevels(t *testing.T) {
	var buf bytes.Buffer
	l := sdkLog{slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))}
	l.Write([]byte("Tool call queue full, processing synchronously\n"))
	l.Write([]byte("Error writing tool response: broken pipe\n"))
	out := buf.String()
	if !strings.Contains(out, `level=DEBUG msg="Tool call queue full`) || !strings.Contains(out, `level=ERROR msg="Error writing tool response`) {
		t.Errorf("levels:\n%s", out)
	}
}

// A resource link as mcp-go writes it loses its empty description and MIME
// type on the way out and stays valid JSON; a text holding those bytes
// (escaped, as JSON writes them) is untouched.
func TestWireDropsEmptyLinkFields(t *testing.T) {
	w := &wire{pending: map[uint64][]byte{}, byRaw: map[string]uint64{}, progress: map[uint64][]byte{}}
	res := mcp.CallToolResult{Content: []mcp.Content{
		mcp.NewTextContent(`,"description":"","mimeType":""}`),
		mcp.NewResourceLink("micro-rag://docs/a.md#chunk=0", "a.md", "", ""),
	}}
	body, err := json.Marshal(map[string]any{"jsonrpc": "2.0", "id": 1, "result": res})
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(body, emptyLinkFields) {
		t.Fatalf("mcp-go no longer writes empty link fields: %s", body)
	}
	got := w.outbound(body)
	var back struct {
		Result struct {
			Content []map[string]any `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal(got, &back); err != nil || len(back.Result.Content) != 2 {
		t.Fatalf("%s: %v", got, err)
	}
	if text := back.Result.Content[0]["text"]; text != `,"description":"","mimeType":""}` {
		t.Errorf("text changed to %q", text)
	}
	link := back.Result.Content[1]
	if _, ok := link["description"]; ok || link["uri"] != "micro-rag://docs/a.md#chunk=0" || link["name"] != "a.md" {
		t.Errorf("link %v", link)
	}
	if _, ok := link["mimeType"]; ok {
		t.Errorf("link %v keeps an empty mimeType", link)
	}
}

func TestWireBadParamsAreInvalidParams(t *testing.T) {
	in, lines := wireSession(t)
	init := `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}` + "\n"
	if _, err := io.WriteString(in, init); err != nil {
		t.Fatal(err)
	}
	next(t, lines)
	cases := []struct{ params, want string }{
		{`{"name":7,"arguments":{}}`, "name must be a string, not number"},
		{`{"name":["search"]}`, "name must be a string, not array"},
		{`{"name":"search","arguments":"q"}`, "arguments must be an object, not string"},
	}
	for i, c := range cases {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":%s}`+"\n", i+1, c.params)
		if _, err := io.WriteString(in, msg); err != nil {
			t.Fatal(err)
		}
		got := next(t, lines)
		var e struct {
			Error struct {
				Code    int    `json:"code"`
				Message string `json:"message"`
			} `json:"error"`
		}
		if err := json.Unmarshal([]byte(got), &e); err != nil {
			t.Fatal(err)
		}
		if e.Error.Code != -32602 || !strings.Contains(e.Error.Message, c.want) {
			t.Errorf("params %s answered %s; want -32602 saying %q", c.params, got, c.want)
		}
	}
	uri := `{"jsonrpc":"2.0","id":9,"method":"resources/read","params":{"uri":{}}}` + "\n"
	if _, err := io.WriteString(in, uri); err != nil {
		t.Fatal(err)
	}
	if got := next(t, lines); !strings.Contains(got, "-32602") || !strings.Contains(got, "uri must be a string") {
		t.Errorf("resources/read with an object uri answered %s", got)
	}
	// No uri at all: invalid params naming it, not mcp-go's "handler not found".
	for i, params := range []string{`,"params":{}`, ``, `,"params":{"uri":""}`} {
		msg := fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"resources/read"%s}`+"\n", 10+i, params)
		if _, err := io.WriteString(in, msg); err != nil {
			t.Fatal(err)
		}
		if got := next(t, lines); !strings.Contains(got, "-32602") || !strings.Contains(got, "uri is missing") {
			t.Errorf("resources/read%s answered %s", params, got)
		}
	}
}
