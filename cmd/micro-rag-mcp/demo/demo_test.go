package main

import (
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// answers holds, for each of the demo's questions, the file its answer is in
// and a phrase of the answer as the sample states it.
var answers = map[string][2]string{
	"What caused the checkout outage and how was it fixed?":       {"postmortem-checkout-outage.txt", "The certificate rotation closed every cache connection"},
	"How many weeks of parental leave do I get?":                  {"employee-handbook-leave.docx", "sixteen weeks of fully paid parental leave"},
	"How does the ingestion service deliver events exactly once?": {"event-ingestion-design.pdf", "which makes delivery exactly once"},
	"Steps to promote a PostgreSQL replica":                       {"ops/database-failover-runbook.md", "Promote the healthiest replica"},
	"When does the v1 REST API go away?":                          {"release-notes-2.4.txt", "switched off at"},
}

// TestDemoShowsTheAnswers: what make demo prints for each question names
// the file that answers it first and shows the answer itself, as a
// stranger's first look at the product should.
func TestDemoShowsTheAnswers(t *testing.T) {
	bin := filepath.Join(t.TempDir(), "micro-rag-mcp")
	if out, err := exec.Command("go", "build", "-o", bin, "..").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	var out strings.Builder
	if err := run(&out, bin, filepath.Join("..", "..", "..", "testdata", "sample"), false); err != nil {
		t.Fatalf("demo: %v\n%s", err, out.String())
	}
	blocks := strings.Split(out.String(), "\nQ: ")[1:]
	if len(blocks) != len(queries) {
		t.Fatalf("%d questions printed, want %d:\n%s", len(blocks), len(queries), out.String())
	}
	for _, block := range blocks {
		q, _, _ := strings.Cut(block, "\n")
		want, ok := answers[q]
		if !ok {
			t.Errorf("the demo asks %q, which this test does not know", q)
			continue
		}
		first, _, _ := strings.Cut(block, "\n  2. ")
		if !strings.Contains(first, "1. ") || !strings.Contains(first, want[0]) || !strings.Contains(first, want[1]) {
			t.Errorf("%q: the first result does not show %s with %q:\n%s", q, want[0], want[1], block)
		}
	}
}
