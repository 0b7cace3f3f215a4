package engine

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// TestStopMidEmbeddingRecordsNoFailure: a reindex stopped while the model
// embeds (as when the client closes stdin) lists none of its files as
// failed, in the run's record or in status; the same engine then answers
// a search (a query embedding after the stopped batch) and the next run
// indexes the rest without failures.
func TestStopMidEmbeddingRecordsNoFailure(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: filepath.Join(t.TempDir(), "idx")})
	checkCounts(t, "base", reindex(t, e, ReindexRequest{}), 4, 0, 0, 0, 4)
	big := map[string]string{}
	for i := range 40 {
		big[fmt.Sprintf("doc%02d.txt", i)] = strings.Repeat(fmt.Sprintf("Paragraph %d of a long report about harbour logistics and cranes. ", i), 60)
	}
	writeCorpus(t, data, big)

	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var atStop pipeline.Progress
	_, err := e.Reindex(ctx, ReindexRequest{}, func(p pipeline.Progress) {
		if ctx.Err() == nil && p.ChunksDone > 0 && p.ChunksDone < p.ChunksTotal {
			atStop = p
			cancel()
		}
	})
	if !errors.Is(err, context.Canceled) || atStop.ChunksDone == 0 {
		t.Fatalf("reindex stopped at %+v: %v, want it cancelled while embedding", atStop, err)
	}
	st, err := e.ReadStatus(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if len(st.Failed) != 0 || st.LastRunError != "" || st.Integrity != IntegrityOK {
		t.Errorf("status after the stop: failed %v, last run error %q, integrity %q", st.Failed, st.LastRunError, st.Integrity)
	}
	if lr, err := e.readLastRun(); err != nil || len(lr.Failures) != 0 || lr.Error != "" {
		t.Errorf("%s after the stop: failures %v, error %q (%v)", LastRunFile, lr.Failures, lr.Error, err)
	}
	if r := top(t, e, "wild yeast culture"); r.Path != "notes/sourdough.md" {
		t.Fatalf("search after the stop: %+v", r)
	}
	res := reindex(t, e, ReindexRequest{})
	if res.FilesFailed != 0 || len(res.Failed) != 0 {
		t.Errorf("the run after the stop failed %d files: %v", res.FilesFailed, res.Failed)
	}
	if st, err = e.ReadStatus(context.Background()); err != nil || st.Files != 44 || len(st.Failed) != 0 {
		t.Errorf("status after the next run: %d files, failed %v (%v); want 44 and none", st.Files, st.Failed, err)
	}
}
