package engine

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// A PDF that inflates to 1,500 MiB (stages/extract/testdata/hostile) is
// counted failed, not added with no chunks, and the failed list that
// `status` shows names it with the reason.
func TestPDFBombIsFailed(t *testing.T) {
	bomb, err := os.ReadFile(filepath.Join("..", "stages", "extract", "testdata", "hostile", "bomb-1500m.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	data := t.TempDir()
	writeCorpus(t, data, map[string]string{"alpaca.md": corpus["alpaca.md"], "bomb.pdf": string(bomb)})
	e := newEngine(t, Config{DataFolder: data})
	res := reindex(t, e, ReindexRequest{})
	checkCounts(t, "bomb", res, 1, 0, 0, 1, 1)
	if len(res.Failed) != 1 || res.Failed[0].Path != "bomb.pdf" || !strings.Contains(res.Failed[0].Reason, "decoded streams exceed 512 MB") {
		t.Errorf("reindex result's failed %+v, want bomb.pdf with its reason", res.Failed)
	}
	st, err := e.ReadStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed) != 1 || st.Failed[0].Path != "bomb.pdf" || !strings.Contains(st.Failed[0].Reason, "decoded streams exceed 512 MB") {
		t.Fatalf("failed list %+v, want bomb.pdf: decoded streams exceed 512 MB", st.Failed)
	}
}
