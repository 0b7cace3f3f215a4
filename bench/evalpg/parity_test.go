// Package evalpg checks the evaluation runner against a PostgreSQL store
// end to end on the repository's sample folder: the same questions through
// MCP on the index folder and on the database give the same top-5 files.
// The Go docs comparison (bench/cmd/eval -pg -compare) takes minutes of
// embedding; its figures are in BENCHMARKS.md.
package evalpg

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestSampleParity(t *testing.T) {
	ctx := context.Background()
	binary := filepath.Join(t.TempDir(), "micro-rag-mcp")
	if out, err := exec.Command("go", "build", "-o", binary, "github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp").CombinedOutput(); err != nil {
		t.Fatalf("building micro-rag-mcp: %v\n%s", err, out)
	}
	eval.SampleDir = "../../testdata/sample"
	c, _, err := eval.SampleCorpus(ctx, "")
	if err != nil {
		t.Fatal(err)
	}
	qs, err := eval.SampleQuestions()
	if err != nil {
		t.Fatal(err)
	}
	store := pgtest.Database(t)
	index := t.TempDir()
	for _, mode := range []string{"hybrid", "dense", "keyword"} {
		var runs [2][]eval.Outcome
		for i, st := range []string{"", store} {
			srv := eval.Server{Bin: binary, Data: c.Dir, Index: filepath.Join(index, fmt.Sprint(i)), Mode: mode, Inst: "A team's notes.", Store: st, Args: eval.Setting{TopK: 10}}
			if runs[i], err = srv.Run(ctx, qs); err != nil {
				t.Fatal(err)
			}
			chunks, err := srv.IndexChunks(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if len(chunks) != len(c.Docs) {
				t.Fatalf("%s, store %t: %d files indexed of %d", mode, st != "", len(chunks), len(c.Docs))
			}
			eval.FillWhole(runs[i], chunks, c.Dir)
		}
		p, err := eval.CompareTopFiles(runs[0], runs[1], 5)
		if err != nil {
			t.Fatal(err)
		}
		t.Logf("%s: %d questions, %d same top-5 files, %d in the same order", mode, p.Questions, p.SameFiles, p.SameOrder)
		if p.Questions != len(qs) || p.SameFiles*100 < 95*p.Questions {
			t.Errorf("%s: %d of %d questions have the same top-5 files (differ: %v)", mode, p.SameFiles, p.Questions, p.Differ)
		}
		a, b := eval.ScoreRow(mode, runs[0]), eval.ScoreRow(mode, runs[1])
		if a.Hit5 != b.Hit5 || a.MRR10 != b.MRR10 || a.Answer5Whole != b.Answer5Whole {
			t.Errorf("%s: hit@5 %.3f/%.3f, MRR@10 %.3f/%.3f, answer@5 whole-chunk %.3f/%.3f on the index folder / PostgreSQL",
				mode, a.Hit5, b.Hit5, a.MRR10, b.MRR10, a.Answer5Whole, b.Answer5Whole)
		}
	}
}
