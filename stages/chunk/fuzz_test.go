package chunk

import (
	"strings"
	"testing"
)

// fuzzSeeds are texts that reach every cut level, the token budget, long
// words, blank-line runs and multi-code-point characters.
func fuzzSeeds() []string {
	return []string{
		"",
		"   \n\n\t ",
		"a",
		"Hello, world. This is a test.\n\nNew paragraph here! And another? Yes.",
		"e.g. this and i.e. that, Dr. Who and U.S. Army. End.",
		strings.Repeat("x", 700),
		strings.Repeat("漢字かな。", 120),
		strings.Repeat("👩\u200d💻 cafe\u0301 ", 60),
		"\n\n\nalpha" + strings.Repeat("\n", 400) + "beta\n\n\ngamma\n\n\n",
		strings.Repeat("func f(a, b int) int {\n\treturn a*b + m[a][b]\n}\n\n", 20),
		"QUJDREVGR0hJSktMTU5PUFFSU1RVVldYWVo=" + strings.Repeat("+/0123456789abcdef", 40),
		englishText(11, 3000),
	}
}

// FuzzSplit checks Split's invariants (see checkChunks: exact offsets and
// text, order and progress, coverage of every non-space code point, overlap
// at most Overlap, no empty or space-bounded chunk, Size and token budget)
// over random texts and configurations, with the real MiniLM WordPiece
// (FitPrefix path or Count alone) or the test counter, which treats words
// longer than a fuzzed length as one piece, so counts are not monotone in
// the prefix, as with WordPiece's [UNK].
func FuzzSplit(f *testing.F) {
	for i, s := range fuzzSeeds() {
		f.Add(s, uint16(100+i*37), uint16(20+i), uint8(40+i*9), uint8(i))
		f.Add(s, uint16(1000), uint16(200), uint8(0), uint8(99))
		f.Add(s, uint16(1000), uint16(200), uint8(0), uint8(0))
		f.Add(s, uint16(300+i), uint16(50), uint8(60+i), uint8(1))
	}
	tok := realTokenizer(f)
	f.Fuzz(func(t *testing.T, text string, size, overlap uint16, maxTokens, counter uint8) {
		// Split's input is extracted text: valid UTF-8.
		text = strings.ToValidUTF8(text, "\uFFFD")
		cfg := Config{
			Size:      int(size % 1200),       // 0 means the default
			Overlap:   int(overlap%1300) - 50, // negative and too large are clamped
			MaxTokens: int(maxTokens % 130),   // 0 disables the budget
		}
		if cfg.MaxTokens > 0 && cfg.MaxTokens < 16 {
			// Budgets of a few tokens make chunks of a few code points; with
			// a large Size each costs O(Size) and the fuzzer crawls.
			cfg.Size %= 64
		}
		var tc TokenCounter
		switch {
		case counter == 0:
			tc, cfg.MaxTokens = tok, 256 // production
		case counter == 1:
			tc = countOnly{tok}
		case counter%2 == 0:
			tc = tok
		default:
			tc = pieceCounter{longWord: int(counter % 120)}
		}
		chunks := Split(text, nil, cfg, tc)
		if msg := checkChunks(text, cfg, tc, chunks); msg != "" {
			t.Fatalf("cfg %+v: %s", cfg, msg)
		}
	})
}
