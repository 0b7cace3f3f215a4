package lexical

import (
	"slices"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestTokens(t *testing.T) {
	cases := []struct {
		text string
		want []string
	}{
		{"QX-7731-B", []string{"qx-7731-b", "qx7731b", "qx", "7731", "b"}},
		// Parts of an identifier add their stems: the plain word finds them.
		{"--only-matching", []string{"--only-matching", "only-matching", "onlymatching", "only", "onli", "matching", "match"}},
		{"max_retry_backoff_ms", []string{"max_retry_backoff_ms", "maxretrybackoffms", "max", "retry", "retri", "backoff", "ms"}},
		{"-v", []string{"-v", "v"}},
		{"snake_case", []string{"snake_case", "snakecase", "snake", "case"}},
		{"pkg.Func", []string{"pkg.func", "pkgfunc", "pkg", "func"}},
		{"camelCase HTTPServer", []string{"camelcase", "camel", "case", "httpserver", "http", "server"}},
		{"RFC 7807", []string{"rfc", "7807", "rfc7807"}},
		{"rfc7807", []string{"rfc7807", "rfc", "7807"}},
		{"The End.", []string{"end"}},
		// Plain words are stemmed after folding, so the accents typed or
		// not give one term.
		{"Crème BRÛLÉE, Straße", []string{"creme", "brule", "strass"}},
		{"brulee strasse", []string{"brule", "strass"}},
		{"Printers printer printing", []string{"printer", "printer", "print"}},
		{"gifts from Suppliers; retries", []string{"gift", "supplier", "retri"}},
		{"a ox 2024x", []string{"ox", "2024x", "2024", "x"}},
		{"ＡＢＣ ﬁle", []string{"abc", "file"}},
		{"東京都", []string{"東京", "京都"}},
		{"猫", []string{"猫"}},
		{"ひらがな カタカナ 한국어", []string{"ひら", "らが", "がな", "カタ", "タカ", "カナ", "한국", "국어"}},
		{"Go言語", []string{"go", "言語"}},
		// Other languages keep their function words (the stop list is
		// English): only words spelt like an English one drop (in, an).
		{"Die Rückerstattung wird in fünf Tagen überwiesen", []string{"die", "ruckerstattung", "wird", "funf", "tagen", "uberwiesen"}},
		{"富士山は日本で", []string{"富士", "士山", "山は", "は日", "日本", "本で"}},
		{"长城有多长", []string{"长城", "城有", "有多", "多长"}},
		{"--- * ---", nil},
		{"the of and", nil},
		{"end. Next", []string{"end", "next"}},
		{"🙂👍🏽 ok", []string{"ok"}},
		{"a\xffb", []string{"b"}}, // "a" is a stop word; the bad byte separates
	}
	for _, c := range cases {
		if got := Tokens(c.text); !slices.Equal(got, c.want) {
			t.Errorf("Tokens(%q) = %q, want %q", c.text, got, c.want)
		}
	}
}

func TestTokensClipLongTerms(t *testing.T) {
	long := strings.Repeat("é", 100)
	for _, tok := range Tokens(long + " " + strings.Repeat("x", 500)) {
		if len(tok) > MaxTokenBytes || !utf8.ValidString(tok) {
			t.Fatalf("term %q: %d bytes", tok, len(tok))
		}
	}
}

// FuzzTokens checks properties that hold for any input: no panic, valid
// UTF-8 terms no longer than MaxTokenBytes, the same result twice, and at
// most four terms per input rune.
func FuzzTokens(f *testing.F) {
	for _, s := range []string{
		"QX-7731-B", "--only-matching", "snake_case pkg.Func", "RFC 7807", "東京都に住む",
		"한국어 텍스트", "emoji 🙂👍🏽🇫🇷", "a\xff\xfeb", "e\u0301te\u0301", "----", "x-", "-x", "a.b.c.d",
		"HTTPServerError42abc", "ＡＢＣ", "\u3099\u309a", "ß ẞ İ ı",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		got := Tokens(s)
		if again := Tokens(s); !slices.Equal(got, again) {
			t.Fatalf("not deterministic: %q then %q", got, again)
		}
		if limit := 4*utf8.RuneCountInString(s) + 4; len(got) > limit {
			t.Fatalf("%d terms from %d runes", len(got), utf8.RuneCountInString(s))
		}
		for _, tok := range got {
			if tok == "" || len(tok) > MaxTokenBytes || !utf8.ValidString(tok) {
				t.Fatalf("bad term %q from %q", tok, s)
			}
		}
	})
}

// TestTokensLinearTime: inputs that once cost quadratic time finish.
func TestTokensLinearTime(t *testing.T) {
	for _, s := range []string{
		strings.Repeat("-", 200000),
		strings.Repeat("a1", 100000),
		strings.Repeat("a-", 100000),
		strings.Repeat("東", 100000),
	} {
		if n := len(Tokens(s)); n > 4*len(s) {
			t.Fatalf("%d terms", n)
		}
	}
}
