package main

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// TestDefaultModelIsQ8: a server started without --model indexes with the
// project's int8 file (the index's version names all-MiniLM-L6-v2-q8 and
// that file's hash), and one started with --model all-MiniLM-L6-v2 rebuilds
// the index with the fp32 file; a search without --model then names the
// flag that opens it. Each server's log names the ONNX Runtime it loaded,
// the one make setup installs, with no warning about its version.
func TestDefaultModelIsQ8(t *testing.T) {
	checkRuntime := func(logs string) {
		if !strings.Contains(logs, "onnxruntime="+model.ORTTested+" ") || strings.Contains(logs, "this build is measured with") {
			t.Errorf("the log does not name ONNX Runtime %s without a warning:\n%s", model.ORTTested, logs)
		}
	}
	data, idx := copySample(t), t.TempDir()
	for _, step := range []struct {
		flags []string
		name  string
	}{
		{nil, model.Q8Name},
		{[]string{"--model", model.FP32Name}, model.FP32Name},
	} {
		c := startServerEnv(t, nil, checkRuntime, data, append([]string{"--index-folder", idx}, step.flags...)...)
		reindex(t, c, nil) // after the server's own first run, which builds the index
		waitForTop(t, c, sampleQueries[1].query, sampleQueries[1].path)
		c.Close()
		if got, want := indexModel(t, data, idx), step.name+" sha256:"+fileHash(t, step.name)[:16]; got != want {
			t.Errorf("server with flags %q: index built by %q, want %q", step.flags, got, want)
		}
	}
	code, _, stderr := runBinary(t, "search", "--data-folder", data, "--index-folder", idx, "parental leave")
	if code != 2 || !strings.Contains(stderr, "built by the model "+model.FP32Name+", not "+model.Q8Name) || !strings.Contains(stderr, "add --model "+model.FP32Name) {
		t.Errorf("search without --model on the fp32 index: exit %d\n%s", code, stderr)
	}
}

// indexModel is the model the status command reads from the index.
func indexModel(t *testing.T, data, idx string) string {
	t.Helper()
	code, stdout, stderr := runBinary(t, "status", "--json", "--data-folder", data, "--index-folder", idx)
	if code != 0 {
		t.Fatalf("status: exit %d\n%s", code, stderr)
	}
	var st struct{ Model string }
	if err := json.Unmarshal([]byte(stdout), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, stdout)
	}
	return st.Model
}

// fileHash is the SHA-256 of the installed ONNX file of the model called name.
func fileHash(t *testing.T, name string) string {
	t.Helper()
	m, err := model.Lookup(name)
	if err != nil {
		t.Fatal(err)
	}
	files, err := m.Locate("")
	if err != nil {
		t.Fatalf("%v (make setup installs it)", err)
	}
	f, err := os.Open(files.ONNX)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}
