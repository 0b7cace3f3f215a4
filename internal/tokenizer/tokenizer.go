// Package tokenizer is the BERT WordPiece tokenizer of all-MiniLM-L6-v2 and
// the bge-small models, reproducing Hugging Face `tokenizers` for their
// tokenizer.json: BertNormalizer (clean text, isolate CJK ideographs, and for
// uncased vocabularies NFD, strip accents and lowercase), BertPreTokenizer,
// greedy longest-match WordPiece, and [CLS] ... [SEP] around the pieces,
// truncated to the model's length.
package tokenizer

// tables.go holds Unicode tables derived from the reference itself.
//go:generate go run ./internal/gentables

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"slices"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// MaxSeqLen is sentence-transformers' max_seq_length for all-MiniLM-L6-v2,
// counting [CLS] and [SEP]. (tokenizer.json says 128; the model is used at 256.)
const MaxSeqLen = 256

// Tokenizer turns text into vocabulary ids. It is read-only after Load and
// safe for concurrent use.
type Tokenizer struct {
	vocab    map[string]int32 // word-initial pieces
	cont     map[string]int32 // continuation pieces, keyed without "##"
	added    []addedToken     // matched in the raw text, before normalisation
	first    [256]bool        // first bytes of added tokens, to skip fast
	unk      int32
	cls, sep int32
	maxChars int // longer words become a single unk
	maxPiece int // longest piece in bytes, bounds the greedy search
	size     int
	// lowercase: an uncased vocabulary (NFD, accents stripped, lower
	// case); else the text keeps its case and accents.
	lowercase bool
	pool      sync.Pool // *state
}

type addedToken struct {
	content string
	id      int32
}

type tokenizerJSON struct {
	AddedTokens []struct {
		ID         int32  `json:"id"`
		Content    string `json:"content"`
		Normalized bool   `json:"normalized"`
		SingleWord bool   `json:"single_word"`
		LStrip     bool   `json:"lstrip"`
		RStrip     bool   `json:"rstrip"`
	} `json:"added_tokens"`
	Normalizer struct {
		Type         string `json:"type"`
		CleanText    bool   `json:"clean_text"`
		ChineseChars bool   `json:"handle_chinese_chars"`
		StripAccents *bool  `json:"strip_accents"`
		Lowercase    bool   `json:"lowercase"`
	} `json:"normalizer"`
	PreTokenizer struct {
		Type string `json:"type"`
	} `json:"pre_tokenizer"`
	Model struct {
		Type     string           `json:"type"`
		UnkToken string           `json:"unk_token"`
		Prefix   string           `json:"continuing_subword_prefix"`
		MaxChars int              `json:"max_input_chars_per_word"`
		Vocab    map[string]int32 `json:"vocab"`
	} `json:"model"`
}

// Supported says which tokenizer.json files Load reads, for error messages.
const Supported = "BERT-style WordPiece: normalizer BertNormalizer (clean_text and handle_chinese_chars on; " +
	"lowercase with accents stripped, or neither), pre_tokenizer BertPreTokenizer, model WordPiece with [UNK], [CLS] and [SEP]"

// Load reads a Hugging Face tokenizer.json. Only BERT-style WordPiece
// configurations (Supported) are implemented; anything else is refused
// rather than tokenised differently.
func Load(path string) (*Tokenizer, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var j tokenizerJSON
	if err := json.Unmarshal(raw, &j); err != nil {
		return nil, fmt.Errorf("tokenizer: parse %s: %w", path, err)
	}
	n := j.Normalizer
	strip := n.Lowercase
	if n.StripAccents != nil {
		strip = *n.StripAccents
	}
	var why string
	switch {
	// The model first: a SentencePiece (Unigram) or BPE vocabulary is the
	// usual reason, and the most useful thing to name.
	case j.Model.Type != "WordPiece":
		why = fmt.Sprintf("its model is %q", j.Model.Type)
		if j.Model.Type == "Unigram" {
			why += " (SentencePiece)"
		}
	case j.Model.Prefix == "" || len(j.Model.Vocab) == 0:
		why = "its WordPiece vocabulary is empty or has no continuing_subword_prefix"
	case n.Type != "BertNormalizer":
		why = fmt.Sprintf("its normalizer is %q", n.Type)
	case !n.CleanText || !n.ChineseChars || n.Lowercase != strip:
		why = fmt.Sprintf("its BertNormalizer has clean_text=%v handle_chinese_chars=%v lowercase=%v strip_accents=%v", n.CleanText, n.ChineseChars, n.Lowercase, strip)
	case j.PreTokenizer.Type != "BertPreTokenizer":
		why = fmt.Sprintf("its pre_tokenizer is %q", j.PreTokenizer.Type)
	}
	if why != "" {
		return nil, fmt.Errorf("tokenizer: %s is not supported: %s; supported: %s", path, why, Supported)
	}
	t := &Tokenizer{
		vocab:     make(map[string]int32, len(j.Model.Vocab)),
		cont:      make(map[string]int32),
		maxChars:  j.Model.MaxChars,
		size:      len(j.Model.Vocab),
		lowercase: n.Lowercase,
	}
	for piece, id := range j.Model.Vocab {
		if rest, ok := strings.CutPrefix(piece, j.Model.Prefix); ok {
			t.cont[rest] = id
			t.maxPiece = max(t.maxPiece, len(rest))
		} else {
			t.vocab[piece] = id
			t.maxPiece = max(t.maxPiece, len(piece))
		}
	}
	var hasUnk, hasCLS, hasSEP bool
	t.unk, hasUnk = j.Model.Vocab[j.Model.UnkToken]
	t.cls, hasCLS = j.Model.Vocab["[CLS]"]
	t.sep, hasSEP = j.Model.Vocab["[SEP]"]
	if !hasUnk || !hasCLS || !hasSEP {
		return nil, errors.New("tokenizer: vocabulary lacks [UNK], [CLS] or [SEP]")
	}
	for _, a := range j.AddedTokens {
		if a.Normalized || a.SingleWord || a.LStrip || a.RStrip || a.Content == "" {
			return nil, fmt.Errorf("tokenizer: unsupported added token %q", a.Content)
		}
		t.added = append(t.added, addedToken{a.Content, a.ID})
		t.first[a.Content[0]] = true
	}
	t.pool.New = func() any { return new(state) }
	return t, nil
}

// Lowercase reports an uncased vocabulary: text is lower-cased and its
// accents stripped before lookup.
func (t *Tokenizer) Lowercase() bool { return t.lowercase }

// VocabSize is the number of ids the model knows.
func (t *Tokenizer) VocabSize() int { return t.size }

// Encode appends [CLS], the word pieces of text and [SEP] to dst and returns
// the extended slice; dst is owned by the caller and may be reused across
// calls. The pieces are truncated so the appended ids number at most maxLen
// (maxLen <= 0 means MaxSeqLen; values below 2 are raised to 2).
func (t *Tokenizer) Encode(dst []int32, text string, maxLen int) []int32 {
	maxLen = cmp.Or(max(maxLen, 0), MaxSeqLen)
	maxLen = max(maxLen, 2)
	s := t.pool.Get().(*state)
	s.reset(false)
	s.counting = false
	s.ids = append(dst, t.cls)
	s.limit = len(dst) + maxLen - 1
	t.run(text, s)
	out := append(s.ids[:min(len(s.ids), s.limit)], t.sep)
	s.ids = nil // dst belongs to the caller
	t.pool.Put(s)
	return out
}

// Count is the number of word pieces in text, without [CLS]/[SEP] and
// without truncation.
func (t *Tokenizer) Count(text string) int {
	s := t.pool.Get().(*state)
	s.reset(false)
	t.run(text, s)
	n := s.count
	t.pool.Put(s)
	return n
}

// FitPrefix returns the largest n such that text[:n] ends where a pre-token
// (a word or punctuation mark) ends, or n == len(text), and
// Count(text[:n]) <= maxPieces. It returns 0 if not even the first pre-token
// fits.
func (t *Tokenizer) FitPrefix(text string, maxPieces int) int {
	s := t.pool.Get().(*state)
	s.reset(true)
	t.run(text, s)
	best := 0
	if s.count <= maxPieces {
		best = len(text)
	} else {
		total := 0
		for i, sp := range s.spans {
			total += sp.pieces
			if total > maxPieces {
				break
			}
			// A cut inside one source character that feeds two pre-tokens
			// would take both; only cut where the next one starts later.
			if i+1 == len(s.spans) || s.spans[i+1].start >= sp.end {
				best = sp.end
			}
		}
	}
	t.pool.Put(s)
	return best
}

// span is one pre-token: its source bytes and the pieces it became.
type span struct{ start, end, pieces int }

// entry is a decomposed character waiting for canonical reordering.
type entry struct {
	r          rune
	ccc        uint8
	strip      bool
	start, end int
}

// state is the per-call scratch space, pooled to avoid allocation.
type state struct {
	ids      []int32 // Encode's output, or scratch for one word's pieces
	scratch  []int32 // kept across calls for Count and FitPrefix
	limit    int     // stop once len(ids) reaches it; 0 means never
	count    int     // pieces seen
	word     []byte  // normalised current word
	runes    int     // characters in word
	wStart   int     // source offsets of the current word
	wEnd     int
	pending  []entry // trailing run of combining marks
	record   bool
	spans    []span
	counting bool              // keep only counts, not ids
	trace    func(word []byte) // tests: sees every normalised pre-token
}

func (s *state) reset(record bool) {
	s.limit, s.count = 0, 0
	s.word, s.runes = s.word[:0], 0
	s.wStart, s.wEnd = 0, 0
	s.pending = s.pending[:0]
	s.record = record
	s.spans = s.spans[:0]
	s.counting = true
	s.trace = nil
	if s.ids != nil {
		s.scratch = s.ids[:0]
	}
	s.ids = s.scratch[:0]
}

func (s *state) full() bool { return s.limit > 0 && len(s.ids) >= s.limit }

// run tokenises text into s, splitting out added tokens first as the
// reference does (they match case-sensitively in the raw text).
func (t *Tokenizer) run(text string, s *state) {
	seg := 0
	for i := 0; i < len(text); i++ {
		if !t.first[text[i]] {
			continue
		}
		best := -1
		for k, a := range t.added {
			if strings.HasPrefix(text[i:], a.content) && (best < 0 || len(a.content) > len(t.added[best].content)) {
				best = k
			}
		}
		if best < 0 {
			continue
		}
		t.segment(text, seg, i, s)
		if s.full() {
			return
		}
		a := t.added[best]
		s.wStart, s.wEnd = i, i+len(a.content)
		t.emit(s, a.id)
		i += len(a.content) - 1
		seg = i + 1
	}
	t.segment(text, seg, len(text), s)
}

// segment normalises and pre-tokenises text[from:to], feeding each word to
// WordPiece as soon as it ends.
func (t *Tokenizer) segment(text string, from, to int, s *state) {
	for i := from; i < to && !s.full(); {
		c := text[i]
		if c < utf8.RuneSelf {
			switch {
			case c == ' ' || c == '\t' || c == '\n' || c == '\r':
				t.flush(s)
			case c < 0x20 || c == 0x7f:
				// control character: deleted
			case isASCIIPunct(c):
				t.flush(s)
				t.single(s, rune(c), i, i+1)
			default:
				if len(s.pending) > 0 {
					t.settle(s)
				}
				if 'A' <= c && c <= 'Z' && t.lowercase {
					c += 'a' - 'A'
				}
				t.addRune(s, rune(c), i, i+1)
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(text[i:])
		t.nonASCII(text[i:i+n], r, i, i+n, s)
		i += n
	}
	t.flush(s)
}

func (t *Tokenizer) nonASCII(src string, r rune, start, end int, s *state) {
	if !t.lowercase {
		t.cased(r, start, end, s)
		return
	}
	switch {
	case r == utf8.RuneError && end-start == 1:
		// Invalid UTF-8 never reaches the reference (Python strings); read
		// it as U+FFFD, which the normaliser deletes.
		return
	case unicode.Is(dropTable, r) && !unicode.In(r, unicode.Mn, unicode.Mc, unicode.Me):
		return // deleted before NFD, so it separates no marks
	case unicode.IsSpace(r):
		t.flush(s)
		return
	case isCJK(r):
		t.flush(s)
		var buf [4]rune
		d := decompose(src, r, buf[:0])
		t.single(s, d[0], start, end)
		return
	}
	var buf [18]rune // the longest canonical decomposition is 4 runes
	for _, d := range decompose(src, r, buf[:0]) {
		if unicode.Is(dropTable, d) {
			var ccc uint8
			if d >= utf8.RuneSelf {
				var b [4]byte
				ccc = norm.NFD.Properties(b[:utf8.EncodeRune(b[:], d)]).CCC()
			}
			t.mark(s, entry{d, ccc, true, start, end})
			continue
		}
		d = lower(d)
		switch {
		case isPunct(d):
			t.flush(s)
			t.single(s, d, start, end)
		case unicode.IsSpace(d):
			t.flush(s)
		default:
			t.mark(s, entry{d, keptMarkCCC[d], false, start, end})
		}
	}
}

// cased handles a non-ASCII character for a cased vocabulary: no
// decomposition, so every character stays whole.
func (t *Tokenizer) cased(r rune, start, end int, s *state) {
	switch {
	case r == utf8.RuneError && end-start == 1, unicode.Is(cleanTable, r):
		return
	case unicode.IsSpace(r):
		t.flush(s)
	case isCJK(r) || isPunct(r):
		t.flush(s)
		t.single(s, r, start, end)
	default:
		t.addRune(s, r, start, end)
	}
}

// mark queues a decomposed character; a class-0 character ends the run of
// marks before it, which can then be reordered and written out.
func (t *Tokenizer) mark(s *state, e entry) {
	if e.ccc != 0 {
		s.pending = append(s.pending, e)
		return
	}
	if len(s.pending) > 0 {
		t.settle(s)
	}
	if !e.strip {
		t.addRune(s, e.r, e.start, e.end)
	}
}

// settle applies canonical ordering to the pending marks (a stable sort by
// class), drops the stripped ones and appends the rest to the word.
func (t *Tokenizer) settle(s *state) {
	p := s.pending
	slices.SortStableFunc(p, func(a, b entry) int { return cmp.Compare(a.ccc, b.ccc) })
	for _, e := range p {
		if !e.strip {
			t.addRune(s, e.r, e.start, e.end)
		}
	}
	s.pending = p[:0]
}

func (t *Tokenizer) addRune(s *state, r rune, start, end int) {
	if len(s.word) == 0 {
		s.wStart, s.wEnd = start, end
	}
	s.word = utf8.AppendRune(s.word, r)
	s.runes++
	s.wEnd = max(s.wEnd, end)
}

// single emits a one-character pre-token (punctuation or an ideograph).
func (t *Tokenizer) single(s *state, r rune, start, end int) {
	t.addRune(s, r, start, end)
	t.flush(s)
}

// flush ends the current word and turns it into pieces.
func (t *Tokenizer) flush(s *state) {
	if len(s.pending) > 0 {
		t.settle(s)
	}
	if len(s.word) == 0 {
		return
	}
	w := s.word
	if s.trace != nil {
		s.trace(w)
	}
	mark := len(s.ids)
	if s.runes > t.maxChars {
		s.ids = append(s.ids, t.unk)
	} else {
		for start := 0; start < len(w); {
			end := min(len(w), start+t.maxPiece)
			id := int32(-1)
			for ; end > start; end-- {
				if end < len(w) && !utf8.RuneStart(w[end]) {
					continue
				}
				var ok bool
				if start == 0 {
					id, ok = t.vocab[string(w[start:end])]
				} else {
					id, ok = t.cont[string(w[start:end])]
				}
				if ok {
					break
				}
			}
			if end == start {
				s.ids = append(s.ids[:mark], t.unk)
				break
			}
			s.ids = append(s.ids, id)
			start = end
		}
	}
	n := len(s.ids) - mark
	if s.counting {
		s.ids = s.ids[:mark]
	}
	s.count += n
	if s.record {
		s.spans = append(s.spans, span{s.wStart, s.wEnd, n})
	}
	s.word, s.runes, s.wEnd = s.word[:0], 0, 0
}

// emit records a pre-token that is already an id (an added token).
func (t *Tokenizer) emit(s *state, id int32) {
	if !s.counting {
		s.ids = append(s.ids, id)
	}
	s.count++
	if s.record {
		s.spans = append(s.spans, span{s.wStart, s.wEnd, 1})
	}
}

// decompose appends the canonical decomposition of r (the rune at the start
// of src) to dst.
func decompose(src string, r rune, dst []rune) []rune {
	if 0xAC00 <= r && r <= 0xD7A3 { // Hangul syllables decompose by formula
		i := r - 0xAC00
		dst = append(dst, 0x1100+i/588, 0x1161+i%588/28)
		if i%28 != 0 {
			dst = append(dst, 0x11A7+i%28)
		}
		return dst
	}
	d := norm.NFD.PropertiesString(src).Decomposition()
	if d == nil || keepWhole[r] {
		return append(dst, r)
	}
	for _, x := range string(d) {
		dst = append(dst, x)
	}
	return dst
}

func isASCIIPunct(c byte) bool {
	return 33 <= c && c <= 47 || 58 <= c && c <= 64 || 91 <= c && c <= 96 || 123 <= c && c <= 126
}

func isPunct(r rune) bool {
	if r < utf8.RuneSelf {
		return isASCIIPunct(byte(r))
	}
	return unicode.Is(punctTable, r)
}

// isCJK reports the ideograph blocks BERT surrounds with spaces.
func isCJK(r rune) bool {
	return 0x4E00 <= r && r <= 0x9FFF || 0x3400 <= r && r <= 0x4DBF ||
		0x20000 <= r && r <= 0x2A6DF || 0x2A700 <= r && r <= 0x2B73F ||
		0x2B740 <= r && r <= 0x2B81F || 0x2B920 <= r && r <= 0x2CEAF ||
		0xF900 <= r && r <= 0xFAFF || 0x2F800 <= r && r <= 0x2FA1F
}

func lower(r rune) rune {
	if l, ok := lowerExtra[r]; ok {
		return l
	}
	return unicode.ToLower(r)
}
