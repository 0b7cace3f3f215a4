// Command fusion dumps, for every question of an evaluation set, what both
// rankings know of their first -depth chunks (engine.Explain), one JSON line
// a question, so that ways of fusing them can be compared offline without
// reindexing. It reads an index that make eval left (-index).
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"flag"
	"log/slog"
	"os"

	"github.com/micro-rag/micro-rag-mcp/bench/eval"
	"github.com/micro-rag/micro-rag-mcp/pipeline/engine"
)

type line struct {
	eval.Question
	engine.QueryEvidence
}

func main() {
	setName := flag.String("set", "godoc", "question set")
	data := flag.String("data", "", "the corpus folder the index was built from")
	index := flag.String("index", "", "the index folder")
	depth := flag.Int("depth", 200, "chunks read from each ranking")
	out := flag.String("out", "", "JSON lines output")
	flag.Parse()
	if err := run(*setName, *data, *index, *out, *depth); err != nil {
		slog.Error("fusion", "err", err)
		os.Exit(1)
	}
}

func run(setName, data, index, out string, depth int) error {
	set, err := eval.SetNamed(setName)
	if err != nil {
		return err
	}
	qs, err := set.Load()
	if err != nil {
		return err
	}
	ctx := context.Background()
	eng, err := engine.New(engine.Config{DataFolder: data, IndexFolder: index, ReadOnly: true, NoInitialReindex: true})
	if err != nil {
		return err
	}
	defer eng.Close()
	eng.Start(ctx)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for _, q := range qs {
		ev, err := eng.Explain(ctx, q.Query, depth)
		if err != nil {
			return err
		}
		if err := enc.Encode(line{q, ev}); err != nil {
			return err
		}
	}
	return w.Flush()
}
