package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// rota writes an on-call rota whose table is longer than one chunk: the
// row answering "who is on call in week 13" has no word of the question,
// which only its header row ("Week") gives it.
func rota() string {
	var b strings.Builder
	b.WriteString("# Platform on-call rota\n\nThe primary answers pages within 15 minutes; the secondary takes over after 30.\n\n")
	b.WriteString("| Week | Primary | Secondary | Notes |\n|---|---|---|---|\n")
	for w := 1; w <= 52; w++ {
		p := fmt.Sprintf("Engineer %02d (ext. %d)", w, 4400+w*7%90)
		if w == 13 {
			p = "Tomasz Wójcik (ext. 4420)"
		}
		fmt.Fprintf(&b, "| %d | %s | Backup %02d | handover in the Monday stand-up |\n", w, p, (w+5)%52)
	}
	return b.String()
}

const rotaAnswer = "| 13 | Tomasz Wójcik (ext. 4420) |"

// One search read through each half of the tool's answer as clients read
// it (the text blocks, as Claude.ai and ChatGPT do; JSON.stringify of
// structuredContent, as Claude Code and VS Code do) holds the answer row
// under its header, and the CLI's search --json is the same list as
// structuredContent (copies merged, scores rounded, the same passage) but
// for the uri, which names a resource of the server; the CLI's search
// prints the tool's text. A weak search carries the same note in each,
// naming the file left out for its extension.
func TestOneResultEverywhere(t *testing.T) { eachBackend(t, testOneResultEverywhere) }

func testOneResultEverywhere(t *testing.T, b backend) {
	data := t.TempDir()
	leave := "Parental leave is sixteen weeks at full pay, taken in up to three blocks within two years of the birth."
	for name, text := range map[string]string{
		"oncall/rota.md":        rota(),
		"hr/leave.txt":          leave,
		"archive/leave-copy.md": leave,
		"it.md":                 "Printers on each floor use badge release printing. Laptops are replaced every four years.",
		"deploy/budget.yaml":    "nightly_deploy:\n  retry_budget: 7\n",
	} {
		os.MkdirAll(filepath.Dir(filepath.Join(data, name)), 0o755)
		if err := os.WriteFile(filepath.Join(data, name), []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	c := b.startServer(t, data, "--watch=false")
	waitForTop(t, c, "who is on call in week 13", "oncall/rota.md")

	for _, q := range []struct{ query, answer string }{
		{"who is on call in week 13", rotaAnswer},
		{"how long is parental leave", "sixteen weeks at full pay"},
		{"what is the retry budget of the nightly deploy job", "deploy/budget.yaml"},
	} {
		res, err := callTool(context.Background(), c, "search", map[string]any{"query": q.query})
		if err != nil || res.IsError {
			t.Fatalf("search %q: %v %s", q.query, err, toolText(res))
		}
		// The text's first result block: its header line, then the passage.
		text := toolText(res)
		_, first, _ := strings.Cut(text, "\n\n[1] ")
		first, _, _ = strings.Cut(first, "\n\n[2] ")
		if weak := q.answer == "deploy/budget.yaml"; weak && !strings.HasSuffix(text, "add --add-exts .yaml to the server's arguments; the reindex at its next start indexes them.") ||
			!weak && !strings.Contains(first, q.answer) {
			t.Errorf("%q: the text's first result, or its note, lacks %q:\n%s", q.query, q.answer, text)
		}
		var stringified bytes.Buffer // JSON.stringify escapes no HTML
		enc := json.NewEncoder(&stringified)
		enc.SetEscapeHTML(false)
		enc.Encode(res.StructuredContent)
		if !strings.Contains(stringified.String(), q.answer) {
			t.Errorf("%q: structuredContent lacks %q:\n%s", q.query, q.answer, stringified.String())
		}
		if q.answer == rotaAnswer {
			head := strings.Index(first, "| Week | Primary | Secondary | Notes |")
			if row := strings.Index(first, rotaAnswer); head < 0 || head > row {
				t.Errorf("the answer row comes without its header above it:\n%s", first)
			}
		}

		// Exit status 1 says nothing matched; the JSON is written anyway.
		code, stdout, stderr := b.run(t, "search", "--data-folder", data, "--json", q.query)
		if code != 0 && (code != 1 || q.answer == rotaAnswer) {
			t.Fatalf("search --json %q: exit %d\n%s", q.query, code, stderr)
		}
		var cli, tool map[string]any
		if err := json.Unmarshal([]byte(stdout), &cli); err != nil {
			t.Fatal(err)
		}
		decode(t, res.StructuredContent, &tool)
		results, _ := tool["results"].([]any)
		for _, r := range results {
			delete(r.(map[string]any), "uri")
		}
		if !reflect.DeepEqual(cli, tool) {
			t.Errorf("%q: search --json differs from structuredContent:\n%s\n%v", q.query, stdout, tool)
		}
		// The CLI's text is the tool's text, note included.
		code, stdout, stderr = b.run(t, "search", "--data-folder", data, q.query)
		if code != 0 && (code != 1 || q.answer == rotaAnswer) {
			t.Fatalf("search %q: exit %d\n%s", q.query, code, stderr)
		}
		if stdout != text+"\n" {
			t.Errorf("%q: search prints\n%s\nbut the tool's text is\n%s", q.query, stdout, text)
		}
		if note, _ := tool["note"].(string); (q.answer == "deploy/budget.yaml") != strings.Contains(note, q.answer) {
			t.Errorf("%q: the note %q should name the unindexed %s only when nothing scored high", q.query, note, "deploy/budget.yaml")
		}
		if q.answer == "sixteen weeks at full pay" && len(results) > 0 {
			if paths, _ := results[0].(map[string]any)["paths"].([]any); len(paths) != 2 {
				t.Errorf("%q: the two copies of the leave policy are not one result: %v", q.query, results)
			}
		}
	}
}
