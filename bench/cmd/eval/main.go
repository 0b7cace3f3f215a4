// Command eval is make eval: it generates the evaluation corpus (cached
// under bin/), checks every question's answer phrase against the extracted
// text of its target, indexes the corpus with the built server through MCP
// on stdio, asks every question in each search mode the server offers, and
// prints the results table (also written to bin/eval.md).
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
	out := flag.String("out", "bin/eval.md", "also write the report here")
	modes := flag.String("modes", "dense,keyword,hybrid", "values of --search-mode to compare, when the server has the flag")
	verbose := flag.Bool("v", false, "show the server's log and every miss")
	keep := flag.String("index", "", "index folder to use and keep (default: a temporary one, removed after)")
	flag.Parse()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Hour)
	defer cancel()
	table, misses, err := run(ctx, *bin, *cache, *keep, strings.Split(*modes, ","), *verbose)
	if err != nil {
		slog.Error("eval", "err", err)
		os.Exit(1)
	}
	fmt.Print(table)
	if *verbose {
		fmt.Print(misses)
	}
	if *out != "" {
		if err := os.WriteFile(*out, []byte(table+misses), 0o644); err != nil {
			slog.Error("eval", "err", err)
			os.Exit(1)
		}
	}
}

// run returns the report: the table, then every question missed per mode.
func run(ctx context.Context, bin, cache, index string, modes []string, verbose bool) (table, misses string, err error) {
	loadBefore := loadAvg()
	goroot, goversion, err := eval.GoRoot(ctx)
	if err != nil {
		return "", "", err
	}
	start := time.Now()
	c, err := eval.Build(ctx, goroot, cache)
	if err != nil {
		return "", "", err
	}
	counts := map[string]int{}
	for _, d := range c.Docs {
		counts[d.Ext]++
	}
	slog.Info("corpus ready", "dir", c.Dir, "files", len(c.Docs), "types", counts, "took", time.Since(start).Round(time.Millisecond))
	qs, err := eval.Questions()
	if err != nil {
		return "", "", err
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
		return "", "", fmt.Errorf("%d questions do not match the corpus:\n%s", len(bad), strings.Join(bad, "\n"))
	}
	if index == "" {
		if index, err = os.MkdirTemp("", "micro-rag-eval-index-"); err != nil {
			return "", "", err
		}
		defer os.RemoveAll(index)
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
	var missed strings.Builder
	for _, m := range modes {
		srv := eval.Server{Bin: bin, Data: c.Dir, Index: index, Mode: m}
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
		rows = append(rows, eval.ScoreRow(name, outs))
		slog.Info("mode done", "mode", name, "took", time.Since(t).Round(time.Millisecond))
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
	fmt.Fprintf(&sb, "`make eval` (bench/cmd/eval) on %s: %d questions (%d identifier, %d keyword, %d paraphrase) "+
		"over %d generated files (%d txt, %d md, %d pdf, %d docx) from %s's documentation and Debian's licences; "+
		"CPU %s; load average %s before, %s after; top_k 10, other arguments default. "+
		"Hits count by file; answer@5 needs the answer phrase in a top-5 passage of the target file, "+
		"as returned (client) or in the whole indexed chunks behind those hits (whole-chunk).\n\n",
		time.Now().UTC().Format("2006-01-02"), len(qs), kinds[eval.KindIdentifier], kinds[eval.KindKeyword], kinds[eval.KindParaphrase],
		len(c.Docs), counts[".txt"], counts[".md"], counts[".pdf"], counts[".docx"], goversion, cpuModel(), loadBefore, loadAvg())
	sb.WriteString(eval.Table(rows))
	sb.WriteString("\nBy question kind:\n\n")
	sb.WriteString(eval.KindTable(rows))
	return sb.String(), missed.String(), nil
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
