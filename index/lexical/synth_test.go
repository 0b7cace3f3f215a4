package lexical

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
)

// synth makes seeded text that looks like a folder of technical documents to
// an inverted index: a Zipf-distributed vocabulary of made-up words, English
// stop words between them, and now and then an identifier, a flag or a
// number. Chunks are about 1000 characters, like the chunker's.
type synth struct {
	rng   *rand.Rand
	zipf  *rand.Zipf
	vocab []string
	stops []string
}

func newSynth(seed uint64) *synth {
	rng := rand.New(rand.NewPCG(seed, 1))
	syll := []string{"ka", "to", "ri", "men", "sol", "var", "en", "th", "ex", "pro", "la", "ion",
		"con", "der", "us", "al", "ver", "tic", "par", "ma", "ne", "st", "or", "ing", "ly", "ble"}
	s := &synth{rng: rng, zipf: rand.NewZipf(rng, 1.1, 2, 59999)}
	seen := map[string]bool{}
	for len(s.vocab) < 60000 {
		var b strings.Builder
		for range 1 + rng.IntN(4) {
			b.WriteString(syll[rng.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			s.vocab = append(s.vocab, w)
		}
	}
	for w := range stopWords {
		s.stops = append(s.stops, w)
	}
	slices.Sort(s.stops)
	return s
}

func (s *synth) word() string { return s.vocab[s.zipf.Uint64()] }

// text returns about n characters.
func (s *synth) text(n int) string {
	var b strings.Builder
	for b.Len() < n {
		if b.Len() > 0 {
			b.WriteByte(' ')
		}
		switch p := s.rng.IntN(1000); {
		case p < 380:
			b.WriteString(s.stops[s.rng.IntN(len(s.stops))])
		case p < 388:
			fmt.Fprintf(&b, "%c%c-%04d-%c", 'A'+s.rng.IntN(26), 'A'+s.rng.IntN(26), s.rng.IntN(10000), 'A'+s.rng.IntN(26))
		case p < 393:
			fmt.Fprintf(&b, "--%s-%s", s.word(), s.word())
		case p < 398:
			fmt.Fprintf(&b, "%s_%s", s.word(), s.word())
		case p < 420:
			fmt.Fprintf(&b, "%d", s.rng.IntN(5000))
		case p < 440:
			b.WriteString(s.word() + ".")
		default:
			b.WriteString(s.word())
		}
	}
	return b.String()
}

func (s *synth) doc(id int64) Doc {
	return Doc{ID: id, Name: s.word() + "-" + s.word(), Heading: s.text(30), Body: s.text(1000)}
}

// query returns 2 to 5 words drawn like the text's, less the ten most
// common (which act as stop words).
func (s *synth) query() string {
	words := make([]string, 2+s.rng.IntN(4))
	for i := range words {
		r := s.zipf.Uint64()
		for r < 10 {
			r = s.zipf.Uint64()
		}
		words[i] = s.vocab[r]
	}
	return strings.Join(words, " ")
}
