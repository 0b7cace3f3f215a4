// Command eval is make eval and the other eval targets: for one question
// set (-set godoc, the default, or another of eval.Sets) it generates the
// set's corpus (cached under bin/), checks every question's answer phrase
// against the extracted text of its target, indexes the corpus with the
// built server through MCP on stdio (into bin/eval-index-SET, kept, so a
// second run and every mode reuse it), asks every question and the set's
// no-answer queries in each search mode the server offers, at each
// setting (top_k 10 at threshold 0, and the query alone as a client asks),
// and prints the results tables (also written to the set's bin/eval*.md).
package main

import (
	"cmp"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

func main() {
	bin := flag.String("bin", "bin/micro-rag-mcp", "the built server")
	before := flag.String("before", "", "also run this server (another build, e.g. main's) on its own index and label the rows before/after")
	settings := flag.String("settings", "ranking,default", "search arguments to ask with: ranking (top_k 10, score_threshold 0) and default (the query alone, as a client asks)")
	dump := flag.String("dump", "", "also write every search's text and structuredContent here, one JSON line each (scripts/eval_tokens.py counts their tokens)")
	cache := flag.String("cache", "bin", "folder for the generated corpus")
	setName := flag.String("set", eval.Sets[0].Name, "question set: godoc, manpages, crowded, heldout, scifact, sample, handbook or opsnotes")
	out := flag.String("out", "", "also write the report here (default: the set's, bin/eval.md or bin/eval-manpages.md)")
	modes := flag.String("modes", "dense,keyword,hybrid", "values of --search-mode to compare, when the server has the flag")
	modelName := flag.String("model", "", "value of the server's --model (default: its default model)")
	verbose := flag.Bool("v", false, "show the server's log and every miss")
	keep := flag.String("index", "", "index folder to use and keep (default: bin/eval-index-SET under -cache)")
	flag.StringVar(&eval.SciFactDir, "scifact", eval.SciFactDir, "BEIR SciFact's folder (corpus.jsonl.gz, queries.jsonl, qrels/)")
	var st stores
	flag.StringVar(&st.url, "store", "", "run the server with --store URL (the index in PostgreSQL; -index then keeps only its scope)")
	pg := flag.Bool("pg", false, "start a PostgreSQL from .tools/postgres for the run and use it as -store")
	flag.BoolVar(&st.compare, "compare", false, "run every mode on the local index folder and on -store, and compare their top-5 files per question")
	flag.Parse()
	os.Exit(evalMain(*setName, *out, *keep, *cache, *bin, *before, *settings, *dump, *modelName, *modes, *verbose, st, *pg))
}

func evalMain(setName, out, keep, cache, bin, before, settingNames, dump, modelName, modes string, verbose bool, st stores, pg bool) int {
	set, err := eval.SetNamed(setName)
	if err != nil {
		slog.Error("eval", "err", err)
		return 2
	}
	settings, err := parseSettings(settingNames)
	if err != nil {
		slog.Error("eval", "err", err)
		return 2
	}
	out = cmp.Or(out, set.Out)
	keep = cmp.Or(keep, filepath.Join(cache, "eval-index-"+set.Name))
	if pg {
		srv, err := pgtest.Start()
		if err != nil {
			slog.Error("eval: start PostgreSQL", "err", err)
			return 1
		}
		defer srv.Stop()
		st.url = srv.DSN("postgres")
	}
	if st.compare && st.url == "" {
		slog.Error("eval: -compare needs -store or -pg")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	bins := []server{{"", bin, keep}}
	if before != "" {
		bins = []server{{"before", before, keep + "-before"}, {"after", bin, keep}}
	}
	var dumpTo io.Writer // nil: no dump
	if dump != "" {
		f, err := os.Create(dump)
		if err != nil {
			slog.Error("eval", "err", err)
			return 1
		}
		defer f.Close()
		dumpTo = f
	}
	table, misses, err := run(ctx, set, bins, settings, cache, modelName, strings.Split(modes, ","), verbose, st, dumpTo)
	if err != nil {
		slog.Error("eval", "err", index.RedactURL(err.Error()))
		return 1
	}
	fmt.Print(table)
	if verbose {
		fmt.Print(misses)
	}
	if err := os.WriteFile(out, []byte(table+misses), 0o644); err != nil {
		slog.Error("eval", "err", err)
		return 1
	}
	return 0
}

// server is one build of the server to measure, with its own index:
// another build may not read this one's index.
type server struct{ label, bin, index string }

// parseSettings reads -settings.
func parseSettings(names string) ([]eval.Setting, error) {
	var out []eval.Setting
	for _, n := range strings.Split(names, ",") {
		s, ok := map[string]eval.Setting{"ranking": eval.Ranking, "default": eval.Defaults}[strings.TrimSpace(n)]
		if !ok {
			return nil, fmt.Errorf("-settings: %q is neither ranking nor default", n)
		}
		out = append(out, s)
	}
	return out, nil
}

// stores says where the server keeps the index: the index folder (url
// ""), a database, or (compare) the folder and then the database in turn
// for every mode.
type stores struct {
	url     string
	compare bool
}

// store is one run's --store and its name in the report.
type store struct{ url, name string }

// each is the stores of one mode's runs, the index folder first.
func (st stores) each() []store {
	var out []store
	if st.compare || st.url == "" {
		out = append(out, store{"", "local"})
	}
	if st.url == "" {
		return out
	}
	return append(out, store{st.url, "postgres"})
}

// run returns the report: the table, then every question missed per run.
// Each server, mode, setting and store is one run, which asks the set's
// questions and then its no-answer queries.
func run(ctx context.Context, set eval.Set, bins []server, settings []eval.Setting, cache, model string, modes []string, verbose bool, st stores, dump io.Writer) (table, misses string, err error) {
	loadBefore := loadAvg()
	in, err := loadSet(ctx, set, cache)
	if err != nil {
		return "", "", err
	}
	c, from, counts, qs, nas := in.corpus, in.from, in.counts, in.questions, in.noAnswers
	var res results
	var parity strings.Builder
	for _, b := range bins {
		bmodes, err := eval.SearchModes(ctx, b.bin, modes)
		if err != nil {
			return "", "", err
		}
		for _, m := range bmodes {
			for _, setting := range settings {
				var runs [][]eval.Outcome
				stores := st.each()
				for _, store := range stores {
					srv := eval.Server{Bin: b.bin, Data: c.Dir, Index: b.index, Mode: m, Model: model, Inst: set.Inst, Store: store.url, Args: setting}
					if store.url != "" {
						// The index is in the database; this folder keeps the
						// engine's scope and last-run notes apart from the local
						// index's.
						srv.Index = b.index + "-store"
					}
					if verbose {
						srv.Stderr = os.Stderr
					}
					name, outs, silent, err := runMode(ctx, srv, qs, nas, c)
					if err != nil {
						return "", "", err
					}
					if st.url != "" {
						name += " (" + store.name + ")"
					}
					name = strings.TrimSpace(b.label + " " + name + ", " + setting.Name)
					res.add(set.IR, name, outs, silent)
					if err := dumpRun(dump, set.Name, name, outs, silent); err != nil {
						return "", "", err
					}
					runs = append(runs, outs)
				}
				for i := 1; st.compare && i < len(runs); i++ {
					p, err := eval.CompareTopFiles(runs[0], runs[i], 5)
					if err != nil {
						return "", "", err
					}
					fmt.Fprintf(&parity, "| %s, %s (%s) | %d | %d (%.1f %%) | %d (%.1f %%) | %s |\n", m, setting.Name, stores[i].name, p.Questions, p.SameFiles, 100*float64(p.SameFiles)/float64(p.Questions),
						p.SameOrder, 100*float64(p.SameOrder)/float64(p.Questions), strings.Join(p.Differ, " "))
				}
			}
		}
	}
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
	}
	head := header(set, bins, model, len(qs), len(nas), kinds, len(c.Docs), counts, from, loadBefore)
	table = res.report(set.IR, head, kinds)
	if parity.Len() > 0 {
		table += "\nTop-5 files per question, local index folder against PostgreSQL:\n\n" +
			"| mode | questions | same files | same files, same order | questions whose files differ |\n|---|---|---|---|---|\n" + parity.String()
	}
	if st.url != "" {
		sizes, err := keywordSizes(ctx, st.url, index.Namespace(c.Dir))
		if err != nil {
			return "", "", fmt.Errorf("keyword side sizes: %w", err)
		}
		table += sizes
	}
	return table, res.missed.String(), nil
}

// loadedSet is a set's corpus (made or found, from where, its files by
// type), its questions, checked against the corpus, and its no-answer
// queries.
type loadedSet struct {
	corpus    eval.Corpus
	from      string
	counts    map[string]int
	questions []eval.Question
	noAnswers []eval.NoAnswer
}

// loadSet makes (or finds) the set's corpus and logs what it holds by
// file type, then reads its questions, whose answers it checks, and its
// no-answer queries.
func loadSet(ctx context.Context, set eval.Set, cache string) (in loadedSet, err error) {
	start := time.Now()
	if in.corpus, in.from, err = set.Corpus(ctx, cache); err != nil {
		return in, err
	}
	in.counts = map[string]int{}
	for _, d := range in.corpus.Docs {
		in.counts[d.Ext]++
	}
	slog.Info("corpus ready", "set", set.Name, "dir", in.corpus.Dir, "files", len(in.corpus.Docs), "types", in.counts, "took", time.Since(start).Round(time.Millisecond))
	if in.questions, err = set.Load(); err != nil {
		return in, err
	}
	if err := checkAnswers(ctx, set, in.questions, in.corpus); err != nil {
		return in, err
	}
	in.noAnswers, err = eval.NoAnswers(set.Name)
	return in, err
}

// runMode asks every question and then every no-answer query of the
// server in its mode, checks that the index holds the whole corpus, and
// fills in the whole chunks behind the hits; name is the mode as the
// report shows it.
func runMode(ctx context.Context, srv eval.Server, qs []eval.Question, nas []eval.NoAnswer, c eval.Corpus) (name string, outs, silent []eval.Outcome, err error) {
	t := time.Now()
	asked := slices.Clone(qs)
	for _, na := range nas {
		asked = append(asked, eval.Question{ID: na.ID, Kind: na.Kind, Query: na.Query})
	}
	if outs, err = srv.Run(ctx, asked); err != nil {
		return "", nil, nil, err
	}
	outs, silent = outs[:len(qs)], outs[len(qs):]
	chunks, err := srv.IndexChunks(ctx)
	if err != nil {
		return "", nil, nil, err
	}
	if len(chunks) != len(c.Docs) {
		return "", nil, nil, fmt.Errorf("the index holds %d files, the corpus %d", len(chunks), len(c.Docs))
	}
	eval.FillWhole(outs, chunks, c.Dir)
	name = cmp.Or(srv.Mode, "dense (server default)")
	slog.Info("mode done", "mode", name, "setting", srv.Args.Name, "took", time.Since(t).Round(time.Millisecond))
	return name, outs, silent, nil
}

// dumpRun writes one JSON line per search of a run to w (when not nil):
// what a client receives, for counting its tokens.
func dumpRun(w io.Writer, set, run string, outs, noAnswers []eval.Outcome) error {
	if w == nil {
		return nil
	}
	enc := json.NewEncoder(w)
	for i, o := range append(slices.Clone(outs), noAnswers...) {
		line := struct {
			Set        string `json:"set"`
			Run        string `json:"run"`
			ID         string `json:"id"`
			NoAnswer   bool   `json:"noanswer"`
			Text       string `json:"text"`
			Structured string `json:"structured"`
		}{set, run, o.Question.ID, i >= len(outs), o.Text, o.Structured}
		if err := enc.Encode(line); err != nil {
			return fmt.Errorf("-dump: %w", err)
		}
	}
	return nil
}

// results gathers every run's trade-off row and, for an answer set, its
// row and the questions it missed.
type results struct {
	rows   []eval.Row
	trade  []eval.TradeOff
	missed strings.Builder
}

func (res *results) add(ir bool, name string, outs, noAnswers []eval.Outcome) {
	res.trade = append(res.trade, eval.NewTradeOff(name, ir, outs, noAnswers))
	if ir {
		return
	}
	res.rows = append(res.rows, eval.ScoreRow(name, outs))
	fmt.Fprintf(&res.missed, "\n### Misses of %s (target not in the top 5)\n\n", name)
	for _, o := range outs {
		if r := eval.Rank(o.Question.Target, o.Hits); r == 0 || r > 5 {
			got := ""
			if len(o.Hits) > 0 {
				got = o.Hits[0].Path
			}
			fmt.Fprintf(&res.missed, "- %s (%s) %q → rank %d, first %s\n", o.Question.ID, o.Question.Kind, o.Question.Query, r, got)
		}
	}
}

// header is the report's opening sentence: what was run, on what, where
// and under what load (the load after is read now).
func header(set eval.Set, bins []server, model string, questions, noAnswers int, kinds map[string]int, files int, counts map[string]int, from, loadBefore string) string {
	flags := ""
	if set.Name != eval.Sets[0].Name {
		flags = " -set " + set.Name
	}
	if model != "" {
		flags += " -model " + model
	}
	servers := ""
	for _, b := range bins {
		servers += fmt.Sprintf("%s %s; ", strings.TrimSpace(b.label+" server"), b.bin)
	}
	return fmt.Sprintf("`%s` (bench/cmd/eval%s) on %s: %d questions (%s) and %d no-answer queries "+
		"over %d files (%s) from %s; %s"+
		"CPU %s; load average %s before, %s after. Each run asks through MCP on stdio with its setting: "+
		"%s (top_k 10, score_threshold 0: the ranking alone) or %s (the query alone, as a client asks). ",
		set.Make, flags, time.Now().UTC().Format("2006-01-02"), questions,
		countList(kinds, eval.KindIdentifier, eval.KindKeyword, eval.KindParaphrase), noAnswers,
		files, countList(counts, ".txt", ".md", ".pdf", ".docx"), from, servers, eval.CPUModel(), loadBefore, loadAvg(),
		eval.Ranking.Name, eval.Defaults.Name)
}

// report is the header, then the IR table, or the results table and, when
// the set has several kinds of question, the table by kind.
func (res *results) report(ir bool, head string, kinds map[string]int) string {
	var sb strings.Builder
	sb.WriteString(head)
	sb.WriteString("Returned nothing is the share of answerable questions given no result (each also a miss); " +
		"no-answer precision the share of no-answer queries given none (bench/eval/noanswer.jsonl).\n\n")
	if ir {
		sb.WriteString("Each file counts once, at its best passage; relevance as judged in BEIR's qrels/test.tsv.\n\n")
		sb.WriteString(eval.TradeOffTable(res.trade))
		return sb.String()
	}
	sb.WriteString("answer@5 structured: the answer phrase in a top-5 structuredContent passage of the target file; " +
		"text_answer@5: in one of the first 5 result blocks of the text content that cite the target.\n\n")
	sb.WriteString(eval.TradeOffTable(res.trade))
	sb.WriteString("\n")
	sb.WriteString("Hits count by file; answer@5 needs the answer phrase in a top-5 passage of the target file, " +
		"as returned (client) or in the whole indexed chunks behind those hits (whole-chunk).\n\n")
	sb.WriteString(eval.Table(res.rows))
	if len(kinds) > 1 {
		sb.WriteString("\nBy question kind:\n\n")
		sb.WriteString(eval.KindTable(res.rows))
	}
	return sb.String()
}

// checkAnswers fails unless every question's answer phrase is in the
// extracted text of its target; IR sets have no answer phrases.
func checkAnswers(ctx context.Context, set eval.Set, qs []eval.Question, c eval.Corpus) error {
	if set.IR {
		return nil
	}
	pdf := extract.NewPDFEngine(extract.PDFOptions{}, slog.Default())
	defer pdf.Close()
	bad := eval.CheckAnswers(qs, c.Docs, func(p string) (string, error) {
		d, err := extract.Extract(ctx, filepath.Join(c.Dir, p), extract.DefaultLimits, pdf)
		if err != nil {
			return "", err
		}
		return d.Text, nil
	})
	if len(bad) > 0 {
		return fmt.Errorf("%d questions do not match the corpus:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	return nil
}

// countList is "26 identifier, 7 keyword" for the keys with a count, in
// order; a file type's dot is left out.
func countList(counts map[string]int, keys ...string) string {
	var parts []string
	for _, k := range keys {
		if counts[k] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", counts[k], strings.TrimPrefix(k, ".")))
		}
	}
	return strings.Join(parts, ", ")
}

// loadAvg is the one-minute load average: search latency on a shared
// machine means little without it.
func loadAvg() string {
	b, err := os.ReadFile("/proc/loadavg")
	if f := strings.Fields(string(b)); err == nil && len(f) > 0 {
		return f[0]
	}
	return "unknown"
}
