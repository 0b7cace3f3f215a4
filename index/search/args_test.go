package search

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// Bad filter arguments are refused with the argument named.
func TestParseFilterErrors(t *testing.T) {
	for _, c := range []struct {
		args FilterArgs
		want string
	}{
		{FilterArgs{PathGlob: "[a-"}, "path_glob"},
		{FilterArgs{PathGlob: "../x"}, "outside the data folder"},
		{FilterArgs{Exts: []string{"*.md"}}, `argument "ext"`},
		// A file's extension is what follows its last dot: these match nothing.
		{FilterArgs{Exts: []string{"tar.gz"}}, `the part after the last dot: "gz"`},
		{FilterArgs{Exts: []string{"..md"}}, `the part after the last dot: "md"`},
		{FilterArgs{Exts: []string{"md."}}, `argument "ext": "md."`},
		{FilterArgs{ModifiedAfter: "yesterday"}, `argument "modified_after" must be an RFC 3339 time`},
		{FilterArgs{ModifiedBefore: "2026-13-01T00:00:00Z"}, `"modified_before"`},
		{FilterArgs{ModifiedAfter: "2026-02-01T00:00:00Z", ModifiedBefore: "2026-01-01T00:00:00Z"}, "must be before"},
	} {
		if f, err := ParseFilter(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, %v; want an error with %q", c.args, f, err, c.want)
		}
	}
	if f, err := ParseFilter(FilterArgs{}); f != nil || err != nil {
		t.Errorf("no arguments: %v %v, want no filter", f, err)
	}
	f, err := ParseFilter(FilterArgs{Exts: []string{"md", ".PDF", "noext"}})
	if err != nil || strings.Join(f.Exts, ",") != ".md,.pdf," {
		t.Errorf("exts: %v %v", f, err)
	}
}

// Each argument is checked against its limits, the error naming it.
func TestParseArgsLimits(t *testing.T) {
	if req, err := ParseArgs(map[string]any{"query": "q", "top_k": float64(MaxTopK), "score_threshold": 0.0}); err != nil || req.TopK != 50 || req.ScoreThreshold != 0 {
		t.Errorf("the bounds: %+v, %v", req, err)
	}
	for _, tc := range []struct {
		query          string
		topK, treshold float64
		want           string
	}{
		{" \n", 5, 0.2, `"query" must not be empty`},
		{"q", MinTopK - 1, 0.2, `"top_k" must be between 1 and 50, got 0`},
		{"q", MaxTopK + 1, 0.2, `"top_k" must be between 1 and 50, got 51`},
		{"q", 1e10, 0.2, `"top_k" must be between 1 and 50, got 1e+10`},
		{"q", 5, 1.5, `"score_threshold" must be between 0 and 1, got 1.5`},
		{"q", 5, math.NaN(), `"score_threshold" must be between 0 and 1`},
	} {
		_, err := ParseArgs(map[string]any{"query": tc.query, "top_k": tc.topK, "score_threshold": tc.treshold})
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %v %v: got %v, want %q", tc.query, tc.topK, tc.treshold, err, tc.want)
		}
	}
}

func TestParseArgsDefaults(t *testing.T) {
	req, err := ParseArgs(map[string]any{"query": "parental leave"})
	if err != nil {
		t.Fatal(err)
	}
	if want := (Request{Query: "parental leave", TopK: 5, ScoreThreshold: 0.2}); req.Query != want.Query || req.TopK != want.TopK || req.ScoreThreshold != want.ScoreThreshold || req.Filter != nil {
		t.Errorf("got %+v, want %+v", req, want)
	}
	req, err = ParseArgs(map[string]any{"query": "q", "top_k": 50.0, "score_threshold": 0.0, "ext": []any{"md"}})
	if err != nil || req.TopK != 50 || req.ScoreThreshold != 0 || req.Filter == nil {
		t.Errorf("bounds: %+v, %v", req, err)
	}
	for wantErr, args := range map[string]map[string]any{
		`unknown argument "topk"`:                      {"query": "q", "topk": 3.0},
		`argument "top_k" must be an integer, got 2.5`: {"query": "q", "top_k": 2.5},
		`argument "path_glob" must be a string`:        {"query": "q", "path_glob": 3.0},
		`missing required argument "query"`:            {},
	} {
		if _, err := ParseArgs(args); err == nil || !strings.Contains(err.Error(), wantErr) {
			t.Errorf("%v: error %v, want %q", args, err, wantErr)
		}
	}
}

// kept is a view whose Release leaves it to the test.
type kept struct{ index.View }

func (kept) Release() {}

// A tool call's arguments are checked before the index is read; keyword
// mode embeds nothing; no view is no results, and the text says so with
// the note on files left out.
func TestAnswerCall(t *testing.T) {
	snap := testSnapshot(t, 20)
	viewed, embedded := 0, 0
	src := Source{
		View:      func(*Options) (index.View, error) { viewed++; return kept{snap}, nil },
		Embed:     func(string) ([]float32, error) { embedded++; return nil, errors.New("embedded") },
		Unindexed: Unindexed{Count: 1, Examples: []string{"rota.csv"}, Exts: []string{".csv"}},
	}
	var bad *ArgsError
	if _, err := AnswerCall(map[string]any{"query": "zeta-3", "top_k": 0.0}, src, Options{Mode: Keyword}); !errors.As(err, &bad) || viewed != 0 {
		t.Errorf("top_k 0: %v (%T), index read %d times; want an *ArgsError before any read", err, err, viewed)
	}
	out, err := AnswerCall(map[string]any{"query": "zeta-3"}, src, Options{Mode: Keyword, Explain: true})
	if err != nil || embedded != 0 || len(out.Results) == 0 || out.Results[0].Path != "notes-3.txt" || out.Results[0].Explain == nil {
		t.Errorf("keyword search: %+v, %v, embedded %d times; want notes-3.txt first, explained, nothing embedded", out, err, embedded)
	}
	src.View = func(*Options) (index.View, error) { return nil, nil }
	out, err = AnswerCall(map[string]any{"query": "zeta-3"}, src, Options{})
	if text := out.Text(); err != nil || out.Results == nil || len(out.Results) != 0 ||
		!strings.HasPrefix(text, `No passages matched "zeta-3".`) || !strings.HasSuffix(text, "the reindex at its next start indexes them.") {
		t.Errorf("no view: %+v, %v; text:\n%s", out, err, text)
	}
}

// Filters that pass no indexed file say so, with how many files each
// passes alone, instead of the extensions note or a bare "no match" that
// reads as the folder lacking an answer.
func TestAnswerCallFilteredOut(t *testing.T) {
	snap := testSnapshot(t, 4) // notes-0.txt .. notes-3.txt, all .txt
	src := Source{
		View:      func(*Options) (index.View, error) { return kept{snap}, nil },
		Unindexed: Unindexed{Count: 1, Examples: []string{"rota.csv"}, Exts: []string{".csv"}},
	}
	for _, c := range []struct {
		args map[string]any
		want string
	}{
		{map[string]any{"ext": []any{"pdf"}}, "(of the 4 files the index holds, ext .pdf passes 0). Widen or drop a filter."},
		{map[string]any{"path_glob": "notes-1.*", "ext": "md"},
			`(of the 4 files the index holds, path_glob "notes-1.*" passes 1, ext .md passes 0). Widen`},
		{map[string]any{"path_glob": "notes-1.*", "modified_before": "1970-01-01T00:00:00Z"}, // the test files' mtime is 0
			`path_glob "notes-1.*" passes 1, modified_before 1970-01-01T00:00:00Z passes 0)`},
		{map[string]any{"path_glob": "notes-[12].txt", "ext": "txt", "modified_after": "2999-01-01T00:00:00Z"},
			`modified_after 2999-01-01T00:00:00Z passes 0)`},
	} {
		c.args["query"] = "zeta-3"
		out, err := AnswerCall(c.args, src, Options{Mode: Keyword})
		if err != nil || len(out.Results) != 0 || !out.FilteredOut() ||
			!strings.HasPrefix(out.Note, "Note: no indexed file passes the search's filters") || !strings.Contains(out.Note, c.want) {
			t.Errorf("%v: %+v, %v; want the note holding %q", c.args, out, err, c.want)
		}
	}
	// A filter some file passes is searched as usual.
	out, err := AnswerCall(map[string]any{"query": "zeta-3", "ext": "txt"}, src, Options{Mode: Keyword})
	if err != nil || out.FilteredOut() || len(out.Results) == 0 || strings.Contains(out.Note, "filters") {
		t.Errorf("ext txt: %+v, %v", out, err)
	}
}

// A path_glob naming a folder ("ops", "ops/") matches no file; the note
// gives the pattern that matches the files in it.
func TestFilteredOutFolderGlob(t *testing.T) {
	snap := buildSnapshot(t, 2, func(f int) (string, string) {
		return "ops/runbook-" + string(rune('a'+f)) + ".txt", "Fail over the database, then resume the cluster manager."
	}, func(int) []float32 { v := make([]float32, testDim); v[0] = 1; return v })
	src := Source{View: func(*Options) (index.View, error) { return kept{snap}, nil }}
	for _, glob := range []string{"ops", "ops/", "./ops"} {
		out, err := AnswerCall(map[string]any{"query": "failover", "path_glob": glob}, src, Options{Mode: Keyword})
		if want := `names a folder: path_glob "ops/**" matches the files in it`; err != nil || !out.FilteredOut() || !strings.Contains(out.Note, want) {
			t.Errorf("path_glob %q: %+v, %v; want the note to say %q", glob, out, err, want)
		}
	}
	out, err := AnswerCall(map[string]any{"query": "failover", "path_glob": "docs/"}, src, Options{Mode: Keyword})
	if err != nil || !out.FilteredOut() || strings.Contains(out.Note, "names a folder") {
		t.Errorf("path_glob of no indexed folder: %+v, %v", out, err)
	}
}
