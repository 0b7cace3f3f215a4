package pgstore

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

func openFT(t *testing.T, dsn, name, cfg string, readOnly bool) *Store {
	t.Helper()
	s, err := Open(context.Background(), dsn, name, testVersion, Options{Keyword: KeywordFullText, TextConfig: cfg, ReadOnly: readOnly})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// keywordPaths are the files of a keyword search's hits, best first.
func keywordPaths(t *testing.T, v *View, query string) []string {
	t.Helper()
	hits, err := v.SearchLexical(query, 10)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, h := range hits {
		out = append(out, h.Record.Path)
	}
	return out
}

// fill commits docs in one run.
func fill(t *testing.T, s *Store, docs []doc) {
	t.Helper()
	u := begin(t, s)
	defer u.Close()
	for _, d := range docs {
		put(t, u, d)
	}
	commit(t, u, schema.EndOfRun)
}

func ftCorpus(rng *rand.Rand) []doc {
	return []doc{
		makeDoc(rng, "http/headers.md", "Call parse_http_header on every request line before routing it.",
			"The router matches paths by prefix."),
		makeDoc(rng, "grep.txt", "With --only-matching grep prints only the matched parts of a line."),
		makeDoc(rng, "garden.md", "Running and jumping runners jump over fences; the runner runs daily."),
		makeDoc(rng, "zh.md", "全文检索 对中文的支持"),
		makeDoc(rng, "notes/misc.md", "Nothing here matters: a line about the request of a friend."),
	}
}

// The full-text side finds identifiers whole and by their parts, stems
// with an english configuration only, finds nothing for unknown words
// (and says so through Coverage), and gives the fusion what it calibrates
// with: a score of about the held weight for one body occurrence of each
// word, the share of the weight a chunk holds.
func TestFullTextSearch(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(3, 4))
	s := openFT(t, dsn, "ft", "simple", false)
	fill(t, s, ftCorpus(rng))
	v := s.acquire()
	defer v.Release()

	for _, c := range []struct{ query, first string }{
		{"parse_http_header", "http/headers.md"},
		{"how do I use --only-matching", "grep.txt"}, // a leading - is no negation here
		{"only-matching", "grep.txt"},
		{"PARSE_HTTP_HEADER?", "http/headers.md"},
		{"headers", "http/headers.md"}, // the file name
		{"全文检索", "zh.md"},              // a CJK run as the parser splits it
	} {
		got := keywordPaths(t, v, c.query)
		if len(got) == 0 || got[0] != c.first {
			t.Errorf("%q: got %v, want %s first", c.query, got, c.first)
		}
	}
	// 'simple' does not stem: "runs" is found only where written so.
	if got := keywordPaths(t, v, "run"); len(got) != 0 {
		t.Errorf("simple stemmed run: %v", got)
	}
	// No match at all: nothing, coverage 0, no error.
	q := v.LexicalQuery("xylophone quasar")
	if res, ev := q.Search(10, []int64{1}); len(res) != 0 || ev[0] != (lexical.Evidence{}) || q.Coverage() != 0 {
		t.Errorf("no match: %v %v coverage %v", res, ev, q.Coverage())
	}
	// Half the query unknown: coverage below 1, the known half scored.
	q = v.LexicalQuery("parse_http_header xylophone")
	if c := q.Coverage(); c <= 0 || c >= 1 {
		t.Errorf("coverage of a half-known query: %v", c)
	}
	// Calibration: one body occurrence of each word scores its weight;
	// the chunk holding all of them has share 1, evidence equals search.
	q = v.LexicalQuery("prefix")
	w, rare := q.Weights()
	res, _ := q.Search(10, nil)
	if len(res) != 1 || res[0].Coverage != 1 || !near(res[0].Score, w) || rare <= 0 || rare > w {
		t.Fatalf("prefix: %+v weight %v rare %v", res, w, rare)
	}
	// Chunks 1 and 2 are headers.md's: the first holds both words.
	q = v.LexicalQuery("request routing")
	res, ev := q.Search(10, []int64{1, 2})
	if len(res) != 2 || res[0].Coverage != 1 || res[1].Coverage >= 1 || !near(ev[0].Score, res[0].Score) || ev[1] != (lexical.Evidence{}) {
		t.Errorf("request routing: %+v evidence %+v", res, ev)
	}
	terms, absent, idfMax := q.Terms()
	if len(terms) != 2 || absent != 0 || idfMax <= terms[0].IDF {
		t.Errorf("terms %+v absent %v idfMax %v", terms, absent, idfMax)
	}

	// An english configuration on the same table: its own column; stems.
	en := openFT(t, dsn, "ft", "english", false)
	ve := en.acquire()
	defer ve.Release()
	if got := keywordPaths(t, ve, "run"); !slices.Equal(got, []string{"garden.md"}) {
		t.Errorf("english did not stem run: %v", got)
	}
	if got := keywordPaths(t, ve, "parse_http_header"); len(got) == 0 || got[0] != "http/headers.md" {
		t.Errorf("english: parse_http_header: %v", got)
	}
}

// near: ts_rank_cd is a real (float4).
func near(a, b float64) bool { return math.Abs(a-b) <= 1e-6*math.Max(math.Abs(a), math.Abs(b)) }

// Deletes and changes are visible to the full-text side after their
// commit and not before, and a view of the older commit keeps answering
// as it did (the rows of deleted chunks stay for the grace period).
func TestFullTextFollowsCommits(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(5, 6))
	s := openFT(t, dsn, "ft", "simple", false)
	docs := ftCorpus(rng)
	u := begin(t, s)
	for _, d := range docs {
		put(t, u, d)
	}
	commit(t, u, schema.EndOfRun)
	old := s.acquire()
	defer old.Release()

	u.RemoveFile("grep.txt")
	changed := makeDoc(rng, "garden.md", "Tomatoes climb the fence with --only-matching care.")
	put(t, u, changed)
	if got := keywordPaths(t, s.acquire(), "only-matching"); !slices.Equal(got, []string{"grep.txt"}) {
		t.Errorf("before the commit: %v", got)
	}
	commit(t, u, schema.EndOfRun)
	u.Close()
	// Another server's store sees the commit.
	other := openFT(t, dsn, "ft", "simple", true)
	for name, st := range map[string]*Store{"writer": s, "reader": other} {
		v := st.acquire()
		if got := keywordPaths(t, v, "only-matching"); !slices.Equal(got, []string{"garden.md"}) {
			t.Errorf("%s after the commit: %v", name, got)
		}
		if got := keywordPaths(t, v, "runners"); len(got) != 0 {
			t.Errorf("%s: the replaced text is still found: %v", name, got)
		}
		v.Release()
	}
	if got := keywordPaths(t, old, "only-matching"); !slices.Equal(got, []string{"grep.txt"}) {
		t.Errorf("the old view: %v", got)
	}
	if got := keywordPaths(t, old, "runners"); !slices.Equal(got, []string{"garden.md"}) {
		t.Errorf("the old view lost the replaced text: %v", got)
	}
}

// An index made before the full-text side existed (the segments only)
// gains the column and its GIN index when a writer opens it with the
// option: its rows are searchable at once, the keyword segments still
// serve a store opened without it, and a read-only store asked for full
// text before that says what to do instead of failing its searches.
func TestFullTextMigratesExistingIndex(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(7, 8))
	plain := open(t, dsn, "idx", testVersion)
	fill(t, plain, ftCorpus(rng))

	_, err := Open(context.Background(), dsn, "idx", testVersion, Options{Keyword: KeywordFullText, ReadOnly: true})
	if err == nil || !strings.Contains(err.Error(), "keyword=fulltext") {
		t.Errorf("read-only full text of an index without the column: %v", err)
	}
	ft := openFT(t, dsn, "idx", "simple", false)
	v := ft.acquire()
	if got := keywordPaths(t, v, "parse_http_header"); len(got) == 0 || got[0] != "http/headers.md" {
		t.Errorf("migrated: %v", got)
	}
	v.Release()
	// Opening again changes nothing; the segments' store still searches.
	openFT(t, dsn, "idx", "simple", false)
	if got := keywordPaths(t, plain.acquire(), "parse_http_header"); len(got) == 0 || got[0] != "http/headers.md" {
		t.Errorf("segments after the migration: %v", got)
	}
	// The next commit writes rows the column covers.
	fill(t, ft, []doc{makeDoc(rng, "new.md", "A brand new quokka appears.")})
	if got := keywordPaths(t, ft.acquire(), "quokka"); !slices.Equal(got, []string{"new.md"}) {
		t.Errorf("a row after the migration: %v", got)
	}
}

// ?keyword=fulltext&tsconfig=english reach the options through the seam
// and are not sent to PostgreSQL as settings.
func TestFullTextURLParams(t *testing.T) {
	ctx := context.Background()
	dsn := pgtest.Database(t)
	sep := "?"
	if strings.Contains(dsn, "?") {
		sep = "&"
	}
	u, err := index.ParseStoreURL(dsn + sep + "keyword=fulltext&tsconfig=english")
	if err != nil {
		t.Fatal(err)
	}
	b, err := index.OpenBackend(ctx, u, "mrag_ft", testVersion, index.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	s := b.(*Store)
	if s.opts.Keyword != KeywordFullText || s.opts.TextConfig != "english" {
		t.Errorf("options %q %q", s.opts.Keyword, s.opts.TextConfig)
	}
	if _, err := index.ReadStoreSummary(ctx, u, "mrag_ft"); err != nil {
		t.Errorf("summary with the parameters: %v", err)
	}
	bad, _ := index.ParseStoreURL(dsn + sep + "keyword=fulltext&tsconfig=klingon")
	if b, err := index.OpenBackend(ctx, bad, "mrag_ft", testVersion, index.Options{}); err == nil {
		b.Close()
		t.Error("an unknown text search configuration opened")
	}
}

// A long query keeps its lexical.MaxQueryTerms rarest known lexemes, as
// package lexical keeps its terms.
func TestFullTextTermCap(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(9, 10))
	s := openFT(t, dsn, "ft", "simple", false)
	var common, rare []string
	for i := range lexical.MaxQueryTerms + 20 {
		common = append(common, fmt.Sprintf("c%d", i))
	}
	for i := range 10 {
		rare = append(rare, fmt.Sprintf("r%d", i))
	}
	line := strings.Join(common, " ")
	fill(t, s, []doc{
		makeDoc(rng, "a.md", line+" "+strings.Join(rare, " ")),
		makeDoc(rng, "b.md", line),
		makeDoc(rng, "c.md", "filler"),
	})
	v := s.acquire()
	defer v.Release()
	terms, _, _ := v.LexicalQuery(line + " " + strings.Join(rare, " ")).Terms()
	if len(terms) != lexical.MaxQueryTerms {
		t.Fatalf("%d terms", len(terms))
	}
	held := map[string]bool{}
	for _, tm := range terms {
		held[tm.Text] = true
	}
	for _, r := range rare {
		if !held[r] {
			t.Errorf("the rare term %s was dropped", r)
		}
	}
}

// Through the engine the full-text side is calibrated as the fusion
// expects: an identifier in one file ranks that file first above the
// default threshold in keyword and hybrid mode, as it does on the own
// segments of the same schema, and a string the folder never holds
// stays below it (the coverage gate reads the full-text statistics).
func TestFullTextThroughSearch(t *testing.T) {
	dsn := pgtest.Database(t)
	rng := rand.New(rand.NewPCG(11, 12))
	seg := open(t, dsn, "ft", testVersion)
	fill(t, seg, ftCorpus(rng))
	ft := openFT(t, dsn, "ft", "simple", false)
	first := map[string]float64{} // by side and mode
	for name, s := range map[string]*Store{"segments": seg, "fulltext": ft} {
		v := s.acquire()
		vec := unit(rng, testDim)
		for _, mode := range []search.Mode{search.Keyword, search.Hybrid} {
			req := search.Request{Query: "parse_http_header", TopK: 5, ScoreThreshold: search.DefaultScoreThreshold}
			got, err := search.Search(v, req, vec, search.Options{Mode: mode})
			if err != nil {
				t.Fatal(err)
			}
			if len(got) == 0 || got[0].Path != "http/headers.md" {
				t.Fatalf("%s %s: %+v", name, mode, got)
			}
			first[name+" "+string(mode)] = got[0].Score
			req.Query = "zqxjkv wvtrpl"
			if got, err := search.Search(v, req, vec, search.Options{Mode: mode}); err != nil || len(got) != 0 {
				t.Errorf("%s %s: a string nowhere in the folder found %+v %v", name, mode, got, err)
			}
		}
		v.Release()
	}
	// Measured 0.821 and 0.838 (keyword), 0.746 and 0.770 (hybrid).
	for _, mode := range []search.Mode{search.Keyword, search.Hybrid} {
		if d := first["fulltext "+string(mode)] - first["segments "+string(mode)]; math.Abs(d) > 0.1 {
			t.Errorf("%s: full text scores the identifier %.3f, the segments %.3f", mode, first["fulltext "+string(mode)], first["segments "+string(mode)])
		}
	}
}
