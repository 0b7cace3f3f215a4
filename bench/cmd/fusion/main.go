// Command fusion compares ways of ranking offline: it opens each set's
// index that make eval-all left under bin/ (bin/eval-index-SET) in this
// process, asks every question with top_k 10 and the default threshold in
// dense and keyword mode and in hybrid mode under every fusion and
// diversity given (engine.Config's Fusion and Diversity: the same code
// path the server runs), and prints every row at the passage and the
// document level. With -loso it also chooses a variant leave-one-set-out:
// for each set held out, the variant whose worst margin over max(dense,
// keyword) on the other sets is largest, reported on the held-out set.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

func main() {
	sets := flag.String("sets", "godoc,manpages,crowded,scifact", "question sets")
	cache := flag.String("cache", "bin", "where make eval-all left the corpora and indexes")
	fusions := flag.String("fusions", "share", "hybrid fusions to compare, separated by ';' (engine.Config.Fusion syntax)")
	flag.StringVar(&base, "base", string(engine.FusionShare), "the fusion dense and keyword rows run under (keyword mode takes its calibration from it)")
	divs := flag.String("diversity", "", "diversities to compare, separated by ';' (\"\" is none)")
	flag.StringVar(&caps, "passage-caps", "0", "passage caps to compare (engine.Config.PassageCap: 0 = the default, search.DefaultPassageCap; -1 = whole passages), comma-separated")
	loso := flag.Bool("loso", false, "choose a hybrid variant leave-one-set-out")
	out := flag.String("out", "", "also write the report here")
	raw := flag.String("json", "", "also write every row as JSON here")
	flag.BoolVar(&misses, "misses", false, "log every question a passage cap loses (answered by whole passages, not by the capped ones): where the answer sits against the window")
	flag.BoolVar(&verbose, "v", false, "log every question a hybrid variant ranks below dense, with the first hit's explanation")
	from := flag.String("from", "", "instead of measuring, read the rows of earlier -json files (comma-separated)")
	flag.StringVar(&eval.SciFactDir, "scifact", eval.SciFactDir, "BEIR SciFact's folder")
	flag.Parse()
	var rows []row
	var err error
	if *from != "" {
		rows, err = load(strings.Split(*from, ","))
	} else {
		rows, err = measure(strings.Split(*sets, ","), *cache, strings.Split(*fusions, ";"), strings.Split(*divs, ";"))
	}
	if err != nil {
		slog.Error("fusion", "err", err)
		os.Exit(1)
	}
	report := table(rows)
	if *loso {
		report += leaveOneOut(rows, strings.Split(*sets, ","))
	}
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			slog.Error("fusion", "err", err)
			os.Exit(1)
		}
	}
	if *raw != "" {
		b, _ := json.MarshalIndent(rows, "", " ")
		if err := os.WriteFile(*raw, b, 0o644); err != nil {
			slog.Error("fusion", "err", err)
			os.Exit(1)
		}
	}
}

// load reads rows written by -json.
func load(files []string) ([]row, error) {
	var rows []row
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return nil, err
		}
		var rs []row
		if err := json.Unmarshal(b, &rs); err != nil {
			return nil, fmt.Errorf("%s: %w", f, err)
		}
		rows = append(rows, rs...)
	}
	return rows, nil
}

// row is one set asked in one mode and variant.
type row struct {
	Set, Mode, Fusion, Diversity string
	Cap                          int `json:",omitempty"` // engine.Config.PassageCap (0: the default)
	IR                           bool
	Passage                      eval.Scores   // hits as returned
	Doc                          eval.Scores   // each file once, at its best passage
	BEIR                         eval.IRScores // IR sets only
}

func (r row) name() string {
	n := r.Mode
	if r.Mode != string(engine.SearchDense) && r.Fusion != "" {
		n += " " + r.Fusion
	}
	if r.Diversity != "" {
		n += " | " + r.Diversity
	}
	switch {
	case r.Cap < 0:
		n += " | whole"
	case r.Cap > 0:
		n += fmt.Sprintf(" | cap %d", r.Cap)
	}
	return n
}

var (
	verbose bool
	misses  bool
	base    string
	caps    string
)

func measure(sets []string, cache string, fusions, divs []string) ([]row, error) {
	ctx := context.Background()
	var rows []row
	for _, name := range sets {
		denseRank := map[string]int{}
		whole := map[string][]eval.Outcome{} // outcomes with whole passages by mode, fusion and diversity
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
		for _, mode := range []engine.SearchMode{engine.SearchDense, engine.SearchKeyword, engine.SearchHybrid} {
			variants := []string{base}
			if mode == engine.SearchHybrid {
				variants = fusions
			}
			for _, f := range variants {
				for _, dc := range variantsWithCaps(divs) {
					d := dc.div
					cfg := engine.Config{DataFolder: c.Dir, IndexFolder: index, ReadOnly: true,
						NoInitialReindex: true, SearchMode: mode, Fusion: engine.Fusion(f), Diversity: d, PassageCap: dc.cap}
					t := time.Now()
					outs, err := askEngine(ctx, cfg, qs)
					if err != nil {
						return nil, err
					}
					r := row{Set: set.Name, Mode: string(mode), Fusion: map[bool]string{true: f}[mode != engine.SearchDense], Diversity: d, Cap: dc.cap, IR: set.IR,
						Passage: eval.Score(outs), Doc: eval.Score(byDocument(outs))}
					if set.IR {
						r.BEIR = eval.ScoreIR(outs)
					}
					rows = append(rows, r)
					key := string(mode) + "|" + f + "|" + d
					if dc.cap < 0 {
						whole[key] = outs
					} else if misses && whole[key] != nil {
						logMisses(r.name(), whole[key], outs)
					}
					for _, o := range outs {
						rk := eval.Rank(o.Question.Target, o.Hits)
						if mode == engine.SearchDense && d == "" {
							denseRank[o.Question.ID] = rk
						}
						if verbose && mode == engine.SearchHybrid && (rk == 0 && denseRank[o.Question.ID] > 0 || rk > denseRank[o.Question.ID] && denseRank[o.Question.ID] > 0) {
							first := o.Hits[0]
							fmt.Fprintf(os.Stderr, "%s %s: %s rank %d, dense %d; first %s %s\n", r.name(), o.Question.ID, o.Question.Target,
								rk, denseRank[o.Question.ID], first.Path, first.Why)
						}
					}
					slog.Info("measured", "set", set.Name, "variant", r.name(), "took", time.Since(t).Round(time.Millisecond),
						"top5_chars", top5Chars(outs))
				}
			}
		}
	}
	return rows, nil
}

type divCap struct {
	div string
	cap int
}

// variantsWithCaps pairs every diversity with every -passage-caps value.
func variantsWithCaps(divs []string) []divCap {
	var out []divCap
	for _, d := range divs {
		for _, c := range strings.Split(caps, ",") {
			n, err := strconv.Atoi(strings.TrimSpace(c))
			if err != nil {
				slog.Error("fusion: -passage-caps", "err", err)
				os.Exit(2)
			}
			out = append(out, divCap{d, n})
		}
	}
	return out
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
	return ask(ctx, eng, qs)
}

func ask(ctx context.Context, eng *engine.Engine, qs []eval.Question) ([]eval.Outcome, error) {
	var outs []eval.Outcome
	for _, q := range qs {
		t := time.Now()
		res, err := eng.Search(ctx, engine.SearchRequest{Query: q.Query, TopK: 10, ScoreThreshold: search.DefaultScoreThreshold, Explain: verbose})
		if err != nil {
			return nil, fmt.Errorf("%s: %w", q.ID, err)
		}
		o := eval.Outcome{Question: q, Latency: time.Since(t)}
		for _, r := range res {
			h := eval.Hit{Path: r.Path, ChunkIndex: r.ChunkIndex, CharStart: r.CharStart, CharEnd: r.CharEnd, Text: r.Snippet}
			if x := r.Explain; x != nil {
				h.Why = fmt.Sprintf("cos %.3f bm25 %.2f k %.3f share %.2f spec %.2f fused %.3f", x.Cosine, x.BM25, x.Keyword, x.Share, x.Specificity, x.Fused)
			}
			o.Hits = append(o.Hits, h)
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// logMisses prints each question answered in the top 5 by whole passages
// (-passage-caps -1, listed first) but not by capped ones (same ranking): per top-5 hit of the target whose
// whole passage holds the answer, the passage's length, the window's start
// and length in it and the answer's offset (collapsed characters).
func logMisses(name string, whole, capped []eval.Outcome) {
	a5 := func(o eval.Outcome) bool { return eval.Score([]eval.Outcome{o}).Answer5 > 0 }
	norm := func(s string) string { return strings.ToLower(strings.Join(strings.Fields(s), " ")) }
	for i, w := range whole {
		c := capped[i]
		if !a5(w) || a5(c) {
			continue
		}
		fmt.Fprintf(os.Stderr, "%s %s: %q answer %q\n", name, w.Question.ID, w.Question.Query, w.Question.Answer)
		for j, h := range w.Hits[:min(5, len(w.Hits))] {
			t := norm(h.Text)
			at := strings.Index(t, norm(w.Question.Answer))
			if h.Path != w.Question.Target || at < 0 || j >= len(c.Hits) {
				continue
			}
			win := norm(c.Hits[j].Text)
			from := strings.Index(t, win[:min(60, len(win))])
			fmt.Fprintf(os.Stderr, "  rank %d: passage %d, window at %d len %d, answer at %d\n", j+1, len(t), from, len(win), at)
		}
	}
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
	docs := make([]eval.Outcome, len(outs))
	for i, o := range outs {
		docs[i] = o
		docs[i].Hits = nil
		seen := map[string]bool{}
		for _, h := range o.Hits {
			if !seen[h.Path] {
				seen[h.Path] = true
				docs[i].Hits = append(docs[i].Hits, h)
			}
		}
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
			fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f |\n", r.name(), r.BEIR.NDCG10, r.BEIR.R10, r.BEIR.MRR10, r.Doc.Hit5)
			continue
		}
		fmt.Fprintf(&sb, "| %s | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f | %.3f (%d) |\n", r.name(), r.Passage.Hit1, r.Passage.Hit5,
			r.Passage.Answer5, r.Passage.MRR10, r.Doc.Hit5, r.Doc.MRR10, r.Passage.IdentHit1, r.Passage.Identifiers)
	}
	return sb.String()
}

// margin is a hybrid row's worst difference from the better of dense and
// keyword (same set and diversity) over the goal's metrics.
func margin(h row, rows []row) float64 {
	worst := 1.0
	var base []row
	for _, r := range rows {
		if r.Set == h.Set && r.Diversity == h.Diversity && r.Mode != string(engine.SearchHybrid) {
			base = append(base, r)
		}
	}
	for i, m := range h.metrics() {
		best := 0.0
		for _, b := range base {
			best = max(best, b.metrics()[i])
		}
		worst = min(worst, m-best)
	}
	return worst
}

// leaveOneOut picks, for each held-out set, the hybrid variant with the
// largest worst margin over the other sets (ties: the larger mean of
// their metrics), and shows the held-out set's rows with it.
func leaveOneOut(rows []row, sets []string) string {
	var sb strings.Builder
	sb.WriteString("\n## Leave one set out\n")
	variant := func(r row) string { return r.Fusion + " | " + r.Diversity }
	for _, out := range sets {
		type score struct{ worst, mean float64 }
		byVariant := map[string]*score{}
		var order []string
		for _, r := range rows {
			if r.Mode != string(engine.SearchHybrid) || r.Set == out {
				continue
			}
			s, ok := byVariant[variant(r)]
			if !ok {
				s = &score{worst: 1}
				byVariant[variant(r)] = s
				order = append(order, variant(r))
			}
			s.worst = min(s.worst, margin(r, rows))
			for _, m := range r.metrics() {
				s.mean += m
			}
		}
		best := ""
		for _, v := range order {
			if b := byVariant[best]; best == "" || byVariant[v].worst > b.worst+1e-9 ||
				byVariant[v].worst > b.worst-1e-9 && byVariant[v].mean > b.mean {
				best = v
			}
		}
		if best == "" {
			continue
		}
		fmt.Fprintf(&sb, "\nHeld out **%s**; chosen on the others: `%s` (worst margin there %+.3f)\n\n", out, best, byVariant[best].worst)
		var held []row
		for _, r := range rows {
			if r.Set == out && (r.Mode != string(engine.SearchHybrid) && r.Diversity == strings.SplitN(best, " | ", 2)[1] ||
				r.Mode == string(engine.SearchHybrid) && variant(r) == best) {
				held = append(held, r)
			}
		}
		sb.WriteString(strings.TrimPrefix(table(held), "\n"))
		for _, r := range held {
			if r.Mode == string(engine.SearchHybrid) {
				fmt.Fprintf(&sb, "\nmargin on %s: %+.3f\n", out, margin(r, rows))
			}
		}
	}
	return sb.String()
}
