package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"unicode/utf8"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// Names and text a hostile folder can hold: a window title set, a screen
// clear, a clipboard write (OSC 52), a C1 CSI and a right-to-left override.
const (
	evilName = "tide\x1b]0;pwned\x07\x1b[2J\u202egpj.md"
	evilPDF  = "broken\x1b]52;c;cHduZWQ=\x07.pdf"
	evilNew  = "later\x1b[2J\u2066.md"
	evilText = "Zanzibar tide gauge \u009b31m red\x7f \x1b]52;c;cHduZWQ=\x07 drifted \x1b[2J after the storm \u202egnp.exe\n"
)

// terminalControls lists what in out could act on a terminal: control
// characters other than newline and tab (the layout of usage text), DEL,
// C1, bidi overrides and isolates, and bytes that are not UTF-8.
func terminalControls(out string) []string {
	var bad []string
	for i, r := range out {
		switch {
		case r == utf8.RuneError && !strings.HasPrefix(out[i:], "\uFFFD"),
			r < 0x20 && r != '\n' && r != '\t', r >= 0x7f && r <= 0x9f,
			r >= 0x202a && r <= 0x202e, r >= 0x2066 && r <= 0x2069:
			bad = append(bad, fmt.Sprintf("%U at byte %d", r, i))
		}
	}
	return bad
}

func checkNoControls(t *testing.T, what, out string) {
	t.Helper()
	if bad := terminalControls(out); len(bad) > 0 {
		t.Errorf("%s prints raw terminal controls %v:\n%q", what, bad, out)
	}
}

// TestCLIEscapesTerminalControls: file names and document text reach the
// terminal with their control characters escaped visibly, in search
// results, status, the reindex summary and error messages; --json stays
// valid JSON that decodes to the exact names.
func TestCLIEscapesTerminalControls(t *testing.T) { eachBackend(t, testCLIEscapesTerminalControls) }

func testCLIEscapesTerminalControls(t *testing.T, b backend) {
	data := filepath.Join(t.TempDir(), "docs")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, evilName), []byte(evilText), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, evilPDF), []byte("%PDF-1.7 not really"), 0o644); err != nil {
		t.Fatal(err)
	}
	code, stdout, stderr := b.run(t, "reindex", "--data-folder", data)
	if code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	checkNoControls(t, "reindex", stdout+stderr)
	if err := os.WriteFile(filepath.Join(data, evilNew), []byte("written after the reindex"), 0o644); err != nil {
		t.Fatal(err)
	}

	query := "Zanzibar tide gauge drifted after the storm"
	code, stdout, stderr = b.run(t, "search", "--data-folder", data, query)
	if code != 0 {
		t.Fatalf("search: exit %d\n%s", code, stderr)
	}
	checkNoControls(t, "search", stdout+stderr)
	for _, want := range []string{`tide\x1b]0;pwned\x07\x1b[2J\u202egpj.md`, `\x1b]52;c;cHduZWQ=\x07`, `\u009b31m`, `\x7f`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("search output lacks the visible escape %s:\n%s", want, stdout)
		}
	}

	code, stdout, stderr = b.run(t, "search", "--data-folder", data, "--json", query)
	if code != 0 {
		t.Fatalf("search --json: exit %d\n%s", code, stderr)
	}
	checkNoControls(t, "search --json", stdout+stderr)
	var found struct {
		Results []struct {
			Path, Snippet string
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(stdout), &found); err != nil {
		t.Fatalf("search --json is not JSON: %v\n%s", err, stdout)
	}
	if len(found.Results) == 0 || found.Results[0].Path != evilName || !strings.Contains(found.Results[0].Snippet, "\u009b31m red\x7f \x1b]52;") {
		t.Errorf("search --json does not decode to the exact name and text: %+v", found.Results)
	}

	code, stdout, stderr = b.run(t, "status", "--data-folder", data)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	checkNoControls(t, "status", stdout+stderr)
	for _, want := range []string{`broken\x1b]52;c;cHduZWQ=\x07.pdf`, `later\x1b[2J\u2066.md`} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks the visible escape %s:\n%s", want, stdout)
		}
	}
	code, stdout, stderr = b.run(t, "status", "--data-folder", data, "--json")
	checkNoControls(t, "status --json", stdout+stderr)
	var st struct {
		Failed []struct {
			Path string `json:"path"`
		} `json:"failed"`
	}
	if err := json.Unmarshal([]byte(stdout), &st); err != nil || code != 0 {
		t.Fatalf("status --json: exit %d, %v\n%s", code, err, stdout)
	}
	if len(st.Failed) != 1 || st.Failed[0].Path != evilPDF {
		t.Errorf("status --json failed = %+v, want the exact name %q", st.Failed, evilPDF)
	}

	// Error messages quote the folder as given.
	gone := filepath.Join(data, "gone\x1b]0;pwned\x07")
	for _, cmd := range []string{"search", "status", "reindex"} {
		args := []string{cmd, "--data-folder", gone}
		if cmd == "search" {
			args = append(args, query)
		}
		code, stdout, stderr = b.run(t, args...)
		if code == 0 || !strings.Contains(stderr, `gone\x1b]0;pwned\x07`) {
			t.Errorf("%s on a missing folder: exit %d, stderr %q", cmd, code, stderr)
		}
		checkNoControls(t, cmd+" error", stdout+stderr)
	}
	code, stdout, stderr = b.run(t, "search", "--data-folder", data, "--\x1b]0;pwned\x07", query)
	if code != 2 || !strings.Contains(stderr, `-\x1b]0;pwned\x07`) {
		t.Errorf("unknown flag: exit %d, stderr %q", code, stderr)
	}
	checkNoControls(t, "flag error", stdout+stderr)
}

// TestMCPEscapesTerminalControls: in the search tool's text content and
// resource links, file names and snippets come with their control
// characters escaped as the CLI prints them; structuredContent keeps the
// exact name.
func TestMCPEscapesTerminalControls(t *testing.T) { eachBackend(t, testMCPEscapesTerminalControls) }

func testMCPEscapesTerminalControls(t *testing.T, b backend) {
	data := filepath.Join(t.TempDir(), "docs")
	if err := os.Mkdir(data, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(data, evilName), []byte(evilText), 0o644); err != nil {
		t.Fatal(err)
	}
	s := b.startRaw(t, serverArgs(data, "--watch=false")...)
	s.initialize(`1`)
	query := "Zanzibar tide gauge drifted after the storm"
	s.waitIndexed(query, evilName)
	res := s.tool(`"q"`, "search", map[string]any{"query": query})
	raw, _ := json.Marshal(res["content"])
	var content []map[string]any
	json.Unmarshal(raw, &content)
	var text strings.Builder
	for _, c := range content {
		fmt.Fprintln(&text, c["text"], c["name"], c["description"])
	}
	checkNoControls(t, "search tool text", text.String())
	if !strings.Contains(text.String(), `tide\x1b]0;pwned\x07\x1b[2J\u202egpj.md`) {
		t.Errorf("escaped name missing from the text:\n%s", text.String())
	}
	var out struct {
		Results []isearch.Result `json:"results"`
	}
	decode(t, res["structuredContent"], &out)
	if len(out.Results) == 0 || out.Results[0].Path != evilName {
		t.Errorf("structuredContent path: %+v", out.Results)
	}
	s.close()
}
