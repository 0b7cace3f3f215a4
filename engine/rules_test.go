package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
)

// TestRuleFilesFailClosed runs ignore rules through reindex, search and
// status: a .gitignore that starts with a byte-order mark still excludes
// its file; a rule file that cannot be used withholds its folder (its
// files leave the index and are not found) and the run and status name
// it, until it is fixed.
func TestRuleFilesFailClosed(t *testing.T) {
	ctx := context.Background()
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	writeCorpus(t, data, map[string]string{".gitignore": "\ufeffkernel.txt\n"})
	e := newEngine(t, Config{DataFolder: data, IndexFolder: t.TempDir()})
	checkCounts(t, "byte-order mark", reindex(t, e, ReindexRequest{}), 3, 0, 0, 0, 3)
	if indexed(e, "kernel.txt") {
		t.Fatal("kernel.txt is indexed though the .gitignore names it")
	}

	outside := filepath.Join(t.TempDir(), "rules")
	if err := os.WriteFile(outside, []byte("nothing.md\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	rule := filepath.Join(data, "notes", ".micro-rag-ignore")
	removed := 2
	for _, c := range []struct {
		name   string
		make   func() error
		reason string
	}{
		{"fifo", func() error { return syscall.Mkfifo(rule, 0o644) }, "a FIFO"},
		{"link outside", func() error { return os.Symlink(outside, rule) }, "outside the data folder"},
	} {
		if err := c.make(); err != nil {
			t.Fatal(err)
		}
		checkCounts(t, c.name, reindex(t, e, ReindexRequest{}), 0, 0, removed, 1, 1)
		removed = 0
		for _, p := range []string{"notes/sourdough.md", "notes/tides.txt"} {
			if indexed(e, p) {
				t.Errorf("%s: %s is still indexed", c.name, p)
			}
		}
		for _, r := range search(t, e, "sourdough starter of wild yeast fed with flour") {
			if strings.HasPrefix(r.Path, "notes/") {
				t.Errorf("%s: %s is served", c.name, r.Path)
			}
		}
		// A run over changed paths inside the folder (as watching makes)
		// withholds it too, and the failure is listed once.
		if res, err := e.run(ctx, ReindexRequest{}, activityWatch, []string{"notes/tides.txt"}, nil); err != nil || res.FilesFailed != 1 {
			t.Errorf("%s: scoped run %+v, %v", c.name, res, err)
		}
		st, err := e.ReadStatus(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if len(st.Failed) != 1 || st.Failed[0].Path != "notes/.micro-rag-ignore" || !strings.Contains(st.Failed[0].Reason, c.reason) {
			t.Errorf("%s: status lists failed %+v, want notes/.micro-rag-ignore with %q", c.name, st.Failed, c.reason)
		}
		if err := os.Remove(rule); err != nil {
			t.Fatal(err)
		}
	}
	checkCounts(t, "fixed", reindex(t, e, ReindexRequest{}), 2, 0, 0, 0, 3)
	if st, err := e.ReadStatus(ctx); err != nil || len(st.Failed) != 0 {
		t.Errorf("after the fix, status lists failed %+v (%v)", st.Failed, err)
	}
}
