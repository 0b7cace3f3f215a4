// Command fusion compares the three search modes offline: it opens each
// set's index that make eval-all left under bin/ (bin/eval-index-SET) in
// this process, asks every question with top_k 10 and the default
// threshold in dense, keyword and hybrid mode (the same code path the
// server runs), and prints every row at the passage and the document
// level, with hybrid's worst margin over the better of dense and keyword.
// The fusions, diversities and passage caps it once compared are no longer
// in the search path; their figures are in docs/search-fusion.md.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index/search"
)

func main() {
	sets := flag.String("sets", "godoc,manpages,crowded,scifact", "question sets")
	cache := flag.String("cache", "bin", "where make eval-all left the corpora and indexes")
	out := flag.String("out", "", "also write the report here")
	flag.StringVar(&eval.SciFactDir, "scifact", eval.SciFactDir, "BEIR SciFact's folder")
	flag.Parse()
	rows, err := measure(strings.Split(*sets, ","), *cache)
	if err != nil {
		slog.Error("fusion", "err", err)
		os.Exit(1)
	}
	report := table(rows) + margins(rows)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			slog.Error("fusion", "err", err)
			os.Exit(1)
		}
	}
}

// row is one set asked in one mode.
type row struct {
	Set, Mode string
	IR        bool
	Passage   eval.Scores   // hits as returned
	Doc       eval.Scores   // each file once, at its best passage
	BEIR      eval.IRScores // IR sets only
}

func measure(sets []string, cache string) ([]row, error) {
	ctx := context.Background()
	var rows []row
	for _, name := range sets {
		set, err := eval.SetNamed(name)
		if err != nil {
			return nil, err
		}
		c, _, err := set.Corpus(ctx, cache)
		if err != nil {
			return nil, err
		}
		qs, err := set.Load()
		if err != nil {
			return nil, err
		}
		index := filepath.Join(cache, "eval-index-"+set.Name)
		for _, mode := range []search.Mode{search.Dense, search.Keyword, search.Hybrid} {
			cfg := engine.Config{DataFolder: c.Dir, IndexFolder: index, ReadOnly: true, NoInitialReindex: true, SearchMode: mode}
			t := time.Now()
			outs, err := askEngine(ctx, cfg, qs)
			if err != nil {
				return nil, err
			}
			r := row{Set: set.Name, Mode: string(mode), IR: set.IR, Passage: eval.Score(outs), Doc: eval.Score(byDocument(outs))}
			if set.IR {
				r.BEIR = eval.ScoreIR(outs)
			}
			rows = append(rows, r)
			slog.Info("measured", "set", set.Name, "mode", r.Mode, "took", time.Since(t).Round(time.Millisecond),
				"top5_chars", top5Chars(outs))
		}
	}
	return rows, nil
}

// askEngine opens an engine on cfg's index and asks it every question.
func askEngine(ctx context.Context, cfg engine.Config, qs []eval.Question) ([]eval.Outcome, error) {
	eng, err := engine.New(cfg)
	if err != nil {
		return nil, err
	}
	defer eng.Close()
	eng.Start(ctx)
	// Search gives up on a model still loading after 5 s; on a busy
	// machine that would cost the first questions.
	if err := eng.WaitModel(ctx); err != nil {
		return nil, err
	}
	var outs []eval.Outcome
	for _, q := range qs {
		t := time.Now()
		res, err := eng.Search(ctx, search.Request{Query: q.Query, TopK: 10, ScoreThreshold: search.DefaultScoreThreshold})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.ID, err)
		}
		o := eval.Outcome{Question: q, Latency: time.Since(t)}
		for _, r := range res {
			o.Hits = append(o.Hits, eval.Hit{Path: r.Path, ChunkIndex: r.ChunkIndex, CharStart: r.CharStart, CharEnd: r.CharEnd, Text: r.Snippet})
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// top5Chars is the mean length in characters of a question's top 5
// passages as returned, summed over the five.
func top5Chars(outs []eval.Outcome) int {
	n := 0
	for _, o := range outs {
		for _, h := range o.Hits[:min(5, len(o.Hits))] {
			n += utf8.RuneCountInString(h.Text)
		}
	}
	return n / max(1, len(outs))
}

// byDocument keeps each file's first hit only.
func byDocument(outs []eval.Outcome) []eval.Outcome {
	docs := slices.Clone(outs)
	for i := range docs {
		seen := map[string]bool{}
		docs[i].Hits = slices.DeleteFunc(slices.Clone(docs[i].Hits), func(h eval.Hit) bool {
			dup := seen[h.Path]
			seen[h.Path] = true
			return dup
		})
	}
	return docs
}

// metrics are the figures the goals name for a row: hit@5, answer@5 and
// MRR@10 at the passage level, or nDCG@10, Recall@10 and MRR@10 on an IR
// set.
func (r row) metrics() []float64 {
	if r.IR {
		return []float64{r.BEIR.NDCG10, r.BEIR.R10, r.BEIR.MRR10}
	}
	return []float64{r.Passage.Hit5, r.Passage.Answer5, r.Passage.MRR10}
}

func table(rows []row) string {
	var sb strings.Builder
	last := ""
	for _, r := range rows {
		if r.Set != last {
			last = r.Set
			if r.IR {
				fmt.Fprintf(&sb, "\n### %s\n\n| variant | nDCG@10 | Recall@10 | MRR@10 | hit@5 (any relevant) |\n|---|---|---|---|---|\n", r.Set)
			} else {
				fmt.Fprintf(&sb, "\n### %s\n\n| variant | hit@1 | hit@5 | answer@5 | MRR@10 | doc hit@5 | doc MRR@10 | identifier hit@1 |\n|---|---|---|---|---|---|---|---|\n", r.Set)
			}
		}
		if r.IR {
			fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f |\n", r.Mode, r.BEIR.NDCG10, r.BEIR.R10, r.BEIR.MRR10, r.Doc.Hit5)
			continue
		}
		fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f (%d) |\n", r.Mode, r.Passage.Hit1, r.Passage.Hit5,
			r.Passage.Answer5, r.Passage.MRR10, r.Doc.Hit5, r.Doc.MRR10, r.Passage.IdentHit1, r.Passage.Identifiers)
	}
	return sb.String()
}

// margin is a hybrid row's worst difference from the better of dense and
// keyword (same set) over the goal's metrics.
func margin(h row, rows []row) float64 {
	worst := 1.0
	for i, m := range h.metrics() {
		best := 0.0
		for _, b := range rows {
			if b.Set == h.Set && b.Mode != string(search.Hybrid) {
				best = max(best, b.metrics()[i])
			}
		}
		worst = min(worst, m-best)
	}
	return worst
}

// margins lists each set's hybrid margin over the better of dense and
// keyword.
func margins(rows []row) string {
	var sb strings.Builder
	for _, r := range rows {
		if r.Mode == string(search.Hybrid) {
			fmt.Fprintf(&sb, "\nhybrid margin on %s: %+.3f\n", r.Set, margin(r, rows))
		}
	}
	return sb.String()
}
