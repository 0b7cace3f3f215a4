package main

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"
)

// errorCode is the error code of a JSON-RPC answer, or 0 for a result.
func errorCode(t *testing.T, raw json.RawMessage) (int, string) {
	t.Helper()
	var m struct {
		Error *struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("answer %s: %v", raw, err)
	}
	if m.Error == nil {
		return 0, ""
	}
	return m.Error.Code, m.Error.Message
}

// TestWireHandshakeAndBatches: requests before initialize are refused
// unless they carry the 2026-07-28 _meta; a second initialize is refused;
// a batch (even []) is an Invalid Request, not a parse error; an empty
// line gets no answer at all. Local backend only: the handshake never
// reaches the store.
func TestWireHandshakeAndBatches(t *testing.T) {
	s := startRaw(t, serverArgs(copySample(t), "--watch=false")...)

	if code, msg := errorCode(t, s.call(`"early"`, "tools/list", nil)); code != -32600 || !strings.Contains(msg, "not initialized") {
		t.Errorf("tools/list before initialize: %d %q", code, msg)
	}
	if code, _ := errorCode(t, s.call(`"ping"`, "ping", nil)); code != 0 {
		t.Errorf("ping before initialize refused: %d", code)
	}
	modern := map[string]any{"_meta": map[string]any{
		"io.modelcontextprotocol/protocolVersion":    "2026-07-28",
		"io.modelcontextprotocol/clientCapabilities": map[string]any{},
	}}
	if code, msg := errorCode(t, s.call(`"modern"`, "tools/list", modern)); code != 0 {
		t.Errorf("tools/list with the 2026-07-28 _meta before initialize: %d %q", code, msg)
	}

	// Batches, and blank lines, which must go unanswered.
	s.send("")
	s.send("   \t")
	s.send(`[{"jsonrpc":"2.0","id":"b1","method":"ping"}]`)
	s.send(`[]`)
	s.send(`[1,`) // not JSON at all: a parse error
	s.send(`{"jsonrpc":"2.0","id":"after","method":"ping"}`)
	s.await(`"after"`)
	time.Sleep(200 * time.Millisecond)
	s.mu.Lock()
	var codes []int
	for _, l := range s.lines {
		var m struct {
			ID    json.RawMessage `json:"id"`
			Error *struct {
				Code int `json:"code"`
			} `json:"error"`
		}
		json.Unmarshal([]byte(l), &m)
		if string(m.ID) == "null" && m.Error != nil {
			codes = append(codes, m.Error.Code)
		}
	}
	s.mu.Unlock()
	if want := []int{-32600, -32600, -32700}; !slices.Equal(codes, want) {
		t.Errorf("answers with a null id: %v, want %v (batch, [], bad JSON; nothing for blank lines)", codes, want)
	}

	s.initialize(`"init"`)
	if code, msg := errorCode(t, s.call(`"init2"`, "initialize", map[string]any{
		"protocolVersion": "2025-06-18", "capabilities": map[string]any{},
		"clientInfo": map[string]any{"name": "again", "version": "0"}})); code != -32600 || !strings.Contains(msg, "already initialized") {
		t.Errorf("second initialize: %d %q", code, msg)
	}
	if code, _ := errorCode(t, s.call(`"late"`, "tools/list", nil)); code != 0 {
		t.Errorf("tools/list after initialize refused: %d", code)
	}
	s.close()
}
