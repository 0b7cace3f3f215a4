package embed

import (
	"bytes"
	"fmt"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

// The privacy check runs in a child process: ONNX Runtime initialises once
// per process, and whatever it writes at start-up must be observed from a
// clean start.
const childEnv = "EMBED_TEST_PRIVACY_CHILD"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(privacyChild())
	}
	os.Exit(m.Run())
}

// privacyChild creates an embedder from explicit paths, embeds, closes, and
// returns without running any test, so its stdout must stay empty.
func privacyChild() int {
	e, err := New(Config{
		ModelPath:     os.Getenv("EMBED_TEST_MODEL"),
		TokenizerPath: os.Getenv("EMBED_TEST_TOKENIZER"),
		ORTLibrary:    os.Getenv("EMBED_TEST_ORT"),
		Threads:       1,
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 2
	}
	if _, err := e.Embed(nil, []string{"nothing about this text may leave the process", "ni ici"}); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 3
	}
	if err := e.Close(); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 4
	}
	return 0
}

// TestWritesNothingUnderHome: a session and an embedding leave a fresh HOME
// and every XDG directory empty (ORT 1.30 writes a device id under HOME;
// 1.24.3 must not), and print nothing on stdout.
func TestWritesNothingUnderHome(t *testing.T) {
	files, err := model.Locate("")
	if err != nil {
		t.Fatal(err)
	}
	lib, err := model.ORTLibrary("")
	if err != nil {
		t.Fatal(err)
	}
	watched := map[string]string{}
	for _, v := range []string{"HOME", "XDG_CACHE_HOME", "XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_STATE_HOME", "TMPDIR"} {
		watched[v] = t.TempDir()
	}
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = []string{
		childEnv + "=1",
		"EMBED_TEST_MODEL=" + files.ONNX,
		"EMBED_TEST_TOKENIZER=" + files.Tokenizer,
		"EMBED_TEST_ORT=" + lib,
		"PATH=" + os.Getenv("PATH"),
	}
	for v, dir := range watched {
		cmd.Env = append(cmd.Env, v+"="+dir)
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("child: %v\nstderr:\n%s", err, stderr.String())
	}
	if stdout.Len() > 0 {
		t.Errorf("child printed to stdout: %q", stdout.String())
	}
	for v, dir := range watched {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if p != dir {
				t.Errorf("$%s: the runtime wrote %s", v, p)
			}
			return err
		})
	}
}
