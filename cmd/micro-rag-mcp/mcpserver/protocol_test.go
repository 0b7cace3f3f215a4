package mcpserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// stubEngine has no documents; its Answer waits for its context to end.
type stubEngine struct {
	searching chan struct{}
	state     engine.IndexState
	reindex   error // what Reindex returns
}

func (e *stubEngine) Answer(ctx context.Context, _ map[string]any, _ bool) (isearch.Output, error) {
	if e.searching != nil {
		close(e.searching)
		<-ctx.Done()
		return isearch.Output{}, ctx.Err()
	}
	return isearch.Output{Results: []isearch.Result{}}, nil
}
func (e *stubEngine) Reindex(context.Context, engine.ReindexRequest, func(pipeline.Progress)) (engine.ReindexResult, error) {
	return engine.ReindexResult{}, e.reindex
}
func (e *stubEngine) ReadChunk(_ context.Context, path string, i, _ int) (isearch.Text, error) {
	if path == "short.md" {
		return isearch.Text{}, fmt.Errorf("%q has one chunk, not %d: %w", path, i, isearch.ErrNoChunk)
	}
	return isearch.Text{}, isearch.ErrNotIndexed
}
func (e *stubEngine) ReadDocument(context.Context, string) (isearch.Text, error) {
	return isearch.Text{}, isearch.ErrNotIndexed
}
func (e *stubEngine) Documents(context.Context, string, int) ([]isearch.DocumentInfo, bool, error) {
	return nil, false, nil
}
func (e *stubEngine) IndexState() engine.IndexState { return e.state }
func (e *stubEngine) CommitID() string              { return "" }

// stubSession serves New(eng) over ServeStdio, initialized with protocol
// 2025-06-18, and returns its stdin and stdout lines.
func stubSession(t *testing.T, eng Engine) (io.WriteCloser, <-chan string) {
	in, lines, _ := stubSessionInit(t, eng, 0)
	return in, lines
}

// stubSessionInit is stubSession with the index watcher polling every poll
// (0: no watcher); it also returns the initialize answer.
func stubSessionInit(t *testing.T, eng Engine, poll time.Duration) (io.WriteCloser, <-chan string, string) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	opts := Options{Name: "notes", Version: "0"}
	if poll > 0 {
		opts.Context, opts.IndexPoll = ctx, poll
	}
	s := New(eng, opts)
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	go func() {
		_ = ServeStdio(ctx, s, inR, outW, slog.New(slog.DiscardHandler))
		outW.Close()
	}()
	ch := readLines(outR)
	t.Cleanup(func() { inW.Close(); cancel() })
	send(t, inW, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	init := next(t, ch)
	send(t, inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return inW, ch, init
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
		msg  string // in the message, besides the file's name
	}{
		{"micro-rag://notes/missing.md", -32002, ""},
		{"micro-rag://notes/missing.md#chunk=3", -32002, ""},
		{"micro-rag://other/missing.md", -32602, ""},       // another index: names nothing here
		{"micro-rag://notes/short.md#chunk=5", -32002, ""}, // the file shrank since a search named it
		// Malformed: invalid params saying what is wrong, not mcp-go's "handler not found".
		{"micro-rag://notes/%ZZ.md", -32602, ""},
		{"micro-rag://notes", -32602, ""},
		{"https://example.com/page.md", -32602, ""},
		// Bytes the URI must percent-encode: the message gives the URI to send.
		{"micro-rag://notes/my notes.md", -32602, "holds a space, which a URI must percent-encode (%XX for each byte); send micro-rag://notes/my%20notes.md"},
		{"micro-rag://notes/caf\u00e9.md#chunk=0", -32602, "a non-ASCII character, which a URI must percent-encode (%XX for each byte); send micro-rag://notes/caf%C3%A9.md#chunk=0"},
		{"micro-rag://no tes/a|b.md", -32602, "send micro-rag://no%20tes/a%7Cb.md"},
	}
	for i, tc := range cases {
		send(t, in, `{"jsonrpc":"2.0","id":`+strconv.Itoa(i+1)+`,"method":"resources/read","params":{"uri":"`+tc.uri+`"}}`)
		line := next(t, lines)
		var reply struct {
			Error struct{ Message string } `json:"error"`
		}
		if err := json.Unmarshal([]byte(line), &reply); err != nil {
			t.Fatal(err)
		}
		name := path.Base(strings.Split(tc.uri, "#")[0])
		if got := errorCode(t, line); got != tc.code || !strings.Contains(reply.Error.Message, name) || !strings.Contains(reply.Error.Message, tc.msg) {
			t.Errorf("%s: %s, want code %d", tc.uri, line, tc.code)
		}
	}
}

// An error of several lines reaches the client with real line breaks,
// not an escaped \x0a; other controls stay escaped.
func TestWireReindexErrorLines(t *testing.T) {
	in, lines := stubSession(t, &stubEngine{reindex: errors.New("first line\nsecond line\x1b[2J")})
	send(t, in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"reindex","arguments":{}}}`)
	var m struct {
		Result struct {
			Content []struct{ Text string } `json:"content"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(next(t, lines)), &m); err != nil || len(m.Result.Content) == 0 {
		t.Fatal(err)
	}
	if text := m.Result.Content[0].Text; text != "reindex failed: first line\nsecond line\\x1b[2J" {
		t.Errorf("reindex error text %q", text)
	}
}

func TestWireNoAnswerAfterCancel(t *testing.T) {
	eng := &stubEngine{searching: make(chan struct{})}
	in, lines := stubSession(t, eng)
	send(t, in, `{"jsonrpc":"2.0","id":"s1","method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`)
	<-eng.searching
	send(t, in, `{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"s1","reason":"user"}}`)
	// Pings after the cancellation may be answered in any order, but the
	// cancelled search must never be among the answers.
	pending := map[string]bool{`"p1"`: true, `"p2"`: true}
	for id := range pending {
		send(t, in, `{"jsonrpc":"2.0","id":`+id+`,"method":"ping"}`)
	}
	for len(pending) > 0 {
		line := next(t, lines)
		id := rawID(t, line)
		if !pending[id] {
			t.Fatalf("answer %s, want one of the pings (a cancelled request must not be answered)", line)
		}
		delete(pending, id)
	}
	// A last ping, answered after the cancelled search ended: still no s1.
	send(t, in, `{"jsonrpc":"2.0","id":"p3","method":"ping"}`)
	if line := next(t, lines); rawID(t, line) != `"p3"` {
		t.Fatalf("answer %s, want the ping \"p3\" (a cancelled request must not be answered)", line)
	}
}

// versionedStub names its commit like engine.Engine.
type versionedStub struct {
	stubEngine
	version atomic.Value
}

func (e *versionedStub) CommitID() string { return e.version.Load().(string) }

func TestWireResourcesListChanged(t *testing.T) {
	eng := &versionedStub{}
	eng.version.Store("c1")
	in, lines, init := stubSessionInit(t, eng, 5*time.Millisecond)
	if !strings.Contains(init, `"resources":{"listChanged":true}`) {
		t.Fatalf("initialize answer %s does not declare resources.listChanged", init)
	}
	// Nothing changed: no notification comes before the ping's answer.
	time.Sleep(20 * time.Millisecond) // several polls; a spurious notice would come first
	send(t, in, `{"jsonrpc":"2.0","id":"p1","method":"ping"}`)
	if line := next(t, lines); rawID(t, line) != `"p1"` {
		t.Fatalf("got %s before any commit, want the ping's answer", line)
	}
	eng.version.Store("c2")
	if line := next(t, lines); !strings.Contains(line, `"method":"notifications/resources/list_changed"`) {
		t.Fatalf("after a commit got %s, want notifications/resources/list_changed", line)
	}
}

// The "indexing is running" note and index_state come only while work is
// left: a run that found every file unchanged says nothing.
func TestWireIndexNoteOnlyWhilePending(t *testing.T) {
	for _, tc := range []struct {
		state engine.IndexState
		note  bool
	}{
		{engine.IndexState{Indexing: true, Activity: "initial indexing", FilesDone: 3, FilesTotal: 9}, false},
		{engine.IndexState{Indexing: true, Pending: true, Activity: "initial indexing", FilesDone: 3, FilesTotal: 9, ChunksTotal: 64}, true},
		{engine.IndexState{}, false},
	} {
		in, lines := stubSession(t, &stubEngine{state: tc.state})
		send(t, in, `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"query":"x"}}}`)
		line := next(t, lines)
		if got := strings.Contains(line, "indexing is running"); got != tc.note {
			t.Errorf("%+v: note %v, want %v: %s", tc.state, got, tc.note, line)
		}
		if got := strings.Contains(line, `"index_state"`); got != tc.note {
			t.Errorf("%+v: index_state %v, want %v: %s", tc.state, got, tc.note, line)
		}
	}
}

// Search's note says that the last indexing failed, why, and when it is
// tried again, rather than passing results off as complete.
func TestIndexNoteAfterFailedRun(t *testing.T) {
	at := time.Date(2030, 1, 2, 3, 4, 5, 0, time.Local)
	note := IndexNote(engine.IndexState{Activity: "initial indexing failed", Pending: true, LastRunError: "conn closed", RetryAt: at})
	for _, want := range []string{"the last indexing failed (conn closed)", "tried again at 03:04:05", "nothing is committed yet, so search finds nothing until the run commits its first finished files (from 2 s in on an empty index, else at the first checkpoint: every 30 s by default). Results may be incomplete."} {
		if !strings.Contains(note, want) {
			t.Errorf("note %q lacks %q", note, want)
		}
	}
}
