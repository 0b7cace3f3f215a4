package mcpserver

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	stdlog "log"
	"log/slog"
	"strconv"
	"strings"
	"sync"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// MaxMessageBytes caps one JSON-RPC message (one line on stdin). A longer
// line is discarded as it streams in, never held whole, and answered with
// an Invalid Request error whose id is null; the session goes on.
const MaxMessageBytes = 4 << 20

// idPrefix marks the string ids the wire layer hands to mcp-go in place of
// the client's own. Every request id is replaced, so a client cannot forge one.
const idPrefix = "micro-rag#"

// maxPendingIDs bounds the ids remembered for requests not yet answered; a
// client that never reads its answers cannot grow the table without end.
const maxPendingIDs = 1 << 14

// ServeStdio serves s on stdin/stdout like server.StdioServer, with three
// repairs in front of it: messages are capped at MaxMessageBytes, a request
// whose id is not a string, number or null is refused as invalid, and
// request ids and progress tokens come back byte for byte as sent. mcp-go
// decodes a number through float64, which rounds values above 2^53 and
// mangles longer ones, so each request id (and its progress token) is
// swapped for a short string on the way in and the original bytes are put
// back into the response and the progress notifications on the way out.
func ServeStdio(ctx context.Context, s *server.MCPServer, stdin io.Reader, stdout io.Writer, log *slog.Logger) error {
	w := &wire{out: stdout, pending: map[uint64][]byte{}, byRaw: map[string]uint64{}, progress: map[uint64][]byte{}, log: log}
	pr, pw := io.Pipe()
	go func() {
		pw.CloseWithError(w.pump(stdin, pw))
	}()
	defer pr.Close() // unblocks pump when the server stops first
	stdio := server.NewStdioServer(s)
	stdio.SetErrorLogger(stdlog.New(sdkLog{log}, "", 0))
	return stdio.Listen(ctx, pr, w)
}

// sdkLog takes mcp-go's log lines: errors, except the note that a full
// tool-call queue made a call run on the read loop, which fails nothing.
type sdkLog struct{ log *slog.Logger }

func (l sdkLog) Write(p []byte) (int, error) {
	msg := strings.TrimSpace(string(p))
	if strings.HasPrefix(msg, "Tool call queue full") {
		l.log.Debug(msg)
	} else {
		l.log.Error(msg)
	}
	return len(p), nil
}

// wire rewrites ids between the client and mcp-go. Its Write is the
// server's stdout: it takes whole lines and puts the client's ids back.
type wire struct {
	log *slog.Logger

	mu       sync.Mutex // guards everything below and serialises writes to out
	out      io.Writer
	partial  []byte            // output not yet ended by a newline
	next     uint64            // last id handed out
	pending  map[uint64][]byte // our id → the client's id, as raw JSON
	byRaw    map[string]uint64 // the client's id → ours, for notifications/cancelled
	progress map[uint64][]byte // our id → the request's progress token; kept after the answer, which notifications may trail
	// reads holds the resources/read requests not yet answered, true for
	// those of protocol 2026-07-28 or later: their not-found code differs.
	reads map[uint64]bool
	// cancelled holds requests the client cancelled: their answer is dropped.
	cancelled map[uint64]bool
	init      initState
	initID    uint64 // our id of the initialize request
}

// initState is how far the initialize handshake got.
type initState int

const (
	notInitialized initState = iota
	initializing             // initialize received, not yet answered: later requests are served
	initialized
)

// batchError answers a JSON array: valid JSON (so not -32700), but MCP
// does not take JSON-RPC batches.
var batchError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: JSON-RPC batches are not supported; send one message per line"}}` + "\n")

// refuse returns the wire layer's own answer to a request it refuses, or
// nil to pass the line on: a batch; a second initialize; any request but
// ping before initialize, unless it carries the protocol version of
// 2026-07-28 or later in its _meta, as that revision sends with every
// request instead of an initialize handshake.
func (w *wire) refuse(line []byte) []byte {
	line = bytes.TrimSpace(line)
	if line[0] == '[' {
		if json.Valid(line) {
			return batchError
		}
		return nil
	}
	fields, ok := topFields(line)
	if !ok {
		return nil
	}
	method, hasMethod := fields["method"]
	id, hasID := fields["id"]
	if !hasMethod || !hasID || !isIDValue(line[id.start:id.end]) {
		return nil // notifications, responses and bad ids go their usual way
	}
	raw := line[id.start:id.end]
	w.mu.Lock()
	defer w.mu.Unlock()
	switch string(line[method.start:method.end]) {
	case `"ping"`:
		return nil
	case `"initialize"`:
		if w.init != notInitialized {
			return errorReply(raw, -32600, "Invalid Request: this session is already initialized; initialize is sent once")
		}
		w.init = initializing
		return nil
	}
	if w.init == notInitialized && !modernRequest(line) {
		return errorReply(raw, -32600, "Invalid Request: the session is not initialized; send initialize first "+
			"(or, from protocol version 2026-07-28, the protocol version and client capabilities in each request's _meta)")
	}
	if msg := badParams(string(line[method.start:method.end]), line); msg != "" {
		return errorReply(raw, -32602, "Invalid params: "+msg)
	}
	return nil
}

// badParams says what is wrong with the params of a tools/call or
// resources/read whose names are not strings (or a resources/read with no
// uri), or "" to pass it on: mcp-go
// fails to decode such params and answers -32600 (invalid request), where
// JSON-RPC's code for a well-formed request with bad params is -32602.
func badParams(method string, line []byte) string {
	var field string
	switch method {
	case `"tools/call"`:
		field = "name"
	case `"resources/read"`:
		field = "uri"
	default:
		return ""
	}
	var m struct {
		Params map[string]json.RawMessage `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return ""
	}
	v, ok := m.Params[field]
	var s string
	switch {
	case !ok && field == "uri":
		// mcp-go would answer "handler not found for resource URI ''".
		return missingURI
	case !ok:
		return ""
	case json.Unmarshal(v, &s) != nil:
		return fmt.Sprintf("%s must be a string, not %s", field, jsonKind(v))
	case field == "uri" && s == "":
		return missingURI
	case field == "uri":
		// A URI the templates cannot match would get mcp-go's "handler not
		// found"; say what is wrong. The title is checked by the handler.
		host, _, _ := strings.Cut(strings.TrimPrefix(s, URIScheme), "/")
		if title, err := unescape(host); err == nil {
			if _, err := ParseURI(title, s); err != nil {
				return invalidURIPrefix + err.Error()
			}
		}
	case field == "name":
		if args, ok := m.Params["arguments"]; ok {
			if t := jsonKind(args); t != "object" && t != "null" {
				return "arguments must be an object, not " + t
			}
		}
	}
	return ""
}

const missingURI = "uri is missing: resources/read needs the resource's URI, e.g. " + URIScheme + "TITLE/PATH (resources/list lists them)"

// jsonKind names the JSON type of a raw value.
func jsonKind(v json.RawMessage) string {
	v = bytes.TrimSpace(v)
	if len(v) == 0 {
		return "nothing"
	}
	switch v[0] {
	case '{':
		return "object"
	case '[':
		return "array"
	case '"':
		return "string"
	case 't', 'f':
		return "boolean"
	case 'n':
		return "null"
	}
	return "number"
}

// modernRequest reports whether a request declares in params._meta a
// protocol version of 2026-07-28 or later (its other fields are checked
// by the server).
func modernRequest(line []byte) bool {
	var m struct {
		Params struct {
			Meta map[string]json.RawMessage `json:"_meta"`
		} `json:"params"`
	}
	if json.Unmarshal(line, &m) != nil {
		return false
	}
	var version string
	return json.Unmarshal(m.Params.Meta[mcp.MetaKeyProtocolVersion], &version) == nil && mcp.IsModernProtocol(version)
}

// errorReply is a JSON-RPC error answer to the request with id raw.
func errorReply(raw []byte, code int, message string) []byte {
	msg, _ := json.Marshal(message)
	return fmt.Appendf(nil, `{"jsonrpc":"2.0","id":%s,"error":{"code":%d,"message":%s}}`+"\n", raw, code, msg)
}

// pump copies stdin to the server line by line, rewriting request ids and
// answering over-long lines itself.
func (w *wire) pump(in io.Reader, to io.Writer) error {
	r := bufio.NewReaderSize(in, 64<<10)
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		tooLong := false
		switch {
		case len(line)+len(chunk) > MaxMessageBytes:
			// Drop what was kept and skip to the end of the line.
			line = line[:0]
			for errors.Is(err, bufio.ErrBufferFull) {
				_, err = r.ReadSlice('\n')
			}
			tooLong = true
		default:
			line = append(line, chunk...)
			if errors.Is(err, bufio.ErrBufferFull) {
				continue
			}
		}
		if tooLong {
			w.log.Warn("JSON-RPC message over the size limit discarded", "limit_bytes", MaxMessageBytes)
			if werr := w.reply(oversizeError); werr != nil {
				return werr
			}
		} else if len(bytes.TrimSpace(line)) == 0 {
			// An empty line is no message: nothing to answer.
		} else if refusal := w.refuse(line); refusal != nil {
			if werr := w.reply(refusal); werr != nil {
				return werr
			}
		} else {
			msg, ok := w.inbound(line)
			if !ok {
				if werr := w.reply(badIDError); werr != nil {
					return werr
				}
			} else if _, werr := to.Write(msg); werr != nil {
				return werr
			}
		}
		line = line[:0]
		if cap(line) > 1<<20 {
			line = nil // do not pin a big message's buffer
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return nil
			}
			return err
		}
	}
}

var oversizeError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"message longer than ` +
	strconv.Itoa(MaxMessageBytes) + ` bytes; it was discarded"}}` + "\n")

// badIDError answers a request whose id is not a string, a number or null.
// mcp-go would echo such an id back in a success; JSON-RPC 2.0 makes the
// request invalid, and an id that cannot be trusted is answered as null.
var badIDError = []byte(`{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: id must be a string, a number or null"}}` + "\n")

// reply writes a message of the wire layer's own.
func (w *wire) reply(msg []byte) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	_, err := w.out.Write(msg)
	return err
}

// inbound returns line with a request's id, or a cancellation's requestId,
// replaced by ours. Anything else (responses, notifications, batches, bad
// JSON) passes unchanged for mcp-go to handle or reject. ok is false for a
// request whose id is of a type JSON-RPC forbids; the caller answers it.
func (w *wire) inbound(line []byte) (msg []byte, ok bool) {
	fields, ok := topFields(line)
	if !ok {
		return line, true
	}
	method, hasMethod := fields["method"]
	if !hasMethod {
		return line, true // a response to a request of ours
	}
	if id, ok := fields["id"]; ok {
		raw := line[id.start:id.end]
		if string(raw) == "null" {
			return line, true // mcp-go takes it for a notification
		}
		if !isIDValue(raw) {
			return nil, false
		}
		token, hasToken := progressToken(line, fields)
		isRead := string(line[method.start:method.end]) == `"resources/read"`
		modern := isRead && modernRequest(line)
		w.mu.Lock()
		ours := w.remember(raw)
		if isRead {
			if w.reads == nil {
				w.reads = map[uint64]bool{}
			}
			w.reads[w.next] = modern
		}
		if string(line[method.start:method.end]) == `"initialize"` {
			w.initID = w.next
		}
		if hasToken {
			w.progress[w.next] = bytes.Clone(line[token.start:token.end])
		}
		w.mu.Unlock()
		if hasToken && token.start > id.start { // splice the later one first
			line = splice(line, token, ours)
			return splice(line, id, ours), true
		}
		line = splice(line, id, ours)
		if hasToken {
			line = splice(line, token, ours)
		}
		return line, true
	}
	if string(line[method.start:method.end]) != `"notifications/cancelled"` {
		return line, true
	}
	rid, ok := member(line, fields, "params", "requestId")
	if !ok {
		return line, true
	}
	raw := line[rid.start:rid.end]
	w.mu.Lock()
	n, known := w.byRaw[string(raw)]
	if known && n != w.initID {
		// The spec: a receiver SHOULD NOT answer a cancelled request.
		// mcp-go still answers (a tool that sees its context end returns
		// an error), so the answer is dropped on the way out.
		if w.cancelled == nil {
			w.cancelled = map[uint64]bool{}
		}
		w.cancelled[n] = true
	}
	w.mu.Unlock()
	if !known {
		return line, true
	}
	return splice(line, rid, ourID(n)), true
}

// remember stores the client's id and returns ours. Call with mu held.
func (w *wire) remember(raw []byte) []byte {
	w.next++
	n := w.next
	if n > maxPendingIDs {
		delete(w.progress, n-maxPendingIDs)
		delete(w.reads, n-maxPendingIDs)
		delete(w.cancelled, n-maxPendingIDs)
		if old, ok := w.pending[n-maxPendingIDs]; ok {
			delete(w.pending, n-maxPendingIDs)
			if w.byRaw[string(old)] == n-maxPendingIDs {
				delete(w.byRaw, string(old))
			}
		}
	}
	w.pending[n] = bytes.Clone(raw)
	w.byRaw[string(raw)] = n
	return ourID(n)
}

func ourID(n uint64) []byte { return append(strconv.AppendUint([]byte(`"`+idPrefix), n, 10), '"') }

// parseOurID returns n for a JSON string made by ourID.
func parseOurID(v []byte) (uint64, bool) {
	digits, ok := bytes.CutPrefix(v, []byte(`"`+idPrefix))
	if !ok || len(digits) < 2 || digits[len(digits)-1] != '"' {
		return 0, false
	}
	n, err := strconv.ParseUint(string(digits[:len(digits)-1]), 10, 64)
	return n, err == nil
}

// progressToken finds params._meta.progressToken of a message, as a span of it.
func progressToken(msg []byte, fields map[string]span) (span, bool) {
	at, ok := member(msg, fields, "params", "_meta", "progressToken")
	return at, ok && isIDValue(msg[at.start:at.end])
}

// member finds the value at path (names of members, each inside the
// object before) in msg, whose top-level members are fields, as a span of
// msg.
func member(msg []byte, fields map[string]span, path ...string) (span, bool) {
	at := span{0, len(msg)}
	for i, name := range path {
		f, ok := fields[name]
		if !ok {
			return span{}, false
		}
		at = span{at.start + f.start, at.start + f.end}
		if i == len(path)-1 {
			break
		}
		if fields, ok = topFields(msg[at.start:at.end]); !ok {
			return span{}, false
		}
	}
	return at, true
}

// Write takes the server's output, which arrives as whole messages each
// ended by a newline, and restores the client's id in every response.
func (w *wire) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	if len(w.partial) == 0 && bytes.IndexByte(p, '\n') == len(p)-1 {
		// One whole message, as mcp-go writes them: no copy to collect it.
		if _, err := w.out.Write(w.outbound(p)); err != nil {
			return 0, err
		}
		return len(p), nil
	}
	w.partial = append(w.partial, p...)
	for {
		i := bytes.IndexByte(w.partial, '\n')
		if i < 0 {
			break
		}
		msg := w.outbound(w.partial[:i+1])
		if _, err := w.out.Write(msg); err != nil {
			w.partial = w.partial[:0]
			return 0, err
		}
		w.partial = w.partial[i+1:]
	}
	if len(w.partial) == 0 {
		w.partial = nil // do not pin a large response's buffer
	}
	return len(p), nil
}

// emptyLinkFields is how mcp-go writes a resource link's (or resource's)
// optional description and MIME type when they are empty, closing the
// object. Inside a JSON string the quotes would be escaped, so the bytes
// occur only as those fields; dropping them keeps the JSON valid and saves
// about nine tokens per link of a search answer.
var emptyLinkFields = []byte(`,"description":"","mimeType":""}`)

// outbound puts the client's id back into a response and drops empty
// optional fields (emptyLinkFields). Call with mu held.
func (w *wire) outbound(msg []byte) []byte {
	if bytes.Contains(msg, emptyLinkFields) {
		msg = bytes.ReplaceAll(msg, emptyLinkFields, []byte("}"))
	}
	// mcp-go writes every answer as {"jsonrpc":"2.0","id":...: take the id
	// from there without scanning a large result.
	const head = `{"jsonrpc":"2.0","id":`
	if rest, ok := bytes.CutPrefix(msg, []byte(head+`"`+idPrefix)); ok {
		if end := bytes.IndexByte(rest, '"'); end > 0 {
			id := span{len(head), len(msg) - len(rest) + end + 1}
			if n, ok := parseOurID(msg[id.start:id.end]); ok {
				return w.restoreID(msg, id, n)
			}
		}
	}
	if !bytes.Contains(msg, []byte(`"`+idPrefix)) {
		return msg
	}
	fields, ok := topFields(msg)
	if !ok {
		return msg
	}
	if method, ok := fields["method"]; ok {
		if string(msg[method.start:method.end]) != `"notifications/progress"` {
			return msg
		}
		at, ok := member(msg, fields, "params", "progressToken")
		if !ok {
			return msg
		}
		if n, ok := parseOurID(msg[at.start:at.end]); ok && w.progress[n] != nil {
			return splice(msg, at, w.progress[n])
		}
		return msg
	}
	id, ok := fields["id"]
	if !ok {
		return msg
	}
	n, ok := parseOurID(msg[id.start:id.end])
	if !ok {
		return msg
	}
	return w.restoreID(msg, id, n)
}

// restoreID puts the client's id for our id n at the span id of msg and
// forgets n. Call with mu held.
func (w *wire) restoreID(msg []byte, id span, n uint64) []byte {
	raw, ok := w.pending[n]
	if !ok {
		return msg
	}
	delete(w.pending, n)
	if w.byRaw[string(raw)] == n {
		delete(w.byRaw, string(raw))
	}
	modern, isRead := w.reads[n]
	delete(w.reads, n)
	if w.cancelled[n] {
		delete(w.cancelled, n)
		return nil
	}
	if isRead {
		msg = resourceErrorCode(msg, modern)
	}
	if n == w.initID && w.init == initializing {
		// Initialized if it succeeded; a failed one may be sent again.
		w.init = notInitialized
		if fields, ok := topFields(msg); ok {
			if _, ok := fields["result"]; ok {
				w.init = initialized
			}
		}
	}
	return splice(msg, id, raw)
}

// Prefixes of the resource handler's error messages that the wire layer
// gives their own code: mcp-go answers every handler error as -32603.
const (
	notFoundPrefix   = "resource not found: "
	invalidURIPrefix = "invalid resource URI: "
)

// resourceErrorCode gives a resources/read error its code: resource not
// found is -32002 up to protocol 2025-11-25 and -32602 (invalid params)
// from 2026-07-28; a URI that names nothing of this index is -32602.
func resourceErrorCode(msg []byte, modern bool) []byte {
	const internal = `"error":{"code":-32603,"message":"`
	i := bytes.Index(msg, []byte(internal))
	if i < 0 {
		return msg
	}
	rest := msg[i+len(internal):]
	code := ""
	switch {
	case bytes.HasPrefix(rest, []byte(notFoundPrefix)) && !modern:
		code = "-32002"
	case bytes.HasPrefix(rest, []byte(notFoundPrefix)), bytes.HasPrefix(rest, []byte(invalidURIPrefix)):
		code = "-32602"
	default:
		return msg
	}
	at := i + len(`"error":{"code":`)
	return splice(msg, span{at, at + len("-32603")}, []byte(code))
}

// span is a value's byte range within a message.
type span struct{ start, end int }

// topFields finds the values of the top-level members of a JSON object
// without decoding them. ok is false for anything but one valid object.
// Of repeated names the last wins, as in encoding/json.
func topFields(msg []byte) (map[string]span, bool) {
	dec := json.NewDecoder(bytes.NewReader(msg))
	dec.UseNumber()
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, false
	}
	fields := map[string]span{}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, false
		}
		name, ok := t.(string)
		if !ok {
			return nil, false
		}
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, false
		}
		end := int(dec.InputOffset())
		fields[name] = span{end - len(v), end}
	}
	if t, err := dec.Token(); err != nil || t != json.Delim('}') {
		return nil, false
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, false // trailing data
	}
	return fields, true
}

// isIDValue reports whether v is a JSON string or number, the id kinds
// JSON-RPC allows besides null.
func isIDValue(v []byte) bool {
	if len(v) == 0 {
		return false
	}
	c := v[0]
	return c == '"' || c == '-' || (c >= '0' && c <= '9')
}

func splice(msg []byte, at span, with []byte) []byte {
	out := make([]byte, 0, len(msg)-(at.end-at.start)+len(with))
	out = append(out, msg[:at.start]...)
	out = append(out, with...)
	return append(out, msg[at.end:]...)
}
