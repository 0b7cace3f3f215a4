// Package prose makes seeded text for tests: sentences in paragraphs over a
// small vocabulary with accents, CJK and identifiers, so that tests of
// chunking, passages and search share one corpus generator.
package prose

import (
	"math/rand/v2"
	"strings"
)

// Random is seeded prose: sentences in paragraphs, whitespace runs of one
// space, one newline or one blank line (what joined chunks can restore).
func Random(seed uint64, paras int) string {
	rng := rand.New(rand.NewPCG(seed, 1))
	words := strings.Fields("the index keeps every chunk of text with its offsets and line numbers so a client reads whole passages " +
		"émigré naïve 東京 データ QX-7731-B snake_case pkg.Func")
	var b strings.Builder
	for p := range paras {
		if p > 0 {
			b.WriteString("\n\n")
		}
		for s := range 3 + rng.IntN(8) {
			if s > 0 {
				b.WriteString([]string{" ", " ", "\n"}[rng.IntN(3)])
			}
			n := 4 + rng.IntN(14)
			for w := range n {
				if w > 0 {
					b.WriteByte(' ')
				}
				b.WriteString(words[rng.IntN(len(words))])
			}
			b.WriteByte('.')
		}
	}
	return b.String()
}
