// Command eval is make eval, eval-manpages and eval-scifact: for one
// question set (-set godoc, the default, manpages or scifact) it generates
// the set's corpus (cached under bin/), checks every question's answer
// phrase against the extracted text of its target, indexes the corpus with
// the built server through MCP on stdio (into bin/eval-index-SET, kept, so
// a second run and every mode reuse it), asks every question in each search
// mode the server offers, and prints the results table (also written to the
// set's bin/eval*.md).
package main

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

func main() {
	bin := flag.String("bin", "bin/micro-rag-mcp", "the built server")
	cache := flag.String("cache", "bin", "folder for the generated corpus")
	setName := flag.String("set", eval.Sets[0].Name, "question set: godoc or manpages")
	out := flag.String("out", "", "also write the report here (default: the set's, bin/eval.md or bin/eval-manpages.md)")
	modes := flag.String("modes", "dense,keyword,hybrid", "values of --search-mode to compare, when the server has the flag")
	modelName := flag.String("model", "", "value of the server's --model (default: its default model)")
	verbose := flag.Bool("v", false, "show the server's log and every miss")
	keep := flag.String("index", "", "index folder to use and keep (default: bin/eval-index-SET under -cache)")
	flag.StringVar(&eval.SciFactDir, "scifact", eval.SciFactDir, "BEIR SciFact's folder (corpus.jsonl.gz, queries.jsonl, qrels/)")
	flag.Parse()
	set, err := eval.SetNamed(*setName)
	if err != nil {
		slog.Error("eval", "err", err)
		os.Exit(2)
	}
	if *out == "" {
		*out = set.Out
	}
	if *keep == "" {
		*keep = filepath.Join(*cache, "eval-index-"+set.Name)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	table, misses, err := run(ctx, set, *bin, *cache, *keep, *modelName, strings.Split(*modes, ","), *verbose)
	if err != nil {
		slog.Error("eval", "err", err)
		os.Exit(1)
	}
	fmt.Print(table)
	if *verbose {
		fmt.Print(misses)
	}
	if err := os.WriteFile(*out, []byte(table+misses), 0o644); err != nil {
		slog.Error("eval", "err", err)
		os.Exit(1)
	}
}

// run returns the report: the table, then every question missed per mode.
func run(ctx context.Context, set eval.Set, bin, cache, index, model string, modes []string, verbose bool) (table, misses string, err error) {
	loadBefore := loadAvg()
	start := time.Now()
	c, from, err := set.Corpus(ctx, cache)
	if err != nil {
		return "", "", err
	}
	counts := map[string]int{}
	for _, d := range c.Docs {
		counts[d.Ext]++
	}
	slog.Info("corpus ready", "set", set.Name, "dir", c.Dir, "files", len(c.Docs), "types", counts, "took", time.Since(start).Round(time.Millisecond))
	qs, err := set.Load()
	if err != nil {
		return "", "", err
	}
	if err := checkAnswers(ctx, set, qs, c); err != nil {
		return "", "", err
	}
	has, err := eval.SupportsSearchMode(ctx, bin)
	if err != nil {
		return "", "", err
	}
	if !has {
		slog.Warn("the server has no --search-mode flag; only its default (dense) search is measured")
		modes = []string{""}
	}
	var rows []eval.Row
	var irModes []string
	var irRows []eval.IRScores
	var missed strings.Builder
	for _, m := range modes {
		srv := eval.Server{Bin: bin, Data: c.Dir, Index: index, Mode: m, Model: model, Inst: set.Inst}
		if verbose {
			srv.Stderr = os.Stderr
		}
		t := time.Now()
		outs, err := srv.Run(ctx, qs)
		if err != nil {
			return "", "", err
		}
		chunks, err := eval.Chunks(index)
		if err != nil {
			return "", "", err
		}
		if len(chunks) != len(c.Docs) {
			return "", "", fmt.Errorf("the index holds %d files, the corpus %d", len(chunks), len(c.Docs))
		}
		eval.FillWhole(outs, chunks, c.Dir)
		name := m
		if name == "" {
			name = "dense (server default)"
		}
		slog.Info("mode done", "mode", name, "took", time.Since(t).Round(time.Millisecond))
		if set.IR {
			irModes, irRows = append(irModes, name), append(irRows, eval.ScoreIR(outs))
			continue
		}
		rows = append(rows, eval.ScoreRow(name, outs))
		fmt.Fprintf(&missed, "\n### Misses of %s (target not in the top 5)\n\n", name)
		for _, o := range outs {
			if r := eval.Rank(o.Question.Target, o.Hits); r == 0 || r > 5 {
				got := ""
				if len(o.Hits) > 0 {
					got = o.Hits[0].Path
				}
				fmt.Fprintf(&missed, "- %s (%s) %q → rank %d, first %s\n", o.Question.ID, o.Question.Kind, o.Question.Query, r, got)
			}
		}
	}
	var sb strings.Builder
	kinds := map[string]int{}
	for _, q := range qs {
		kinds[q.Kind]++
	}
	flags := ""
	if set.Name != eval.Sets[0].Name {
		flags = " -set " + set.Name
	}
	if model != "" {
		flags += " -model " + model
	}
	fmt.Fprintf(&sb, "`%s` (bench/cmd/eval%s) on %s: %d questions (%s) "+
		"over %d generated files (%s) from %s; "+
		"CPU %s; load average %s before, %s after; top_k 10, other arguments default. ",
		set.Make, flags, time.Now().UTC().Format("2006-01-02"), len(qs),
		countList(kinds, eval.KindIdentifier, eval.KindKeyword, eval.KindParaphrase),
		len(c.Docs), countList(counts, ".txt", ".md", ".pdf", ".docx"), from, cpuModel(), loadBefore, loadAvg())
	if set.IR {
		sb.WriteString("Each file counts once, at its best passage; relevance as judged in BEIR's qrels/test.tsv.\n\n")
		sb.WriteString(eval.IRTable(irModes, irRows))
		return sb.String(), "", nil
	}
	sb.WriteString("Hits count by file; answer@5 needs the answer phrase in a top-5 passage of the target file, " +
		"as returned (client) or in the whole indexed chunks behind those hits (whole-chunk).\n\n")
	sb.WriteString(eval.Table(rows))
	if len(kinds) > 1 {
		sb.WriteString("\nBy question kind:\n\n")
		sb.WriteString(eval.KindTable(rows))
	}
	return sb.String(), missed.String(), nil
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

func cpuModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for l := range bytes.Lines(b) {
		if k, v, ok := strings.Cut(string(l), ":"); ok && strings.TrimSpace(k) == "model name" {
			return fmt.Sprintf("%s x%d", strings.TrimSpace(v), runtime.NumCPU())
		}
	}
	return runtime.GOARCH
}
