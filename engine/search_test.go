package engine

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// filler is prose about nothing in particular, seeded, so identifiers
// planted in it are the only rare tokens of their file.
func filler(seed uint64, sentences int) string {
	rng := rand.New(rand.NewPCG(seed, 2))
	words := strings.Fields("the service team reviews each request and records the outcome in the weekly report so that " +
		"owners can follow progress on deployment storage network access billing support release planning")
	var b strings.Builder
	for i := range sentences {
		n := 6 + rng.IntN(12)
		for w := range n {
			if w > 0 {
				b.WriteByte(' ')
			}
			b.WriteString(words[rng.IntN(len(words))])
		}
		b.WriteString(". ")
		if i%7 == 6 {
			b.WriteString("\n\n")
		}
	}
	return b.String()
}

// identifierCorpus hides one identifier deep inside each of several long
// files; each occurs in exactly one file.
var identifiers = []struct{ file, id, sentence string }{
	{"errors/catalogue.txt", "QX-7731-B", "Error QX-7731-B means the ledger replica refused a write because its clock ran ahead."},
	{"cli/grep-notes.md", "--only-matching", "Pass --only-matching to print just the matched part of each line."},
	{"code/parser.md", "parse_http_header", "The helper parse_http_header lowercases the field name before the lookup."},
	{"code/api.txt", "pkg.NewDecoder", "Call pkg.NewDecoder once per stream and reuse it for every frame."},
	{"standards/problems.md", "RFC 7807", "Errors are returned as problem details following RFC 7807 with a type URI."},
}

func identifierCorpus() map[string]string {
	files := map[string]string{}
	for i, x := range identifiers {
		files[x.file] = filler(uint64(i), 60) + "\n\n" + x.sentence + "\n\n" + filler(uint64(i+100), 40)
	}
	for i := range 6 {
		files[fmt.Sprintf("misc/notes-%d.txt", i)] = filler(uint64(i+200), 50)
	}
	return files
}

// TestIdentifierRanksFirst: an identifier that occurs in exactly one file is
// that query's top hit with the default arguments, as the passage that
// holds it.
func TestIdentifierRanksFirst(t *testing.T) { eachBackend(t, testIdentifierRanksFirst) }

func testIdentifierRanksFirst(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	writeCorpus(t, data, identifierCorpus())
	e := newEngine(t, Config{DataFolder: data, Store: store})
	reindex(t, e, ReindexRequest{})
	for _, x := range identifiers {
		for _, q := range []string{x.id, "what does " + x.id + " mean?"} {
			res := search(t, e, q)
			if len(res) == 0 || res[0].Path != x.file || !strings.Contains(res[0].Snippet, x.id) {
				t.Errorf("%q: top %+v, want %s holding %q", q, first(res), x.file, x.id)
				continue
			}
			if res[0].Score < 0.2 || res[0].Score > 1 {
				t.Errorf("%q: score %v", q, res[0].Score)
			}
		}
	}
}

func first(res []isearch.Result) any {
	if len(res) == 0 {
		return "nothing"
	}
	return fmt.Sprintf("%s (%.3f) %.80q", res[0].Path, res[0].Score, res[0].Snippet)
}

// TestBadQueries: queries with no usable words, huge queries, other
// scripts and emoji give sensible results (possibly none) and never an
// error, in every search mode.
func TestBadQueries(t *testing.T) { eachBackend(t, testBadQueries) }

func testBadQueries(t *testing.T, store index.StoreURL) {
	data := t.TempDir()
	files := identifierCorpus()
	files["intl/tokyo.md"] = "# 東京の天気\n\n東京の天気は晴れです。明日は雨が降るでしょう。"
	files["intl/moscow.txt"] = "Москва — столица России. Зимой в Москве идёт снег."
	files["intl/cairo.txt"] = "القاهرة هي عاصمة مصر. النيل يمر عبر المدينة."
	e := newEngine(t, Config{DataFolder: data, Store: store})
	writeCorpus(t, data, files)
	reindex(t, e, ReindexRequest{})

	rng := rand.New(rand.NewPCG(9, 9))
	var noise strings.Builder
	for noise.Len() < 10000 {
		noise.WriteRune(rune(0x20 + rng.IntN(0x3000)))
	}
	queries := map[string]string{
		"stop words":        "the of and to a in is it that",
		"punctuation":       "?!... ;; -- (( )) ** // \\\\ ''",
		"10k words":         strings.Repeat("ledger replica clock ", 500)[:10000],
		"10k noise":         noise.String(),
		"10k one token":     strings.Repeat("x", 10000),
		"japanese":          "東京の天気",
		"russian":           "столица России",
		"arabic":            "عاصمة مصر",
		"hindi":             "नमस्ते दुनिया",
		"emoji":             "🙂🚀🔥",
		"emoji and words":   "🔥 ledger replica clock 🔥",
		"zero width":        "\u200b\u200d\ufeff",
		"combining marks":   "e\u0301\u0301\u0301 a\u0308",
		"control chars":     "\x01\x02\x7f",
		"private use":       "\ue000\uf8ff",
		"invalid utf-8":     "ledger \xff\xfe replica",
		"lone identifier":   "QX",
		"one char":          "a",
		"digits":            "7731",
		"surrogate escapes": "\\ud83d\\ude00",
	}
	for _, mode := range []isearch.Mode{isearch.Hybrid, isearch.Dense, isearch.Keyword} {
		e.cfg.SearchMode = mode // tests only: the engine reads it per search
		for name, q := range queries {
			for _, threshold := range []float64{0.2, 0} {
				res, err := e.Search(context.Background(), isearch.Request{Query: q, TopK: 5, ScoreThreshold: threshold})
				if err != nil {
					t.Errorf("%s, %s: %v", mode, name, err)
					continue
				}
				if len(res) > 5 {
					t.Errorf("%s, %s: %d results", mode, name, len(res))
				}
				for i, r := range res {
					if r.Score < threshold || r.Score > 1 || (i > 0 && r.Score > res[i-1].Score) {
						t.Errorf("%s, %s: result %d score %v", mode, name, i, r.Score)
					}
					if _, ok := files[r.Path]; !ok || strings.TrimSpace(r.Snippet) == "" {
						t.Errorf("%s, %s: result %+v", mode, name, r)
					}
				}
			}
		}
	}
	// Other scripts are found by their words, not only by chance.
	e.cfg.SearchMode = isearch.Hybrid
	for q, want := range map[string]string{"東京の天気": "intl/tokyo.md", "столица России": "intl/moscow.txt", "عاصمة مصر": "intl/cairo.txt"} {
		if res := search(t, e, q); len(res) == 0 || res[0].Path != want {
			t.Errorf("%q: top %v, want %s", q, first(res), want)
		}
	}
}
