package eval

import (
	"context"
	"fmt"
)

// Set is one question set with the corpus it is asked over. Each is a
// different kind of text (generated Go docs, man pages, short pages among
// long ones, scientific abstracts); a ranking constant is chosen on three
// and checked on the fourth, in turn (docs/search-fusion.md).
type Set struct {
	Name string
	Make string // the make target that runs it
	Inst string // the server's --inst for the corpus
	Out  string // where the report goes by default
	// IR sets have no answer phrases and several relevant files per
	// question: they are scored by ScoreIR (nDCG@10, Recall@10, MRR@10).
	IR     bool
	Load   func() ([]Question, error)
	Corpus func(ctx context.Context, cacheDir string) (c Corpus, from string, err error)
}

// Sets are the evaluation's question sets, the default first.
var Sets = []Set{
	{Name: "godoc", Make: "make eval", Inst: "Go documentation and software licences.", Out: "bin/eval.md",
		Load: Questions, Corpus: func(ctx context.Context, cacheDir string) (Corpus, string, error) {
			goroot, goversion, err := GoRoot(ctx)
			if err != nil {
				return Corpus{}, "", err
			}
			c, err := Build(ctx, goroot, cacheDir)
			return c, goversion + "'s documentation and Debian's licences", err
		}},
	{Name: "manpages", Make: "make eval-manpages", Inst: "Linux manual pages: commands, configuration files and concepts.",
		Out: "bin/eval-manpages.md", Load: ManPageQuestions, Corpus: BuildManPages},
	{Name: "crowded", Make: "make eval-crowded", Inst: "Linux manual pages: commands, configuration files and concepts.",
		Out: "bin/eval-crowded.md", Load: CrowdedQuestions, Corpus: BuildCrowded},
	// heldout asks the man pages' corpus (same index) about pages the
	// manpages set leaves alone, with questions no model had seen.
	{Name: "heldout", Make: "go run ./bench/cmd/eval -set heldout", Inst: "Linux manual pages: commands, configuration files and concepts.",
		Out: "bin/eval-heldout.md", Load: HeldoutQuestions, Corpus: BuildManPages},
	{Name: "scifact", Make: "make eval-scifact", Inst: "Abstracts of biomedical research papers.",
		Out: "bin/eval-scifact.md", IR: true, Load: SciFactQuestions, Corpus: BuildSciFact},
	{Name: "sample", Make: "go run ./bench/cmd/eval -set sample", Inst: "A team's handbook, design notes, runbooks and release notes.",
		Out: "bin/eval-sample.md", Load: SampleQuestions, Corpus: SampleCorpus},
	{Name: "handbook", Make: "make eval-handbook", Inst: "A company's staff handbook: leave, pay, expenses, equipment, travel and conduct.",
		Out: "bin/eval-handbook.md", Load: HandbookQuestions, Corpus: FolderCorpus(HandbookDir, "the repository's "+HandbookDir)},
	{Name: "opsnotes", Make: "make eval-opsnotes", Inst: "A platform team's operations notes: on-call rota, runbooks, postmortems, services and meeting notes.",
		Out: "bin/eval-opsnotes.md", Load: OpsNotesQuestions, Corpus: FolderCorpus(OpsNotesDir, "the repository's "+OpsNotesDir)},
}

// SampleDir is the repository's demo folder, relative to its root.
var SampleDir = "testdata/sample"

// SampleCorpus is testdata/sample as it is: seven files, a folder so small
// that a score must not depend on many chunks to mean something.
func SampleCorpus(ctx context.Context, cacheDir string) (Corpus, string, error) {
	return FolderCorpus(SampleDir, "the repository's testdata/sample")(ctx, cacheDir)
}

// SetNamed returns the set called name.
func SetNamed(name string) (Set, error) {
	var names []string
	for _, s := range Sets {
		if s.Name == name {
			return s, nil
		}
		names = append(names, s.Name)
	}
	return Set{}, fmt.Errorf("eval: no question set %q (there are %v)", name, names)
}
