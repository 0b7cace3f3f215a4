package chunk

import (
	"math/rand/v2"
	"reflect"
	"strings"
	"testing"
	"unicode/utf8"
)

// small makes cut choices easy to see: with Size 100 a paragraph break is
// taken from code point 50 on, other boundaries from 60 on.
var small = Config{Size: 100, Overlap: 20}

func TestSplitCutChoice(t *testing.T) {
	tests := []struct {
		name string
		want string // the first chunk
		rest string // what follows it in the text
	}{
		{
			name: "paragraph beats a later sentence end",
			want: "The first paragraph talks about rivers. It has two sentences in it here.",
			rest: "\n\nSecond paragraph starts. It goes on. And on with more words to fill the window up.",
		},
		{
			name: "paragraph break before half the window is passed over",
			want: "Short intro.\n\nThis paragraph runs long enough to pass the sixty percent mark.",
			rest: " More words follow here without any stop until well past the window edge",
		},
		{
			name: "sentence beats a later line break",
			want: "One sentence that is written to be long enough, running past sixty percent.",
			rest: " Words go on\nand on past the window edge without any stop at all really",
		},
		{
			name: "line break beats a later word boundary",
			want: "- a list item that has no full stop but is long enough to pass the mark",
			rest: "\n- next item with words words words words words words words words",
		},
		{
			name: "word boundary beats a hard cut",
			want: "words without any punctuation at all keep going and going until the window is nearly full of",
			rest: " abcdefghijklmnop more words after",
		},
		{
			name: "hard cut inside one long word",
			want: strings.Repeat("x", 100),
			rest: strings.Repeat("x", 150),
		},
		{
			name: "abbreviations and initials are not sentence ends",
			want: "We measured the river at dawn on many days in the year of the flood.",
			rest: " Then Dr. Smith and the U.S. Army came by e.g. boat to see it all.",
		},
		{
			name: "lower-case word after a period is no sentence end",
			want: "This is a sentence that ends right here at the sixty percent point!",
			rest: " Next see p. values and e.g. ranges and so on. Very long words follow",
		},
		{
			name: "sentence end inside closing quotes",
			want: `The guard looked at us and then he said "stop right there, all of you."`,
			rest: ` We stopped and waited for a long time by the gate until it opened.`,
		},
		{
			name: "CJK full stop needs no space",
			want: strings.Repeat("漢", 70) + "。",
			rest: strings.Repeat("字", 100),
		},
		{
			name: "paragraph break of blank line with spaces",
			want: "A paragraph whose blank line below holds spaces and a tab character.",
			rest: "\n  \t\nNext paragraph. It has sentences. Many of them. Until the end of window.",
		},
		{
			name: "hard cut keeps combining marks with their letter",
			want: "x" + strings.Repeat("e\u0301", 49),
			rest: strings.Repeat("e\u0301", 60),
		},
		{
			name: "hard cut keeps ZWJ emoji sequences whole",
			want: strings.Repeat("👩\u200d💻", 33),
			rest: strings.Repeat("👩\u200d💻", 10),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			n := utf8.RuneCountInString(tt.want)
			if n > small.Size {
				t.Fatalf("fixture: want has %d code points, over Size", n)
			}
			text := tt.want + tt.rest
			chunks := Split(text, nil, small, nil)
			mustCheck(t, text, small, nil, chunks)
			if len(chunks) < 2 {
				t.Fatalf("got %d chunks", len(chunks))
			}
			if chunks[0].Text != tt.want {
				t.Errorf("first chunk\n got %q\nwant %q", chunks[0].Text, tt.want)
			}
			if chunks[0].CharStart != 0 || chunks[0].CharEnd != n {
				t.Errorf("first chunk range [%d,%d), want [0,%d)", chunks[0].CharStart, chunks[0].CharEnd, n)
			}
		})
	}
}

func TestSplitOverlapSnapsToWordStart(t *testing.T) {
	// "w000 w001 ...": word k spans [5k, 5k+4).
	var sb strings.Builder
	for k := range 100 {
		if k > 0 {
			sb.WriteByte(' ')
		}
		sb.WriteString("w" + string(rune('0'+k/100)) + string(rune('0'+k/10%10)) + string(rune('0'+k%10)))
	}
	text := sb.String()
	chunks := Split(text, nil, small, nil)
	mustCheck(t, text, small, nil, chunks)
	// Last boundary within 100 is after word 19 (end 99); 99-20 = 79 snaps
	// forward to word 16 at 80.
	if got := chunks[0]; got.CharEnd != 99 {
		t.Fatalf("chunk 0 ends at %d, want 99", got.CharEnd)
	}
	if got := chunks[1]; got.CharStart != 80 || !strings.HasPrefix(got.Text, "w016 ") {
		t.Fatalf("chunk 1 starts at %d (%q), want 80", got.CharStart, got.Text[:10])
	}
	for i := 1; i < len(chunks); i++ {
		ov := chunks[i-1].CharEnd - chunks[i].CharStart
		if ov < 15 || ov > 20 {
			t.Errorf("chunk %d overlap %d, want 15..20 (whole words)", i, ov)
		}
	}
}

func TestSplitOverlapPrefersSentenceStart(t *testing.T) {
	s1 := "A first sentence that is long enough to take us to the sixty mark here."
	s2 := " Yes it is."
	text := s1 + s2 + " Then more words that go on and on past the end of the window for sure without stop"
	chunks := Split(text, nil, small, nil)
	mustCheck(t, text, small, nil, chunks)
	if chunks[0].Text != s1+s2 {
		t.Fatalf("chunk 0 = %q", chunks[0].Text)
	}
	// The overlap [end-20, end) holds word starts from "mark" on; "Yes"
	// starts a sentence within its first half.
	if want := len(s1) + 1; chunks[1].CharStart != want {
		t.Errorf("chunk 1 starts at %d (%q), want %d", chunks[1].CharStart, chunks[1].Text, want)
	}
}

func TestSplitLongWord(t *testing.T) {
	text := strings.Repeat("a", 100_000)
	cfg := Default
	tc := pieceCounter{} // a word over 100 letters is one [UNK], as in WordPiece
	chunks := Split(text, nil, cfg, tc)
	mustCheck(t, text, cfg, tc, chunks)
	if want := 125; len(chunks) != want { // starts 0, 800, ..., 99200
		t.Errorf("got %d chunks, want %d", len(chunks), want)
	}
	for i, c := range chunks[:len(chunks)-1] {
		if c.CharEnd-c.CharStart != 1000 {
			t.Fatalf("chunk %d has %d code points", i, c.CharEnd-c.CharStart)
		}
		if ov := c.CharEnd - chunks[i+1].CharStart; ov != 200 {
			t.Fatalf("chunk %d: overlap %d, want 200", i, ov)
		}
	}
}

func TestSplitEmptyAndSpace(t *testing.T) {
	for _, text := range []string{"", " ", "\n\n\n", " \t\n\u00a0\u3000\u2028 ", strings.Repeat("\n", 5000)} {
		if got := Split(text, []int{0}, Default, pieceCounter{}); got != nil {
			t.Errorf("Split(%q) = %d chunks, want none", text, len(got))
		}
	}
}

func TestSplitBlankLineRuns(t *testing.T) {
	text := "\n\n\nalpha" + strings.Repeat("\n", 5000) + "beta\n\n\ngamma\n\n\n"
	chunks := Split(text, nil, small, pieceCounter{})
	mustCheck(t, text, small, pieceCounter{}, chunks)
	var got []string
	for _, c := range chunks {
		got = append(got, c.Text)
	}
	want := []string{"alpha", "beta\n\n\ngamma"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %q, want %q", got, want)
	}
	if chunks[0].LineStart != 4 || chunks[1].LineStart != 5004 || chunks[1].LineEnd != 5007 {
		t.Errorf("lines: %+v", chunks)
	}
}

func TestSplitCJKFitsTokenWindow(t *testing.T) {
	// Each Han character is one piece, so 1000 of them are far over the
	// 254-piece budget; chunks must shrink and still end at full stops.
	var sb strings.Builder
	rng := rand.New(rand.NewPCG(1, 2))
	for sb.Len() < 9000 {
		for range 10 + rng.IntN(30) {
			sb.WriteRune(rune(0x4E00 + rng.IntN(0x5000)))
		}
		sb.WriteString("。")
	}
	text := sb.String()
	tc := pieceCounter{}
	chunks := Split(text, nil, Default, tc)
	mustCheck(t, text, Default, tc, chunks)
	if n := utf8.RuneCountInString(text); len(chunks) < n/254 {
		t.Errorf("%d chunks for %d code points", len(chunks), n)
	}
	for i, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.Text, "。") {
			t.Errorf("chunk %d does not end at a full stop: …%q", i, c.Text[len(c.Text)-9:])
		}
		if n := c.CharEnd - c.CharStart; n < 254*cutMinPercent/100 {
			t.Errorf("chunk %d is only %d code points", i, n)
		}
	}
}

func TestSplitCode(t *testing.T) {
	// Code is dense in pieces: punctuation counts one each.
	var sb strings.Builder
	for i := range 200 {
		sb.WriteString("func f")
		sb.WriteString(strings.Repeat("x", i%7))
		sb.WriteString("(a, b int) (int, error) {\n\tif a > b { return a-b, nil }\n\treturn m[a][b], fmt.Errorf(\"%d:%d\", a, b)\n}\n\n")
	}
	text := sb.String()
	tc := pieceCounter{}
	chunks := Split(text, nil, Default, tc)
	mustCheck(t, text, Default, tc, chunks)
	for i, c := range chunks[:len(chunks)-1] {
		if !strings.HasSuffix(c.Text, "}") {
			t.Errorf("chunk %d does not end at a blank line after a function: …%q", i, c.Text[len(c.Text)-20:])
		}
	}
}

func TestSplitMultiByteOffsets(t *testing.T) {
	text := strings.Repeat("Grüße 😀 naïve cafe\u0301 👩\u200d👩\u200d👧 ok. ", 300)
	tc := pieceCounter{}
	chunks := Split(text, nil, Config{Size: 97, Overlap: 31, MaxTokens: 40}, tc)
	mustCheck(t, text, Config{Size: 97, Overlap: 31, MaxTokens: 40}, tc, chunks)
	runes := []rune(text)
	for i, c := range chunks {
		if c.Text != string(runes[c.CharStart:c.CharEnd]) {
			t.Fatalf("chunk %d text mismatch", i)
		}
		if extends(runes[c.CharStart]) || (c.CharEnd < len(runes) && extends(runes[c.CharEnd])) {
			t.Errorf("chunk %d splits a character: %q", i, c.Text)
		}
	}
}

func TestSplitPages(t *testing.T) {
	text := englishText(7, 3000)
	starts := []int{0, 1000, 1500, 2500}
	chunks := Split(text, starts, small, nil)
	mustCheck(t, text, small, nil, chunks)
	for _, c := range chunks {
		p := c.Page
		if p < 1 || p > len(starts) || starts[p-1] > c.CharStart || (p < len(starts) && starts[p] <= c.CharStart) {
			t.Errorf("chunk at %d: page %d for starts %v", c.CharStart, p, starts)
		}
	}
	if chunks[0].Page != 1 || chunks[len(chunks)-1].Page != 4 {
		t.Errorf("first/last page %d/%d", chunks[0].Page, chunks[len(chunks)-1].Page)
	}
	for _, c := range Split(text, nil, small, nil) {
		if c.Page != 0 {
			t.Fatalf("page %d without page starts", c.Page)
		}
	}
}

func TestSplitLines(t *testing.T) {
	text := "line one\nline two\nline three\n\nfour\nfive six seven"
	chunks := Split(text, nil, Config{Size: 20, Overlap: 0}, nil)
	mustCheck(t, text, Config{Size: 20, Overlap: 0}, nil, chunks)
	type span struct {
		text       string
		start, end int
	}
	var got []span
	for _, c := range chunks {
		got = append(got, span{c.Text, c.LineStart, c.LineEnd})
	}
	want := []span{{"line one\nline two", 1, 2}, {"line three", 3, 3}, {"four\nfive six seven", 5, 6}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %+v\nwant %+v", got, want)
	}
}

func TestSplitDeterministic(t *testing.T) {
	text := englishText(3, 200_000)
	a := Split(text, nil, Default, pieceCounter{})
	b := Split(text, nil, Default, pieceCounter{})
	mustCheck(t, text, Default, pieceCounter{}, a)
	if !reflect.DeepEqual(a, b) {
		t.Fatal("two runs differ")
	}
	// English prose stays near the target size.
	total := 0
	for _, c := range a {
		total += c.CharEnd - c.CharStart
	}
	if avg := total / len(a); avg < 600 {
		t.Errorf("average chunk %d code points", avg)
	}
}

func TestSplitConfigEdges(t *testing.T) {
	text := englishText(5, 5000)
	for _, cfg := range []Config{
		{Size: 1, Overlap: 0, MaxTokens: 256},
		{Size: 2, Overlap: 5, MaxTokens: 3},
		{Size: 50, Overlap: 49, MaxTokens: 1},
		{Size: 0, Overlap: -3, MaxTokens: 0},
		{Size: 1 << 62, Overlap: 1 << 62, MaxTokens: 1 << 62},
	} {
		chunks := Split(text, nil, cfg, pieceCounter{})
		if msg := checkChunks(text, cfg, pieceCounter{}, chunks); msg != "" {
			t.Errorf("%+v: %s", cfg, msg)
		}
	}
}

// englishText is seeded prose with paragraphs, abbreviations, numbers and
// some markdown, about n bytes long.
func englishText(seed uint64, n int) string {
	rng := rand.New(rand.NewPCG(seed, 42))
	words := strings.Fields(`the of and to in a is that for it as was with be by on not he i this are or his
		from at which but have an they you were her she there been one all we their has would when
		what if more no out so said up its about into than them can only other new some time could
		these two may then do first any my now such like our over man me even most made after also
		did many before must through back years where much your way well down should because each
		just those people how too little state good very make world still own see men work long get
		here between both life being under never day same another know while last might us great old
		year off come since against go came right used take three index vector embedding retrieval
		semantic search document paragraph chunk tokenizer model query result score pipeline stage
		e.g. i.e. Dr. Mr. U.S. approx. 3.14 2024 42 1,000 v1.2.3 https://example.com/path?q=1`)
	var sb strings.Builder
	for sb.Len() < n {
		if rng.IntN(10) == 0 {
			sb.WriteString("## ")
		}
		for range 2 + rng.IntN(6) {
			for w := range 5 + rng.IntN(20) {
				word := words[rng.IntN(len(words))]
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				} else {
					sb.WriteByte(' ')
				}
				sb.WriteString(word)
				if rng.IntN(12) == 0 {
					sb.WriteByte(',')
				}
			}
			sb.WriteString([]string{".", ".", ".", "?", "!"}[rng.IntN(5)])
			if rng.IntN(8) == 0 {
				sb.WriteByte('\n')
			} else {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString("\n\n")
	}
	return sb.String()
}
