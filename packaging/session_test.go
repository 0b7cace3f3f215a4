package packaging

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/testutil"
)

// session is one server process (through its launcher) spoken to as an MCP
// client does: JSON-RPC lines on its stdin and stdout.
type session struct {
	t      *testing.T
	cmd    *exec.Cmd
	stdin  io.WriteCloser
	lines  chan []byte // stdout, line by line
	stderr *testutil.SyncBuffer
	start  time.Time
	exited chan struct{} // closed once the process is reaped
	nextID int
}

// startSession runs argv with env, its stdin and stdout left to the test.
// The process gets a group of its own, killed whole at the end of the test
// so that nothing outlives it even when a launcher fails to pass a signal.
func startSession(t *testing.T, argv, env []string) *session {
	t.Helper()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Env = env
	cmd.Dir = root
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	stdin, err := cmd.StdinPipe()
	if err != nil {
		t.Fatal(err)
	}
	// Pipes of our own rather than Cmd's: Wait would close those once the
	// launcher exits, while the server may still be writing its last lines.
	stdout, stdoutW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	stderr, stderrW, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	cmd.Stdout, cmd.Stderr = stdoutW, stderrW
	s := &session{t: t, cmd: cmd, stdin: stdin, lines: make(chan []byte, 16), stderr: &testutil.SyncBuffer{}, exited: make(chan struct{})}
	s.start = time.Now()
	err = cmd.Start()
	stdoutW.Close()
	stderrW.Close()
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		defer stdout.Close()
		sc := bufio.NewScanner(stdout)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			s.lines <- append([]byte(nil), sc.Bytes()...)
		}
		close(s.lines)
	}()
	go func() {
		defer stderr.Close()
		io.Copy(s.stderr, stderr)
	}()
	go func() {
		cmd.Wait()
		close(s.exited)
	}()
	t.Cleanup(func() {
		syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL)
		<-s.exited
		if t.Failed() {
			t.Logf("stderr of %s:\n%s", strings.Join(argv, " "), s.stderr.String())
		}
	})
	return s
}

// call sends a request and waits up to timeout for its answer's result.
func (s *session) call(method string, params any, timeout time.Duration) (json.RawMessage, error) {
	s.nextID++
	id := s.nextID
	if err := s.send(map[string]any{"jsonrpc": "2.0", "id": id, "method": method, "params": params}); err != nil {
		return nil, err
	}
	deadline := time.After(timeout)
	for {
		select {
		case line, ok := <-s.lines:
			if !ok {
				return nil, fmt.Errorf("%s: stdout closed before the answer", method)
			}
			var msg struct {
				ID     *int            `json:"id"`
				Result json.RawMessage `json:"result"`
				Error  *struct {
					Message string `json:"message"`
				} `json:"error"`
			}
			if err := json.Unmarshal(line, &msg); err != nil {
				return nil, fmt.Errorf("%s: stdout is not JSON-RPC: %q", method, line)
			}
			if msg.ID == nil || *msg.ID != id {
				continue // a notification
			}
			if msg.Error != nil {
				return nil, fmt.Errorf("%s: %s", method, msg.Error.Message)
			}
			return msg.Result, nil
		case <-deadline:
			return nil, fmt.Errorf("%s: no answer in %v", method, timeout)
		}
	}
}

func (s *session) send(msg any) error {
	b, err := json.Marshal(msg)
	if err != nil {
		return err
	}
	_, err = s.stdin.Write(append(b, '\n'))
	return err
}

// initialize opens the MCP session and returns the server's name.
func (s *session) initialize(timeout time.Duration) (string, error) {
	res, err := s.call("initialize", map[string]any{
		"protocolVersion": "2025-06-18",
		"capabilities":    map[string]any{},
		"clientInfo":      map[string]any{"name": "packaging-test", "version": "1"},
	}, timeout)
	if err != nil {
		return "", err
	}
	var r struct {
		ServerInfo struct {
			Name string `json:"name"`
		} `json:"serverInfo"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return "", err
	}
	return r.ServerInfo.Name, s.send(map[string]any{"jsonrpc": "2.0", "method": "notifications/initialized"})
}

// tool calls an MCP tool; a tool error comes back as an error with its text.
func (s *session) tool(name string, args map[string]any, timeout time.Duration) (json.RawMessage, error) {
	res, err := s.call("tools/call", map[string]any{"name": name, "arguments": args}, timeout)
	if err != nil {
		return nil, err
	}
	var r struct {
		IsError bool `json:"isError"`
		Content []struct {
			Text string `json:"text"`
		} `json:"content"`
		Structured json.RawMessage `json:"structuredContent"`
	}
	if err := json.Unmarshal(res, &r); err != nil {
		return nil, err
	}
	if r.IsError {
		var text []string
		for _, c := range r.Content {
			text = append(text, c.Text)
		}
		return nil, fmt.Errorf("%s: %s", name, strings.Join(text, " "))
	}
	return r.Structured, nil
}

// waitExit waits for the process to end and returns its exit status.
func (s *session) waitExit(timeout time.Duration) (int, error) {
	select {
	case <-s.exited:
		return s.cmd.ProcessState.ExitCode(), nil
	case <-time.After(timeout):
		return -1, fmt.Errorf("still running %v after it was told to stop", timeout)
	}
}

// waitStderr waits until the process's stderr contains want.
func (s *session) waitStderr(want string, timeout time.Duration) bool {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		if strings.Contains(s.stderr.String(), want) {
			return true
		}
	}
	return false
}

// stallProxy is an HTTP proxy that accepts connections and never answers:
// through it a model download starts and hangs, so a server that answers
// initialize is shown not to wait for the download.
type stallProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	first string // the first request line received
	conns []net.Conn
}

func newStallProxy(t *testing.T) *stallProxy {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &stallProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			p.mu.Lock()
			p.conns = append(p.conns, c)
			p.mu.Unlock()
			go func() {
				line, _ := bufio.NewReader(c).ReadString('\n')
				p.mu.Lock()
				if p.first == "" {
					p.first = strings.TrimSpace(line)
				}
				p.mu.Unlock()
			}()
		}
	}()
	t.Cleanup(func() {
		ln.Close()
		p.mu.Lock()
		defer p.mu.Unlock()
		for _, c := range p.conns {
			c.Close()
		}
	})
	return p
}

func (p *stallProxy) URL() string { return "http://" + p.ln.Addr().String() }

// connections is how many connections the proxy has accepted.
func (p *stallProxy) connections() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return len(p.conns)
}

// firstRequest waits for the first request line the proxy was sent.
func (p *stallProxy) firstRequest(timeout time.Duration) string {
	for end := time.Now().Add(timeout); time.Now().Before(end); time.Sleep(50 * time.Millisecond) {
		p.mu.Lock()
		first := p.first
		p.mu.Unlock()
		if first != "" {
			return first
		}
	}
	return ""
}

// processesUnder lists the live processes whose executable lies under dir.
func processesUnder(dir string) []string {
	var found []string
	procs, _ := filepath.Glob("/proc/[0-9]*/exe")
	for _, p := range procs {
		exe, err := os.Readlink(p)
		if err == nil && strings.HasPrefix(exe, dir+string(filepath.Separator)) {
			found = append(found, filepath.Base(filepath.Dir(p))+" "+exe)
		}
	}
	return found
}
