package mcpserver

import (
	"encoding/json"
	"io"
	"strings"
	"testing"
)

// BenchmarkWireOutbound measures restoring the client's id in a large
// search answer (50 passages of 1,000 characters).
func BenchmarkWireOutbound(b *testing.B) {
	w := &wire{out: io.Discard, pending: map[uint64][]byte{}, byRaw: map[string]uint64{}, progress: map[uint64][]byte{}}
	var results []map[string]any
	for range 50 {
		results = append(results, map[string]any{"path": "docs/a.md", "score": 0.5, "snippet": strings.Repeat("lorem ipsum ", 84)})
	}
	body, _ := json.Marshal(map[string]any{"structuredContent": map[string]any{"results": results}})
	tail := []byte(`,"result":` + string(body) + "}\n")
	msg := make([]byte, 0, len(tail)+64)
	b.SetBytes(int64(len(tail)))
	b.ReportAllocs()
	for b.Loop() {
		w.mu.Lock()
		id := w.remember([]byte(`12345`))
		w.mu.Unlock()
		msg = append(append(append(msg[:0], `{"jsonrpc":"2.0","id":`...), id...), tail...)
		w.Write(msg)
	}
}
