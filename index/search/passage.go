package search

import (
	"cmp"
	"fmt"
	"slices"
	"sort"
	"strings"
	"unicode"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// candidate is one ranked chunk before chunks are grouped into passages.
type candidate struct {
	rec   schema.Record
	score float64 // in [0, 1], higher is better
	why   Explanation
}

// passage is a run of chunks of one file whose text overlaps or touches.
type passage struct {
	best  candidate       // highest-scoring member: the passage's rank and score
	recs  []schema.Record // members
	start int             // union of the members' char ranges
	end   int
	order int  // when it started: passages rank by their best member
	gone  bool // bridged into a better passage
}

func (p *passage) overlaps(r schema.Record) bool {
	return r.Path == p.best.rec.Path && r.CharStart <= p.end && p.start <= r.CharEnd
}

func (p *passage) absorb(recs ...schema.Record) {
	for _, r := range recs {
		p.recs = append(p.recs, r)
		p.start, p.end = min(p.start, r.CharStart), max(p.end, r.CharEnd)
	}
}

// maxPassageChunks bounds a merged passage (about 3,400 characters), so a
// document whose every chunk matches does not come back whole as one
// passage; its neighbours are one resources/read away.
const maxPassageChunks = 4

// results are the passages as returned, src reading their chunks' whole
// records (nil: the passages hold them), each Explain set when explain is.
func results(ps []*passage, explain bool, src *chunks) ([]Result, error) {
	out := make([]Result, 0, len(ps))
	for _, p := range ps {
		if err := src.whole(p.recs); err != nil {
			return nil, err
		}
		r := p.result()
		if explain {
			why := p.best.why
			why.Fused = p.best.score
			r.Explain = &why
		}
		out = append(out, r)
	}
	return out, nil
}

// group walks the candidates best first and groups them into passages (see
// passages), in the order they started. src reads the heads of the
// candidates it groups, which hold only their chunk's id; a nil src means
// the candidates hold whole records.
func group(cands []candidate, threshold float64, src *chunks) ([]*passage, error) {
	slices.SortStableFunc(cands, func(a, b candidate) int {
		return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(a.rec.ID, b.rec.ID))
	})
	if err := src.readHeads(cands, threshold); err != nil {
		return nil, err
	}
	var ps []*passage                 // in the order they started, best first
	byPath := map[string][]*passage{} // the same passages by file
	seen := map[int64]bool{}
	for _, c := range cands {
		if c.score < threshold {
			break
		}
		if seen[c.rec.ID] {
			continue
		}
		seen[c.rec.ID] = true
		src.head(&c.rec)
		var hit []*passage // passages c overlaps, best first
		n := 1
		for _, p := range byPath[c.rec.Path] {
			if p.overlaps(c.rec) {
				hit = append(hit, p)
				n += len(p.recs)
			}
		}
		if len(hit) > 0 {
			if n > maxPassageChunks {
				continue // its text is mostly in a passage already: skipped, not repeated
			}
			// c joins the best passage it overlaps, bridging any others into it.
			slices.SortFunc(hit, func(a, b *passage) int { return cmp.Compare(a.order, b.order) })
			into := hit[0]
			for _, p := range hit[1:] {
				into.absorb(p.recs...)
				p.gone = true
			}
			into.absorb(c.rec)
			if len(hit) > 1 {
				byPath[c.rec.Path] = slices.DeleteFunc(byPath[c.rec.Path], func(p *passage) bool { return p.gone })
			}
			continue
		}
		p := &passage{best: c, recs: []schema.Record{c.rec}, start: c.rec.CharStart, end: c.rec.CharEnd, order: len(ps)}
		ps = append(ps, p)
		byPath[c.rec.Path] = append(byPath[c.rec.Path], p)
	}
	return slices.DeleteFunc(ps, func(p *passage) bool { return p.gone }), nil
}

// chunks reads the records passages need from a snapshot: the head of
// each chunk grouped (kept across widenings of the pool) and the whole
// record, text included, of the chunks of the passages returned.
type chunks struct {
	snap  index.View
	heads map[int64]schema.Record
}

// readHeads reads the heads of the candidates down to the first below
// threshold (cands best first) in one call, but for those read already.
func (c *chunks) readHeads(cands []candidate, threshold float64) error {
	if c == nil {
		return nil
	}
	var ids []int64
	for _, cand := range cands {
		if cand.score < threshold {
			break
		}
		if _, ok := c.heads[cand.rec.ID]; !ok {
			ids = append(ids, cand.rec.ID)
		}
	}
	heads, err := c.snap.Heads(ids)
	if err != nil {
		return err
	}
	for i, id := range ids {
		c.heads[id] = heads[i]
	}
	return nil
}

// head replaces rec, which holds only its id, by the chunk's head (read by
// readHeads).
func (c *chunks) head(rec *schema.Record) {
	if c != nil {
		*rec = c.heads[rec.ID]
	}
}

// whole replaces each head in recs by the chunk's whole record.
func (c *chunks) whole(recs []schema.Record) error {
	if c == nil {
		return nil
	}
	for i := range recs {
		rec, err := c.snap.Record(recs[i].ID)
		if err != nil {
			return err
		}
		recs[i] = rec
	}
	return nil
}

func (p *passage) result() Result {
	slices.SortFunc(p.recs, func(a, b schema.Record) int { return cmp.Compare(a.CharStart, b.CharStart) })
	first, last, best := p.recs[0], p.recs[0], p.best.rec
	chunks := make([]int, 0, len(p.recs))
	for _, r := range p.recs {
		if r.CharEnd >= last.CharEnd {
			last = r
		}
		chunks = append(chunks, r.ChunkIndex)
	}
	slices.Sort(chunks)
	raw := joinChunks(p.recs, nil)
	return Result{
		raw: raw, focus: segment{best.CharStart - p.start, best.CharEnd - p.start},
		Path: best.Path, Score: p.best.score, Snippet: collapseSpace(raw),
		ChunkIndex: best.ChunkIndex, Chunks: chunks, CharStart: p.start, CharEnd: p.end,
		Mtime: best.Mtime, Ext: best.Ext, Page: first.Page, LineStart: first.LineStart, LineEnd: last.LineEnd,
	}
}

// joinChunks returns the text recs cover (recs sorted by CharStart, one
// file), each overlap written once. Chunk text is exactly the document's
// code points CharStart..CharEnd; between chunks that do not touch only
// whitespace was left out, and the line numbers say how many newlines, so
// the gap is written as those newlines (or one space).
//
// pageStarts (code-point offsets where pages begin; nil for none) put a
// "--- page N ---" line where page N begins, and one for the page the text
// starts on.
func joinChunks(recs []schema.Record, pageStarts []int) string {
	w := textWriter{pages: pageStarts}
	end, lineEnd := -1, 0
	for _, r := range recs {
		if end >= 0 && r.CharEnd <= end {
			continue // inside what is written already
		}
		text := []rune(r.Text)
		switch {
		case end < 0:
			w.start(r.CharStart)
			w.write(r.CharStart, text)
		case r.CharStart > end:
			if n := r.LineStart - lineEnd; n > 0 {
				w.b.WriteString(strings.Repeat("\n", min(n, 2)))
			} else {
				w.b.WriteByte(' ')
			}
			w.write(r.CharStart, text)
		default:
			skip := min(end-r.CharStart, len(text)) // min: a record breaking the invariant
			w.write(r.CharStart+skip, text[skip:])
		}
		end, lineEnd = r.CharEnd, r.LineEnd
	}
	return w.b.String()
}

// textWriter writes document text, putting page marks where pages begin.
type textWriter struct {
	b         strings.Builder
	pages     []int
	next      int  // index into pages of the next mark
	afterMark bool // skip whitespace right after a mark
}

// start skips the marks of pages that end before offset at.
func (w *textWriter) start(at int) {
	w.next = max(0, sort.SearchInts(w.pages, at+1)-1)
}

// write writes text whose first code point is at offset from.
func (w *textWriter) write(from int, text []rune) {
	for len(text) > 0 {
		for w.next < len(w.pages) && w.pages[w.next] <= from {
			w.mark(w.next + 1)
			w.next++
		}
		cut := len(text)
		if w.next < len(w.pages) && w.pages[w.next] < from+cut {
			cut = w.pages[w.next] - from
		}
		part := string(text[:cut])
		if w.afterMark {
			part = strings.TrimLeftFunc(part, unicode.IsSpace)
			w.afterMark = part == ""
		}
		w.b.WriteString(part)
		from, text = from+cut, text[cut:]
	}
}

func (w *textWriter) mark(page int) {
	s := w.b.String()
	switch {
	case strings.TrimSpace(s) == "":
		w.b.Reset()
	case strings.HasSuffix(s, "\n\n"):
	case strings.HasSuffix(s, "\n"):
		w.b.WriteByte('\n')
	default:
		w.b.WriteString("\n\n")
	}
	fmt.Fprintf(&w.b, "--- page %d ---\n\n", page)
	w.afterMark = true
}

// pageStartsOf returns f's page starts, or for an index written before they
// were kept, the start of the first chunk on each page (a page's first lines
// may then sit above its mark).
func pageStartsOf(f *schema.FileEntry, recs []schema.Record) []int {
	if len(f.PageStarts) > 0 {
		return f.PageStarts
	}
	var out []int
	for _, r := range recs {
		for r.Page > len(out) {
			out = append(out, r.CharStart)
		}
	}
	return out
}

// collapseSpace turns each run of spaces and tabs into one space, trims
// every line, and keeps at most one blank line in a row: lists, headings and
// paragraphs stay as written, without the padding of extracted text.
func collapseSpace(s string) string {
	var b strings.Builder
	blank := false
	for _, line := range strings.Split(s, "\n") {
		line = strings.Join(strings.Fields(line), " ")
		if line == "" {
			blank = b.Len() > 0
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('\n')
			if blank {
				b.WriteByte('\n')
			}
		}
		b.WriteString(line)
		blank = false
	}
	return b.String()
}
