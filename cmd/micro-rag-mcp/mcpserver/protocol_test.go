package mcpserver

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

// stubEngine has no documents; its Search waits for its context to end.
type stubEngine struct {
	searching chan struct{}
	state     engine.IndexState
}

func (e *stubEngine) Search(ctx context.Context, _ engine.SearchRequest) ([]engine.Result, error) {
	if e.searching != nil {
		close(e.searching)
		<-ctx.Done()
		return nil, ctx.Err()
	}
	return nil, nil
}
func (e *stubEngine) Reindex(context.Context, engine.ReindexRequest, func(pipeline.Progress)) (engine.ReindexResult, error) {
	return engine.ReindexResult{}, nil
}
func (e *stubEngine) ReadChunk(context.Context, string, int, int) (engine.Text, error) {
	return engine.Text{}, engine.ErrNotIndexed
}
func (e *stubEngine) ReadDocument(context.Context, string) (engine.Text, error) {
	return engine.Text{}, engine.ErrNotIndexed
}
func (e *stubEngine) Documents(context.Context, string, int) ([]engine.DocumentInfo, bool, error) {
	return nil, false, nil
}
func (e *stubEngine) IndexState() engine.IndexState { return e.state }

// stubSession serves New(eng) over ServeStdio, initialized with protocol
// 2025-06-18, and returns its stdin and stdout lines.
func stubSession(t *testing.T, eng Engine) (io.WriteCloser, <-chan string) {
	t.Helper()
	s := New(eng, Options{Name: "notes", Version: "0"})
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	go func() {
		_ = ServeStdio(ctx, s, inR, outW, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	ch := readLines(outR)
	t.Cleanup(func() { inW.Close(); cancel() })
	send(t, inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	next(t, ch)
	send(t, inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return inW, ch
}

func send(t *testing.T, w io.Writer, line string) {
	t.Helper()
	if _, err := io.WriteString(w, line+"\n"); err != nil {
		t.Fatal(err)
	}
}

func errorCode(t *testing.T, line string) int {
	t.Helper()
	var m struct {
		Error *struct{ Code int } `json:"error"`
	}
	if err := json.Unmarshal([]byte(line), &m); err != nil || m.Error == nil {
		t.Fatalf("%s: not an error answer (%v)", line, err)
	}
	return m.Error.Code
}

func TestWireResourceNotFoundCode(t *testing.T) {
	in, lines := stubSession(t, &stubEngine{})
	cases := []struct {
		uri  string
		code int
	}{
		{"micro-rag://notes/missing.md", -32002},
		{"micro-rag://notes/missing.md#chunk=3", -32002},
		{"micro-rag://other/missing.md", -32602}, // another index: names nothing here
	}
	for i, tc := range cases {
		send(t, in, `{"jsonrpc":"2.0","id":`+string(rune('1'+i))+`,"method":"resources/read","params":{"uri":"`+tc.uri+`"}}`)
		line := next(t, lines)
		if got := errorCode(t, line); got != tc.code || !strings.Contains(line, "missing.md") {
			t.Errorf("%s: %s, want code %d", tc.uri, line, tc.code)
		}
	}
}

func TestWireNoAnswerAfterCancel(t *testing.T) {
	eng := &stubEngine{searching: make(chan struct{})}
	in, lines := stubSession(t, eng)
	send(t, in, `{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`)
	<-eng.searching
	send(t, in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user"}}`)
	// Pings after the cancellation: the first answer must be a ping's.
	for _, id := range []string{`"p1"`, `"p2"`} {
		send(t, in, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
	}
	for _, want := range []string{`"p1"`, `"p2"`} {
		line := next(t, lines)
		if got := rawID(t, line); got != want {
			t.Fatalf("answer %s, want the ping %s (a cancelled request must not be answered)", line, want)
		}
	}
}
