// Command noise measures whether the default score threshold means
// something: it opens each set's cached index (bin/eval-index-SET, or
// bin/eval-index-SET-MODEL with -model; make them with bench/cmd/eval) in
// this process and, in every search mode, asks the set's real questions and
// its no-answer queries (bench/eval/noanswer.jsonl) at the threshold, and
// again at 0. It prints per set and mode the share of no-answer queries
// that return nothing (precision of "nothing found"), the real questions
// that return nothing, and hit@5 / answer@5 (nDCG@10 on SciFact) with and
// without the threshold. -json writes every query's top scores and their
// parts, for choosing a calibration offline.
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log/slog"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index/search"
)

func main() {
	sets := flag.String("sets", "godoc,manpages,crowded,scifact,sample", "question sets")
	cache := flag.String("cache", "bin", "where bench/cmd/eval left the corpora and indexes")
	modelName := flag.String("model", "", "the indexes' model (default: the default model, index bin/eval-index-SET)")
	modes := flag.String("modes", "dense,keyword,hybrid", "search modes")
	threshold := flag.Float64("threshold", search.DefaultScoreThreshold, "the score threshold to judge")
	out := flag.String("out", "", "also write the report here")
	dump := flag.String("json", "", "also write every query's top scores here")
	flag.StringVar(&eval.SciFactDir, "scifact", eval.SciFactDir, "BEIR SciFact's folder")
	flag.Parse()
	rows, queries, err := measure(context.Background(), strings.Split(*sets, ","), *cache, *modelName, strings.Split(*modes, ","), *threshold)
	if err != nil {
		slog.Error("noise", "err", err)
		os.Exit(1)
	}
	report := table(rows, *modelName, *threshold)
	fmt.Print(report)
	if *out != "" {
		if err := os.WriteFile(*out, []byte(report), 0o644); err != nil {
			slog.Error("noise", "err", err)
			os.Exit(1)
		}
	}
	if *dump != "" {
		b, _ := json.Marshal(queries)
		if err := os.WriteFile(*dump, b, 0o644); err != nil {
			slog.Error("noise", "err", err)
			os.Exit(1)
		}
	}
}

// row is one set in one mode.
type row struct {
	Set, Mode string
	IR        bool
	// NoAnswers and Silent: the no-answer queries, and how many of them
	// returned nothing at the threshold; Mute: real questions that did.
	NoAnswers, Silent, Questions, Mute int
	At, Without                        []float64 // the set's metrics at the threshold and at 0
}

// query is one query's results at threshold 0, for offline analysis.
type query struct {
	Set, Mode, ID, Kind string
	Real                bool
	Rank                int // of the target (real questions), 0 = not in the top 10
	Chunks              int // chunks in the index
	Hits                []hit
	// Cosines of the query with every chunk, summarised (dense mode, -bg).
	Bg *background `json:",omitempty"`
	// Both rankings' first chunks with their evidence (hybrid mode,
	// -evidence), texts left out.
	Ev *QueryEvidence `json:",omitempty"`
}

type background struct{ Mean, Std, P50, P90, P99 float64 }

var (
	withBg        = flag.Bool("bg", false, "record each query's cosines with every chunk, summarised (dense mode)")
	heldOut       = flag.Bool("heldout", false, "ask the held-out no-answer queries (bench/eval/noanswer-heldout.jsonl) instead")
	withEvidence  = flag.Int("evidence", 0, "record the first N chunks of both rankings with their evidence (hybrid mode)")
	questionsFile = flag.String("questions", "", "ask the questions of this file (the sets' jsonl format) instead of the set's own; one set only")
)

func summarise(ctx context.Context, eng *engine.Engine, q string, chunks int) (*background, error) {
	ev, err := evidence(ctx, eng, q, chunks)
	if err != nil {
		return nil, err
	}
	var cs []float64
	var sum, sq float64
	for _, c := range ev.Chunks {
		if c.DenseRank > 0 {
			cs = append(cs, c.Cosine)
			sum += c.Cosine
			sq += c.Cosine * c.Cosine
		}
	}
	slices.Sort(cs)
	n := float64(len(cs))
	at := func(p float64) float64 { return cs[min(len(cs)-1, int(p*n))] }
	return &background{Mean: sum / n, Std: math.Sqrt(max(sq/n-sum*sum/n/n, 0)), P50: at(0.5), P90: at(0.9), P99: at(0.99)}, nil
}

type hit struct {
	Path  string
	Score float64
	Why   search.Explanation
	// Target: the hit is from a file judged relevant; Answer: and holds
	// the question's answer phrase.
	Target, Answer bool `json:",omitempty"`
}

func measure(ctx context.Context, sets []string, cache, model string, modes []string, threshold float64) ([]row, []query, error) {
	var rows []row
	var dump []query
	for _, name := range sets {
		// Every index first: a missing one should not cost a long run.
		index := indexOf(cache, name, model)
		if _, err := os.Stat(filepath.Join(index, "version")); err != nil {
			return nil, nil, fmt.Errorf("no index of %s: run go run ./bench/cmd/eval -set %s -model %q -index %s first", name, name, model, index)
		}
	}
	for _, name := range sets {
		s, err := loadSet(ctx, name, cache)
		if err != nil {
			return nil, nil, err
		}
		index := indexOf(cache, s.set.Name, model)
		for _, mode := range modes {
			r, qd, err := measureMode(ctx, s, index, model, mode, threshold)
			if err != nil {
				return nil, nil, err
			}
			rows, dump = append(rows, r), append(dump, qd...)
		}
	}
	return rows, dump, nil
}

// setData is what one set asks: its real questions and no-answer queries.
type setData struct {
	set eval.Set
	c   eval.Corpus
	qs  []eval.Question
	nas []eval.NoAnswer
}

func loadSet(ctx context.Context, name, cache string) (s setData, err error) {
	if s.set, err = eval.SetNamed(name); err != nil {
		return s, err
	}
	if s.c, _, err = s.set.Corpus(ctx, cache); err != nil {
		return s, err
	}
	load := s.set.Load
	if *questionsFile != "" {
		load = func() ([]eval.Question, error) { return eval.QuestionsFile(*questionsFile) }
	}
	if s.qs, err = load(); err != nil {
		return s, err
	}
	if *heldOut {
		s.nas, err = eval.HeldOutNoAnswers(s.set.Name)
	} else {
		s.nas, err = eval.NoAnswers(s.set.Name)
	}
	return s, err
}

// measureMode opens the set's index read-only in one search mode and asks
// every query of the set in it.
func measureMode(ctx context.Context, s setData, index, model, mode string, threshold float64) (row, []query, error) {
	eng, err := engine.New(engine.Config{DataFolder: s.c.Dir, IndexFolder: index, ReadOnly: true,
		NoInitialReindex: true, SearchMode: search.Mode(mode), Model: model})
	if err != nil {
		return row{}, nil, err
	}
	eng.Start(ctx)
	if err := eng.WaitModel(ctx); err != nil {
		eng.Close()
		return row{}, nil, err
	}
	chunks := eng.Status().Chunks
	t := time.Now()
	r, dump, err := probe(ctx, eng, s, mode, chunks, threshold)
	eng.Close()
	if err != nil {
		return row{}, nil, err
	}
	slog.Info("measured", "set", s.set.Name, "mode", mode, "took", time.Since(t).Round(time.Millisecond))
	return r, dump, nil
}

// probe asks the real questions at the threshold and at 0, and the
// no-answer queries at 0 (the threshold's cut is a prefix of that).
func probe(ctx context.Context, eng *engine.Engine, s setData, mode string, chunks int, threshold float64) (row, []query, error) {
	r := row{Set: s.set.Name, Mode: mode, IR: s.set.IR, NoAnswers: len(s.nas), Questions: len(s.qs)}
	var dump []query
	var at, without []eval.Outcome
	asked := slices.Clone(s.qs)
	for _, na := range s.nas {
		asked = append(asked, eval.Question{ID: na.ID, Kind: na.Kind, Query: na.Query})
	}
	for i, q := range asked {
		real := i < len(s.qs)
		o0, err := ask(ctx, eng, q, 0)
		if err != nil {
			return r, nil, err
		}
		if real {
			o, err := ask(ctx, eng, q, threshold)
			if err != nil {
				return r, nil, err
			}
			if len(o.Hits) == 0 {
				r.Mute++
			}
			at, without = append(at, o), append(without, o0)
		} else if !slices.ContainsFunc(o0.Hits, func(h eval.Hit) bool { return h.Score >= threshold }) {
			r.Silent++
		}
		qd := record(s.set.Name, mode, q.ID, q.Kind, real, chunks, o0)
		if *withBg && mode != "keyword" {
			if qd.Bg, err = summarise(ctx, eng, q.Query, chunks); err != nil {
				return r, nil, err
			}
		}
		if *withEvidence > 0 && mode == "hybrid" {
			ev, err := evidence(ctx, eng, q.Query, *withEvidence)
			if err != nil {
				return r, nil, err
			}
			for i := range ev.Chunks {
				ev.Chunks[i].Text = ""
			}
			qd.Ev = &ev
		}
		dump = append(dump, qd)
	}
	r.At, r.Without = metrics(s.set, at), metrics(s.set, without)
	return r, dump, nil
}

// indexOf is where bench/cmd/eval -index keeps the set's index of model.
func indexOf(cache, set, model string) string {
	if model == "" {
		return filepath.Join(cache, "eval-index-"+set)
	}
	return filepath.Join(cache, "eval-index-"+set+"-"+model)
}

// ask searches with top_k 10; each hit's Why holds its explanation as JSON.
func ask(ctx context.Context, eng *engine.Engine, q eval.Question, threshold float64) (eval.Outcome, error) {
	t := time.Now()
	res, err := eng.Search(ctx, search.Request{Query: q.Query, TopK: 10, ScoreThreshold: threshold, Explain: true})
	if err != nil {
		return eval.Outcome{}, fmt.Errorf("%s: %w", q.ID, err)
	}
	o := eval.Outcome{Question: q, Latency: time.Since(t)}
	for _, r := range res {
		h := eval.Hit{Path: r.Path, ChunkIndex: r.ChunkIndex, CharStart: r.CharStart, CharEnd: r.CharEnd, Text: r.Snippet, Score: r.Score}
		if r.Explain != nil {
			b, _ := json.Marshal(r.Explain)
			h.Why = string(b)
		}
		o.Hits = append(o.Hits, h)
	}
	return o, nil
}

func record(set, mode, id, kind string, real bool, chunks int, o eval.Outcome) query {
	q := query{Set: set, Mode: mode, ID: id, Kind: kind, Real: real, Chunks: chunks}
	if real && len(o.Question.Targets) == 0 {
		q.Rank = eval.Rank(o.Question.Target, o.Hits)
	}
	for _, h := range o.Hits {
		x := hit{Path: h.Path, Score: h.Score}
		if real {
			x.Target = h.Path == o.Question.Target || slices.Contains(o.Question.Targets, h.Path)
			x.Answer = h.Path == o.Question.Target && o.Question.Answer != "" && eval.Contains(h.Text, o.Question.Answer)
		}
		_ = json.Unmarshal([]byte(h.Why), &x.Why)
		q.Hits = append(q.Hits, x)
	}
	return q
}

// metrics are hit@5 and answer@5, or nDCG@10 on an IR set.
func metrics(set eval.Set, outs []eval.Outcome) []float64 {
	if set.IR {
		return []float64{eval.ScoreIR(outs).NDCG10}
	}
	s := eval.Score(outs)
	return []float64{s.Hit5, s.Answer5}
}

func table(rows []row, model string, threshold float64) string {
	model = cmp.Or(model, engine.DefaultModel)
	var sb strings.Builder
	fmt.Fprintf(&sb, "Model %s, threshold %.2f, top_k 10 (bench/cmd/noise).\n\n", model, threshold)
	sb.WriteString("| set | mode | no-answer queries returning nothing | real questions returning nothing | hit@5 (nDCG@10) at threshold | without | answer@5 at threshold | without |\n|---|---|---|---|---|---|---|---|\n")
	for _, r := range rows {
		fmt.Fprintf(&sb, "| %s | %s | %d/%d (%.2f) | %d/%d | %.3f | %.3f |", r.Set, r.Mode, r.Silent, r.NoAnswers,
			float64(r.Silent)/float64(max(r.NoAnswers, 1)), r.Mute, r.Questions, r.At[0], r.Without[0])
		if r.IR {
			sb.WriteString(" – | – |\n")
		} else {
			fmt.Fprintf(&sb, " %.3f | %.3f |\n", r.At[1], r.Without[1])
		}
	}
	return sb.String()
}
