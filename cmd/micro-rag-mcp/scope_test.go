package main

import (
	"context"
	"encoding/json"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/engine"
)

// reindexJSON runs reindex --json and returns its exit code, result and stderr.
func reindexJSON(t *testing.T, b backend, args ...string) (int, engine.ReindexResult, string) {
	t.Helper()
	code, stdout, stderr := b.run(t, append([]string{"reindex", "--json"}, args...)...)
	var res engine.ReindexResult
	if code == 0 {
		if err := json.Unmarshal([]byte(stdout), &res); err != nil {
			t.Fatalf("reindex --json: %v\n%s\n%s", err, stdout, stderr)
		}
	}
	return code, res, stderr
}

// statusOf runs status --json and decodes it.
func statusOf(t *testing.T, b backend, args ...string) engine.Status {
	t.Helper()
	code, stdout, stderr := b.run(t, append([]string{"status", "--json"}, args...)...)
	var st engine.Status
	if err := json.Unmarshal([]byte(stdout), &st); code != 0 || err != nil {
		t.Fatalf("status --json: exit %d, %v\n%s\n%s", code, err, stdout, stderr)
	}
	return st
}

// TestExtsNeverDropFiles: the extensions and exclude patterns of an index
// are recorded; a command without them uses the record, one that would
// remove indexed files is refused naming the flag and the recorded list,
// and only --change-exts / --change-exclude remove them.
func TestExtsNeverDropFiles(t *testing.T) { eachBackend(t, testExtsNeverDropFiles) }

func testExtsNeverDropFiles(t *testing.T, b backend) {
	data := copySample(t)
	if err := os.WriteFile(filepath.Join(data, "tides.json"), []byte(`{"port": "Skerry Point", "high water": "06:42"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	d := []string{"--data-folder", data}
	defaults := isearch.ExtList(engine.DefaultExts)
	code, res, stderr := reindexJSON(t, b, d...)
	if code != 0 || res.FilesAdded != 6 || strings.Join(res.Exts, ",") != defaults {
		t.Fatalf("first reindex: exit %d, %+v\n%s", code, res, stderr)
	}

	// The case of the issue: --exts csv would have removed every file.
	code, _, stderr = reindexJSON(t, b, append(d, "--exts", "json")...)
	list := isearch.ExtList(engine.DefaultExts)
	for _, want := range []string{"--exts leaves out " + list, "recorded list: " + list, "6 indexed files would be removed", "--change-exts", "--add-exts"} {
		if code != 2 || !strings.Contains(stderr, want) {
			t.Errorf("reindex --exts json: exit %d, stderr lacks %q:\n%s", code, want, stderr)
		}
	}
	if st := statusOf(t, b, d...); st.Files != 6 || st.ChangedDisk.Deleted != 0 || st.ChangedDisk.New != 0 {
		t.Errorf("status after the refusal: %d files, changed %+v", st.Files, st.ChangedDisk)
	}

	// Adding is never refused, and the record keeps it.
	for _, add := range [][]string{{"--add-exts", ".json"}, {"--exts", "+json"}} {
		code, res, stderr = reindexJSON(t, b, append(d, add...)...)
		if code != 0 || res.FilesRemoved != 0 || !strings.Contains(strings.Join(res.Exts, ","), ".json") {
			t.Errorf("reindex %v: exit %d, %+v\n%s", add, code, res, stderr)
		}
	}
	if res.FilesAdded != 0 {
		t.Errorf("second add reindexed the json file again: %+v", res)
	}
	code, res, stderr = reindexJSON(t, b, d...)
	if code != 0 || res.FilesRemoved != 0 || res.FilesAdded != 0 || strings.Join(res.Exts, ",") != defaults+",.json" {
		t.Errorf("reindex without flags after --add-exts: exit %d, %+v\n%s", code, res, stderr)
	}
	st := statusOf(t, b, d...)
	if st.Files != 7 || st.ChangedDisk.Deleted != 0 || strings.Join(st.Exts, ",") != defaults+",.json" {
		t.Errorf("status without flags: %d files, exts %v, changed %+v", st.Files, st.Exts, st.ChangedDisk)
	}
	// Status with a narrower list previews what --change-exts would drop.
	if st := statusOf(t, b, append(d, "--exts", "json")...); st.ChangedDisk.Deleted != 6 {
		t.Errorf("status --exts json: changed %+v", st.ChangedDisk)
	}

	// Excludes: adding one is refused, --change-exclude applies it, and
	// later runs without --exclude keep it.
	code, _, stderr = reindexJSON(t, b, append(d, "--exclude", "ops/")...)
	if code != 2 || !strings.Contains(stderr, "--exclude adds ops/") || !strings.Contains(stderr, "--change-exclude") {
		t.Errorf("reindex --exclude ops/: exit %d\n%s", code, stderr)
	}
	code, res, stderr = reindexJSON(t, b, append(d, "--exclude", "ops/", "--change-exclude")...)
	if code != 0 || res.FilesRemoved != 1 || strings.Join(res.Excludes, ",") != "ops/" {
		t.Errorf("reindex --exclude ops/ --change-exclude: exit %d, %+v\n%s", code, res, stderr)
	}
	code, res, stderr = reindexJSON(t, b, d...)
	if code != 0 || res.FilesAdded != 0 || res.FilesRemoved != 0 || strings.Join(res.Excludes, ",") != "ops/" {
		t.Errorf("reindex without --exclude keeps the recorded pattern: exit %d, %+v\n%s", code, res, stderr)
	}

	// --change-exts removes what the new list leaves out, and says so.
	code, res, stderr = reindexJSON(t, b, append(d, "--exts", ".txt", "--change-exts")...)
	if code != 0 || res.FilesRemoved != 4 || strings.Join(res.Exts, ",") != ".txt" {
		t.Errorf("reindex --exts .txt --change-exts: exit %d, %+v\n%s", code, res, stderr)
	}
	if st := statusOf(t, b, d...); st.Files != 2 || st.ChangedDisk.Deleted != 0 || st.ChangedDisk.New != 0 {
		t.Errorf("status after --change-exts: %d files, changed %+v", st.Files, st.ChangedDisk)
	}
}

// TestServerKeepsRecordedExts: a server whose --exts would leave out
// recorded extensions refuses its reindexes (the initial one and the
// tool's) and keeps serving the index as it was.
func TestServerKeepsRecordedExts(t *testing.T) { eachBackend(t, testServerKeepsRecordedExts) }

func testServerKeepsRecordedExts(t *testing.T, b backend) {
	data := copySample(t)
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	c := b.startServer(t, data, "--watch=false", "--exts", "csv")
	res := reindexWhenFree(t, c)
	text := toolText(res)
	if !res.IsError {
		t.Fatalf("reindex tool accepted --exts csv: %s", text)
	}
	// .csv is a default format, so --exts csv leaves out all the others.
	others := slices.DeleteFunc(slices.Clone(engine.DefaultExts), func(e string) bool { return e == ".csv" })
	if !strings.Contains(text, "--exts leaves out "+isearch.ExtList(others)) || !strings.Contains(text, "--change-exts") {
		t.Errorf("reindex tool error does not name --exts and the recorded list: %s", text)
	}
	if st := statusOf(t, b, "--data-folder", data); st.Files != 6 {
		t.Errorf("the refused server changed the index: %d files", st.Files)
	}
	found := search(t, c, sampleQueries[0].query, 3, 0)
	if len(found) == 0 || found[0].Path != sampleQueries[0].path {
		t.Errorf("search on the kept index: %+v", found)
	}
}

// reindexWhenFree calls the reindex tool, again while the server's own
// initial run holds the index, and returns the first other answer.
func reindexWhenFree(t *testing.T, c *client.Client) *mcp.CallToolResult {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), indexTimeout)
	defer cancel()
	for {
		res, err := callTool(ctx, c, "reindex", map[string]any{})
		if err != nil {
			t.Fatal(err)
		}
		if !res.IsError || !strings.HasPrefix(toolText(res), "busy:") {
			return res
		}
		time.Sleep(300 * time.Millisecond)
	}
}
