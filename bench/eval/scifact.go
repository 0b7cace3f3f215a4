package eval

import (
	"bufio"
	"compress/gzip"
	"context"
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
)

// SciFactDir holds BEIR's SciFact (corpus.jsonl.gz, queries.jsonl,
// qrels/test.tsv). Its licence (CC BY-NC) allows measuring with it, not
// shipping it: it is read from outside the repository and the folder of
// files made from it stays under bin/.
var SciFactDir = "../shared/eval/beir-scifact"

// sciFactVersion changes whenever the same data would give other files.
const sciFactVersion = 1

// BuildSciFact writes one <_id>.txt per abstract (title, a blank line,
// text), BEIR's usual way to index it as a folder, under cacheDir unless a
// copy made from the same corpus file is there.
func BuildSciFact(ctx context.Context, cacheDir string) (Corpus, string, error) {
	raw, err := os.ReadFile(filepath.Join(SciFactDir, "corpus.jsonl.gz"))
	if err != nil {
		return Corpus{}, "", fmt.Errorf("eval: SciFact (set -scifact to its folder): %w", err)
	}
	zr, err := gzip.NewReader(strings.NewReader(string(raw)))
	if err != nil {
		return Corpus{}, "", fmt.Errorf("eval: SciFact corpus: %w", err)
	}
	type abstract struct {
		ID    string `json:"_id"`
		Title string `json:"title"`
		Text  string `json:"text"`
	}
	var abs []abstract
	dec := json.NewDecoder(zr)
	for {
		var a abstract
		if err := dec.Decode(&a); err == io.EOF {
			break
		} else if err != nil {
			return Corpus{}, "", fmt.Errorf("eval: SciFact corpus: %w", err)
		}
		abs = append(abs, a)
	}
	h := sha256.New()
	fmt.Fprintf(h, "scifact v%d\n", sciFactVersion)
	h.Write(raw)
	docs := make([]Document, len(abs))
	for i, a := range abs {
		docs[i] = Document{Name: a.ID, Ext: ".txt"}
	}
	dir, err := cached(cacheDir, "eval-scifact-", h, sciFactVersion, docs, func(out, _ string) error {
		for i, a := range abs {
			if err := corpus.WriteFile(filepath.Join(out, docs[i].Path()), []byte(a.Title+"\n\n"+a.Text+"\n")); err != nil {
				return err
			}
		}
		return nil
	})
	return Corpus{Dir: dir, Docs: docs}, fmt.Sprintf("BEIR SciFact's %d abstracts (measurement only, CC BY-NC)", len(abs)), err
}

// SciFactQuestions are the test split's 300 claims, each with every
// abstract judged relevant to it as Targets (Target is the first).
func SciFactQuestions() ([]Question, error) {
	rel := map[string][]string{}
	f, err := os.Open(filepath.Join(SciFactDir, "qrels", "test.tsv"))
	if err != nil {
		return nil, fmt.Errorf("eval: SciFact: %w", err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for first := true; sc.Scan(); first = false {
		fs := strings.Fields(sc.Text())
		if first || len(fs) < 3 || fs[2] == "0" {
			continue // the header, or not relevant
		}
		rel[fs[0]] = append(rel[fs[0]], fs[1]+".txt")
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	qf, err := os.Open(filepath.Join(SciFactDir, "queries.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("eval: SciFact: %w", err)
	}
	defer qf.Close()
	var out []Question
	dec := json.NewDecoder(qf)
	for {
		var q struct {
			ID   string `json:"_id"`
			Text string `json:"text"`
		}
		if err := dec.Decode(&q); err == io.EOF {
			break
		} else if err != nil {
			return nil, fmt.Errorf("eval: SciFact queries: %w", err)
		}
		if ts := rel[q.ID]; len(ts) > 0 {
			out = append(out, Question{ID: "scifact" + q.ID, Kind: KindParaphrase, Query: q.Text, Target: ts[0], Targets: ts})
		}
	}
	if len(out) != len(rel) {
		return nil, fmt.Errorf("eval: SciFact: %d judged queries, %d found", len(rel), len(out))
	}
	return out, nil
}

// IRScores are the BEIR figures over outcomes whose questions list every
// relevant file (Targets); a file counts once, at its best passage.
type IRScores struct {
	Questions          int
	NDCG10, R10, MRR10 float64
}

// ScoreIR computes nDCG@10 (binary relevance), Recall@10 and MRR@10 at
// the document level.
func ScoreIR(outs []Outcome) IRScores {
	s := IRScores{Questions: len(outs)}
	for _, o := range outs {
		docs := TopFiles(o.Hits, 10)
		var dcg, idcg float64
		found, first := 0, 0
		for i, p := range docs {
			if slices.Contains(o.Question.Targets, p) {
				dcg += 1 / math.Log2(float64(i+2))
				found++
				if first == 0 {
					first = i + 1
				}
			}
		}
		for i := range min(10, len(o.Question.Targets)) {
			idcg += 1 / math.Log2(float64(i+2))
		}
		if idcg > 0 {
			s.NDCG10 += dcg / idcg
			s.R10 += float64(found) / float64(len(o.Question.Targets))
		}
		if first > 0 {
			s.MRR10 += 1 / float64(first)
		}
	}
	if n := float64(len(outs)); n > 0 {
		s.NDCG10, s.R10, s.MRR10 = s.NDCG10/n, s.R10/n, s.MRR10/n
	}
	return s
}
