package chunk

import (
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
)

// The production TokenCounter: all-MiniLM-L6-v2's WordPiece, as installed by
// make setup (MICRO_RAG_MODEL_DIR overrides the cache location).
var (
	minilmOnce sync.Once
	minilm     *tokenizer.Tokenizer
	minilmErr  error
)

func realTokenizer(tb testing.TB) *tokenizer.Tokenizer {
	tb.Helper()
	minilmOnce.Do(func() {
		dir := os.Getenv("MICRO_RAG_MODEL_DIR")
		if dir == "" {
			cache := os.Getenv("XDG_CACHE_HOME")
			if cache == "" {
				home, _ := os.UserHomeDir()
				cache = filepath.Join(home, ".cache")
			}
			dir = filepath.Join(cache, "micro-rag-mcp", "models", "all-MiniLM-L6-v2")
		}
		minilm, minilmErr = tokenizer.Load(filepath.Join(dir, "tokenizer.json"))
	})
	if minilmErr != nil {
		tb.Fatalf("load tokenizer (run make setup): %v", minilmErr)
	}
	return minilm
}

// countOnly hides FitPrefix, forcing Split's binary search.
type countOnly struct{ tc TokenCounter }

func (c countOnly) Count(text string) int { return c.tc.Count(text) }

// hardTexts are dense in word pieces per code point.
func hardTexts() map[string]string {
	rng := rand.New(rand.NewPCG(9, 9))
	var digits, b64, cjk, mixed strings.Builder
	for digits.Len() < 20_000 {
		digits.WriteString(strings.Repeat("1234567890", 1+rng.IntN(3)))
		digits.WriteString([]string{" ", ", ", ".", "-", "\n"}[rng.IntN(5)])
	}
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
	for b64.Len() < 20_000 {
		b64.WriteByte(alphabet[rng.IntN(len(alphabet))])
		if b64.Len()%76 == 75 {
			b64.WriteByte('\n')
		}
	}
	for cjk.Len() < 30_000 {
		for range 5 + rng.IntN(40) {
			cjk.WriteRune(rune(0x4E00 + rng.IntN(0x5000)))
			if rng.IntN(4) == 0 {
				cjk.WriteRune(rune(0x3041 + rng.IntN(0x50)))
			}
		}
		cjk.WriteString([]string{"。", "、", "！", "？", "\n\n"}[rng.IntN(5)])
	}
	for mixed.Len() < 30_000 {
		mixed.WriteString([]string{"naïve café ", "Ünïcödé ", "😀👍🏽 ", "👩\u200d💻 ", "αβγδ ", "Привет мир. ", "x\u0301y\u0302 ", "x=f(y[3]);", "İstanbul "}[rng.IntN(9)])
	}
	var code strings.Builder
	for i := 0; code.Len() < 30_000; i++ {
		code.WriteString("func (s *server) handle")
		code.WriteString(strings.Repeat("X", i%5))
		code.WriteString("(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {\n\tif err := ctx.Err(); err != nil {\n\t\treturn nil, fmt.Errorf(\"handle: %w\", err)\n\t}\n\tm[i&0xff] |= 1<<3 ^ 0x7f // bits\n\treturn &mcp.CallToolResult{}, nil\n}\n\n")
	}
	return map[string]string{
		"english": englishText(1, 100_000),
		"digits":  digits.String(),
		"base64":  b64.String(),
		"cjk":     cjk.String(),
		"mixed":   mixed.String(),
		"code":    code.String(),
		"oneword": strings.Repeat("a1", 50_000),
	}
}

// TestSplitRealTokenizer: with MiniLM's WordPiece no chunk is truncated by
// the model (Count <= 254), on prose and on dense text, whether Split finds
// the token window with FitPrefix or by binary search.
func TestSplitRealTokenizer(t *testing.T) {
	tok := realTokenizer(t)
	for name, text := range hardTexts() {
		for _, tc := range []struct {
			name string
			c    TokenCounter
		}{{"fitprefix", tok}, {"countonly", countOnly{tok}}} {
			t.Run(name+"/"+tc.name, func(t *testing.T) {
				chunks := Split(text, nil, Default, tc.c)
				mustCheck(t, text, Default, tok, chunks)
				maxTok, sum := 0, 0
				for _, c := range chunks {
					n := tok.Count(c.Text)
					maxTok = max(maxTok, n)
					sum += c.CharEnd - c.CharStart
				}
				t.Logf("%d chunks, mean %d code points, max %d pieces", len(chunks), sum/len(chunks), maxTok)
				if name == "english" && sum/len(chunks) < 600 {
					t.Errorf("English chunks average %d code points", sum/len(chunks))
				}
			})
		}
	}
}

// TestSplitRealTokenizerShrinks pins that dense text really is cut below
// the size target because of tokens, not size.
func TestSplitRealTokenizerShrinks(t *testing.T) {
	tok := realTokenizer(t)
	text := hardTexts()["cjk"]
	if n := tok.Count(string([]rune(text)[:1000])); n <= 254 {
		t.Fatalf("fixture: 1000 CJK code points are only %d pieces", n)
	}
	for i, c := range Split(text, nil, Default, tok) {
		if n := c.CharEnd - c.CharStart; n > 600 {
			t.Fatalf("chunk %d has %d code points: token budget ignored", i, n)
		}
	}
}
