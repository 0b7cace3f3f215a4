package main

// Truthful answers through a real MCP client: a broken install is a tool
// error naming cause and fix; while indexing runs, search says so and busy
// says what runs and how far it is.

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
)

func TestE2EBrokenInstallIsAToolError(t *testing.T) { eachBackend(t, testE2EBrokenInstallIsAToolError) }

func testE2EBrokenInstallIsAToolError(t *testing.T, b backend) {
	notALibrary := filepath.Join(t.TempDir(), "libonnxruntime.so")
	if err := os.WriteFile(notALibrary, []byte("this is not a shared library\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	emptyModelDir := t.TempDir()
	for _, tc := range []struct {
		name     string
		flags    []string
		wantFix  string
		wantCuse string
	}{
		{"ort-lib is not a library", []string{"--ort-lib", notALibrary}, "--ort-lib", notALibrary},
		{"model folder without a model", []string{"--model-dir", emptyModelDir}, "--model-dir", emptyModelDir},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data := copySample(t)
			c := b.startServer(t, data, append([]string{"--index-folder", filepath.Join(t.TempDir(), "idx")}, tc.flags...)...)
			ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
			defer cancel()
			for _, call := range []struct {
				tool string
				args map[string]any
			}{
				{"search", map[string]any{"query": "parental leave"}},
				{"reindex", map[string]any{}},
			} {
				res, err := callTool(ctx, c, call.tool, call.args)
				if err != nil {
					t.Fatal(err)
				}
				text := toolText(res)
				if !res.IsError {
					t.Fatalf("%s answered without error on a broken install: %s", call.tool, text)
				}
				if !strings.Contains(text, tc.wantCuse) || !strings.Contains(text, "To fix:") || !strings.Contains(text, tc.wantFix) {
					t.Errorf("%s error %q does not name the cause (%s) and the fix (%s)", call.tool, text, tc.wantCuse, tc.wantFix)
				}
				if strings.Contains(text, "No passages matched") {
					t.Errorf("%s error still reads like an empty result: %q", call.tool, text)
				}
			}
		})
	}
}

// While the initial indexing runs, search results carry index_state and
// say they may be incomplete, and a reindex waits for it, then runs.
func TestE2EIndexingStateAndBusy(t *testing.T) { eachBackend(t, testE2EIndexingStateAndBusy) }

func testE2EIndexingStateAndBusy(t *testing.T, b backend) {
	c := b.startServer(t, bigFolder(t), "--index-folder", filepath.Join(t.TempDir(), "idx"))
	ctx, cancel := context.WithTimeout(context.Background(), indexTimeout)
	defer cancel()
	var out mcpserver.ToolOutput
	var text string
	for {
		res, err := callTool(ctx, c, "search", map[string]any{"query": "warehouse ledger"})
		if err != nil {
			t.Fatal(err)
		}
		if res.IsError {
			t.Fatalf("search error: %s", toolText(res))
		}
		out = mcpserver.ToolOutput{}
		decode(t, res.StructuredContent, &out)
		text = toolText(res)
		if out.IndexState != nil && out.IndexState.Indexing && out.IndexState.FilesTotal > 0 {
			break
		}
		if ctx.Err() != nil {
			t.Fatal("search never reported a running indexing")
		}
		time.Sleep(50 * time.Millisecond)
	}
	st := out.IndexState
	if st.Activity != "initial indexing" || st.Since.IsZero() || st.FilesDone > st.FilesTotal {
		t.Errorf("index_state %+v", *st)
	}
	if !strings.Contains(text, "Results may be incomplete") || !strings.Contains(text, "initial indexing") {
		t.Errorf("search text does not say results may be incomplete: %q", text)
	}

	// The reindex waits for the whole initial indexing (engine's
	// TestReindexWaitsForInitialIndexing): here it must not be refused.
	rctx, rcancel := context.WithTimeout(ctx, 5*time.Second)
	res, err := callTool(rctx, c, "reindex", map[string]any{})
	rcancel()
	switch {
	case err != nil && rctx.Err() == nil:
		t.Fatal(err)
	case err == nil && (res.IsError || !strings.HasPrefix(toolText(res), "Reindexed in ") && !strings.HasPrefix(toolText(res), "Waited ")):
		t.Fatalf("reindex during the initial indexing answered %q (error %v), want it to wait and run", toolText(res), res.IsError)
	case err == nil:
		// A wait worth saying is said apart from the run's own time.
		var out struct {
			WaitedMS int64 `json:"waited_ms"`
		}
		raw, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(raw, &out); err != nil {
			t.Fatal(err)
		}
		if said := strings.HasPrefix(toolText(res), "Waited "); said != (out.WaitedMS >= 1000) {
			t.Errorf("waited %d ms, text %q", out.WaitedMS, toolText(res))
		}
	}
}

func TestToolTitlesNameTheInstance(t *testing.T) {
	for _, tool := range []mcp.Tool{mcpserver.SearchTool("team handbook"), mcpserver.ReindexTool("team handbook")} {
		if !strings.Contains(tool.Title, "team handbook") || !strings.Contains(tool.Description, `"team handbook"`) {
			t.Errorf("%s: title %q, description %q do not name the instance", tool.Name, tool.Title, tool.Description)
		}
		if !strings.Contains(tool.Description, "by itself at start") && !strings.Contains(tool.Description, "built at start") {
			t.Errorf("%s: description does not say indexing runs by itself: %q", tool.Name, tool.Description)
		}
	}
	if d := mcpserver.SearchTool("x").Description; !strings.Contains(d, "score from 0 to 1") {
		t.Errorf("search description does not say what a score means: %q", d)
	}
}

// status reads the index alone (a broken ONNX Runtime path does not
// matter), names the files the last run could not read, and counts what
// changed on disk since.
func TestStatusWithoutModel(t *testing.T) { eachBackend(t, testStatusWithoutModel) }

func testStatusWithoutModel(t *testing.T, b backend) {
	data := copySample(t)
	if err := os.WriteFile(filepath.Join(data, "broken.pdf"), []byte("%PDF-1.7 this is not really a PDF"), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	os.WriteFile(filepath.Join(data, "new-note.md"), []byte("A note written after the reindex."), 0o644)
	os.Remove(filepath.Join(data, "postmortem-checkout-outage.txt"))
	later := time.Now().Add(2 * time.Second)
	os.Chtimes(filepath.Join(data, "release-notes-2.4.txt"), later, later)

	code, stdout, stderr := b.run(t, "status", "--data-folder", data, "--ort-lib", "/nonexistent/libonnxruntime.so")
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	for _, want := range []string{"files:", "chunks:", "tombstones:", "model:", "index size:", "last reindex:",
		"changed on disk since:  1 new, 1 modified, 1 deleted", "new-note.md", "failed files:", "broken.pdf: "} {
		if !strings.Contains(stdout, want) {
			t.Errorf("status lacks %q:\n%s", want, stdout)
		}
	}
	if stderr != "" {
		t.Errorf("status is not quiet by default: %q", stderr)
	}
}

// The server follows the folder by itself: a saved file is found, and a
// file a new .micro-rag-ignore names disappears, without a reindex call.
func TestE2EWatchFollowsTheFolder(t *testing.T) { eachBackend(t, testE2EWatchFollowsTheFolder) }

func testE2EWatchFollowsTheFolder(t *testing.T, b backend) {
	data := copySample(t)
	c := b.startServer(t, data)
	waitForTop(t, c, sampleQueries[0].query, sampleQueries[0].path)
	query := "the harbour pilot logs every tanker that anchors beyond the breakwater"
	os.WriteFile(filepath.Join(data, "harbour-log.md"), []byte("The harbour pilot logs every tanker that anchors beyond the breakwater at night."), 0o644)
	waitForTop(t, c, query, "harbour-log.md")

	os.WriteFile(filepath.Join(data, ".micro-rag-ignore"), []byte("harbour-log.md\n"), 0o644)
	deadline := time.Now().Add(indexTimeout)
	for {
		found := false
		for _, r := range search(t, c, query, 5, 0) {
			found = found || r.Path == "harbour-log.md"
		}
		if !found {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("a file named in a new .micro-rag-ignore is still found")
		}
		time.Sleep(100 * time.Millisecond)
	}
}
