package eval

import (
	"math"
	"strings"
	"testing"
)

// The text is split at the lines that cite a returned path, and
// text_answer@5 counts only a block citing the target that holds the
// answer: the week-13 row in the next result's block does not count.
func TestTextBlocksAndTextAnswer(t *testing.T) {
	text := "Note: indexing is running.\n\n3 passages (excerpts; each links to the whole):\n" +
		"1. /d/oncall.md, lines 5-9 (0.86)\n…Week Primary Secondary 12 Alice Moreno…\n" +
		"2. /d/oncall.md, lines 9-12 (0.80), same text in /d/copy.md\n13 | Tomasz Wójcik\n(ext. 4420)\n" +
		"See /d/escalation.md for who is called.\n" +
		"3. /d/escalation.md (0.41)\nSEV1: page the primary"
	blocks := TextBlocks(text, []string{"/d/oncall.md", "/d/oncall.md", "/d/escalation.md"})
	if len(blocks) != 3 || blocks[1].Path != "/d/oncall.md" || blocks[2].Path != "/d/escalation.md" ||
		!strings.Contains(blocks[1].Text, "(ext. 4420)\nSee /d/escalation.md for") || strings.Contains(blocks[0].Text, "indexing") {
		t.Fatalf("blocks = %q", blocks)
	}
	q := Question{ID: "w13", Kind: KindKeyword, Target: "oncall.md", Answer: "13 | Tomasz Wójcik (ext. 4420)"}
	hits := []Hit{{Path: "oncall.md", Text: "13 | Tomasz Wójcik (ext. 4420)"}}
	rel := func(bs []TextBlock) []TextBlock {
		for i := range bs {
			bs[i].Path = strings.TrimPrefix(bs[i].Path, "/d/")
		}
		return bs
	}
	cut := rel(TextBlocks(strings.Replace(text, "13 | Tomasz", "14 | Dev", 1), []string{"/d/oncall.md", "/d/escalation.md"}))
	wrongFile := []TextBlock{{Path: "escalation.md", Text: "13 | Tomasz Wójcik (ext. 4420)"}}
	outs := []Outcome{
		{Question: q, Hits: hits, TextBlocks: rel(blocks)},
		{Question: q, Hits: hits, TextBlocks: cut},
		{Question: q, Hits: hits, TextBlocks: wrongFile},
		{Question: q}, // returned nothing
	}
	s := Score(outs)
	if math.Abs(s.TextAnswer5-0.25) > 1e-9 || math.Abs(s.Answer5-0.75) > 1e-9 {
		t.Errorf("text_answer@5 %v, answer@5 %v; want 0.25 and 0.75", s.TextAnswer5, s.Answer5)
	}
	// A layout that cites otherwise still splits, at any line naming a path.
	if b := TextBlocks("Result one, from /d/a.md:\nalpha\nResult two, from /d/b.md:\nbeta", []string{"/d/a.md", "/d/b.md"}); len(b) != 2 || b[1].Text != "Result two, from /d/b.md:\nbeta" {
		t.Errorf("loose blocks = %q", b)
	}
	if b := TextBlocks("No passages matched \"x\".", nil); len(b) != 0 {
		t.Errorf("no results gave blocks %q", b)
	}
}

// A trade-off row counts answerable questions given nothing and no-answer
// queries given nothing apart, and renders both beside the answers.
func TestTradeOff(t *testing.T) {
	q := Question{ID: "a", Kind: KindKeyword, Target: "a.md", Answer: "x"}
	outs := []Outcome{{Question: q, Hits: []Hit{{Path: "a.md", Text: "x"}}}, {Question: q}}
	nas := []Outcome{{Question: Question{ID: "n1"}}, {Question: Question{ID: "n2"}, Hits: []Hit{{Path: "b.md"}}}, {Question: Question{ID: "n3"}}}
	r := NewTradeOff("hybrid, default", false, outs, nas)
	if r.Nothing != 0.5 || r.Silent != 2 || r.NoAnswers != 3 {
		t.Errorf("trade-off %+v", r)
	}
	if got := TradeOffTable([]TradeOff{r}); !strings.Contains(got, "| hybrid, default | 0.500 | 0.500 | 0.500 | 0.000 | 0.500 | 0.667 (2/3) |") {
		t.Errorf("table:\n%s", got)
	}
}

// The default setting sends the query alone, so the server's own top_k
// and threshold apply; the ranking setting sends both.
func TestSettingArguments(t *testing.T) {
	if got := Defaults.arguments("q"); len(got) != 1 || got["query"] != "q" {
		t.Errorf("default arguments %v", got)
	}
	if got := Ranking.arguments("q"); len(got) != 3 || got["top_k"] != 10 || got["score_threshold"] != 0.0 {
		t.Errorf("ranking arguments %v", got)
	}
}
