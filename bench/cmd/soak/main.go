// Command soak runs two micro-rag-mcp servers and a reindexer on one
// PostgreSQL index under mixed load for -duration (bench/soak), starting
// its own PostgreSQL from .tools/postgres unless -store names one, and
// prints the report as Markdown. Exit status 1 when any error or check
// failed.
package main

import (
	"context"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/bench/soak"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func main() {
	var cfg soak.Config
	flag.StringVar(&cfg.Bin, "bin", "bin/micro-rag-mcp", "the built server")
	flag.StringVar(&cfg.Store, "store", "", "postgres://… of an empty database to use (default: start a PostgreSQL from .tools/postgres)")
	flag.DurationVar(&cfg.Duration, "duration", 10*time.Minute, "how long the mixed load runs")
	flag.IntVar(&cfg.Stable, "stable", 40, "files the writer never changes")
	flag.Uint64Var(&cfg.Seed, "seed", 1, "seed of the generated text and the writer's choices")
	out := flag.String("out", "", "also write the report here")
	flag.Parse()
	cfg.Log = os.Stderr
	os.Exit(run(cfg, *out))
}

func run(cfg soak.Config, out string) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	dir, err := os.MkdirTemp("", "soak-")
	if err != nil {
		slog.Error("soak", "err", err)
		return 1
	}
	if os.Getenv("SOAK_KEEP") == "" {
		defer os.RemoveAll(dir)
	}
	slog.Info("soak", "dir", dir)
	cfg.Dir = dir
	if cfg.Store == "" {
		pg, err := pgtest.Start()
		if err != nil {
			slog.Error("soak: start PostgreSQL", "err", err)
			return 1
		}
		defer pg.Stop()
		cfg.Store = pg.DSN("postgres")
	}
	start := time.Now()
	rep, err := soak.Run(ctx, cfg)
	if err != nil {
		slog.Error("soak", "err", err)
		return 1
	}
	cpu := eval.CPUModel()
	text := fmt.Sprintf("soak of %s (bench/cmd/soak -duration %s), %s, run took %s:\n\n%s",
		time.Now().UTC().Format("2006-01-02"), cfg.Duration, cpu, time.Since(start).Round(time.Second), rep)
	fmt.Print(text)
	if out != "" {
		if err := os.WriteFile(out, []byte(text), 0o644); err != nil {
			slog.Error("soak", "err", err)
			return 1
		}
	}
	if rep.Errors() > 0 {
		return 1
	}
	return 0
}
