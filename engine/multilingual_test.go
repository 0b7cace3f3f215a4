package engine

import (
	"context"
	"testing"

	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
)

// multilingual is a mixed folder: English, German, Chinese and Japanese
// documents, two of each foreign language on neighbouring subjects.
var multilingual = map[string]string{
	"en/sourdough.md": "A sourdough starter is a culture of wild yeast and lactobacilli fed with flour and water every day.",
	"en/tides.txt":    "Spring tides happen when the sun and moon line up, making high tides higher and low tides lower.",
	"de/erstattung.md": "Die Rückerstattung wird innerhalb von fünf Werktagen auf Ihr Konto überwiesen, sobald die Ware " +
		"bei uns eingegangen ist und geprüft wurde.",
	"de/schwarzwald.md": "Der Schwarzwald ist ein Mittelgebirge im Südwesten Deutschlands, bekannt für Kuckucksuhren und dichte Tannenwälder.",
	"zh/xiongmao.md":    "大熊猫主要生活在中国四川的山区竹林中，每天要吃大量的竹子，是中国的国宝。",
	"zh/changcheng.md":  "长城是古代中国为抵御北方游牧民族而修建的军事防御工程，全长两万多公里。",
	"zh/shanghai.md":    "上海是中国最大的经济中心城市，黄浦江穿城而过，外滩有许多历史建筑。",
	"ja/fuji.md":        "富士山は日本で最も高い山で、標高は3776メートルです。夏には多くの登山者が訪れます。",
	"ja/sushi.md":       "寿司は酢飯と新鮮な魚介類を組み合わせた日本の伝統料理です。",
}

// TestMultilingualFolder: in a mixed folder, a query in German, Chinese or
// Japanese finds the document in its language that answers it at rank 1,
// by keywords (Han and kana as character pairs, German words folded) and
// in hybrid search; with bge-small-zh a Chinese query does so by meaning
// alone too.
func TestMultilingualFolder(t *testing.T) {
	data, idx := t.TempDir(), t.TempDir()
	writeCorpus(t, data, multilingual)
	queries := []struct{ q, want string }{
		{"Wie lange dauert die Rückerstattung?", "de/erstattung.md"},
		{"Kuckucksuhren im Schwarzwald", "de/schwarzwald.md"},
		{"大熊猫吃什么", "zh/xiongmao.md"},
		{"长城有多长", "zh/changcheng.md"},
		{"黄浦江在哪个城市", "zh/shanghai.md"},
		{"日本一高い山は？", "ja/fuji.md"},
		{"寿司の作り方", "ja/sushi.md"},
	}
	const zh = "bge-small-zh-v1.5-int8"
	first := newEngine(t, Config{DataFolder: data, IndexFolder: idx, Model: zh})
	checkCounts(t, "index", reindex(t, first, ReindexRequest{}), len(multilingual), 0, 0, 0, len(multilingual))
	first.Close()
	for _, mode := range []isearch.Mode{isearch.Keyword, isearch.Hybrid, isearch.Dense} {
		e := newEngine(t, Config{DataFolder: data, IndexFolder: idx, Model: zh, SearchMode: mode, ReadOnly: true})
		for _, c := range queries {
			if mode == isearch.Dense && c.want[:3] != "zh/" {
				continue // by meaning alone, only the Chinese model's own language is asked of it
			}
			// Rank is the point here, not the score: a one-term keyword
			// match in a folder of nine scores low.
			res, err := e.Search(context.Background(), isearch.Request{Query: c.q, TopK: 3})
			if err != nil {
				t.Fatal(err)
			}
			if len(res) == 0 || res[0].Path != c.want {
				var got []string
				for _, r := range res {
					got = append(got, r.Path)
				}
				t.Errorf("%s %q: got %v, want %s first", mode, c.q, got, c.want)
			}
		}
		e.Close()
	}
}
