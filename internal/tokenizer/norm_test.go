package tokenizer

import (
	"bufio"
	"compress/gzip"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// refNormalization reads testdata/normref.txt.gz: the reference normaliser's
// output for every code point that does not map to itself.
func refNormalization(t *testing.T, path string) map[rune][]rune {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	z, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	hex := func(s string) rune {
		v, err := strconv.ParseUint(s, 16, 32)
		if err != nil {
			t.Fatal(err)
		}
		return rune(v)
	}
	ref := make(map[rune][]rune)
	sc := bufio.NewScanner(z)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if lo, hi, ok := strings.Cut(f[0], "-"); ok {
			for r := hex(lo); r <= hex(hi); r++ {
				if len(f) == 2 { // "cjk": the ideograph between spaces
					ref[r] = []rune{' ', r, ' '}
				} else {
					ref[r] = []rune{}
				}
			}
			continue
		}
		var out []rune
		for _, x := range f[1:] {
			out = append(out, hex(x))
		}
		ref[hex(f[0])] = out
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return ref
}

// preTokens splits a normalised string the way BertPreTokenizer does.
func preTokens(rs []rune) []string {
	var out []string
	var cur []rune
	end := func() {
		if len(cur) > 0 {
			out = append(out, string(cur))
			cur = cur[:0]
		}
	}
	for _, r := range rs {
		switch {
		case unicode.IsSpace(r):
			end()
		case isPunct(r):
			end()
			out = append(out, string(r))
		default:
			cur = append(cur, r)
		}
	}
	end()
	return out
}

// TestEveryCodePoint checks the normaliser, character by character, against
// the reference over all of Unicode, for uncased and cased vocabularies.
func TestEveryCodePoint(t *testing.T) {
	t.Run("uncased", func(t *testing.T) { everyCodePoint(t, "testdata/normref.txt.gz", true) })
	t.Run("cased", func(t *testing.T) { everyCodePoint(t, "testdata/normref-cased.txt.gz", false) })
}

func everyCodePoint(t *testing.T, refPath string, lowercase bool) {
	ref := refNormalization(t, refPath)
	tk := &Tokenizer{vocab: map[string]int32{}, cont: map[string]int32{}, maxChars: 100, maxPiece: 1, lowercase: lowercase}
	s := new(state)
	bad := 0
	var got []string
	trace := func(w []byte) { got = append(got, string(w)) }
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if 0xD800 <= r && r < 0xE000 {
			continue
		}
		want, ok := ref[r]
		if !ok {
			want = []rune{r}
		}
		got = got[:0]
		s.reset(false)
		s.trace = trace
		tk.run(string(r), s)
		if exp := preTokens(want); !slices.Equal(got, exp) {
			if bad++; bad <= 50 {
				t.Errorf("U+%04X: got %q, want %q", r, got, exp)
			}
		}
	}
	if bad > 0 {
		t.Errorf("%d code points differ", bad)
	}
}
