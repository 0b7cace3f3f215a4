package search

import (
	"strings"
	"unicode"

	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// PassageCap is the most characters of a passage a result carries: a
// longer one, at most four merged chunks of about 3,400, is cut to the
// window around its best-matching sentence. Chosen on the sample, Go
// docs, man pages and crowded evaluations in every mode: 3,000 is the
// smallest cap tried that lost no answer@5 anywhere (2,800 lost one man
// page question in hybrid mode; smaller caps more, and other centres, two
// windows or scoring sentences with the embedder did no better: see
// docs/search-fusion.md#passage-caps).
const PassageCap = 3000

// segment is a sentence or line of a passage, in runes.
type segment struct{ start, end int }

// segments splits text at line breaks, and at sentence ends (. ! ?
// followed by white space) outside table rows: a row is cut only whole.
func segments(text []rune) []segment {
	var out []segment
	add := func(start, end int) {
		for start < end && unicode.IsSpace(text[start]) {
			start++
		}
		if end > start {
			out = append(out, segment{start, end})
		}
	}
	for _, l := range lines(text) {
		if isTableRow(text[l.start:l.end]) {
			add(l.start, l.end)
			continue
		}
		start := l.start
		for i := l.start; i < l.end; i++ {
			if r := text[i]; (r == '.' || r == '!' || r == '?') && i+1 < l.end && unicode.IsSpace(text[i+1]) {
				add(start, i+1)
				start = i + 1
			}
		}
		add(start, l.end)
	}
	return out
}

// lines are text's lines, without their line breaks.
func lines(text []rune) []segment {
	var out []segment
	start := 0
	for i, r := range text {
		if r == '\n' {
			out = append(out, segment{start, i})
			start = i + 1
		}
	}
	return append(out, segment{start, len(text)})
}

// isTableRow reports whether line is a row of a pipe table (Markdown,
// reStructuredText grid rows, what office readers write): it starts or
// ends with | and holds at least two.
func isTableRow(line []rune) bool {
	s := strings.TrimSpace(string(line))
	return strings.Count(s, "|") >= 2 && (strings.HasPrefix(s, "|") || strings.HasSuffix(s, "|"))
}

// isTableRule reports whether line is a table's header rule (|---|:--:|).
func isTableRule(line []rune) bool {
	s := strings.TrimSpace(string(line))
	return strings.Contains(s, "-") && strings.Trim(s, "|-:+= ") == ""
}

// tableHeads maps each table row of text below a table's first line (its
// header) to that header's line; a table that starts at text's first line
// counts that line as its header.
func tableHeads(text []rune) map[int]segment {
	heads := map[int]segment{}
	var head *segment
	for _, l := range lines(text) {
		switch {
		case !isTableRow(text[l.start:l.end]):
			head = nil
		case head == nil:
			h := l
			head = &h
		case !isTableRule(text[l.start:l.end]):
			heads[l.start] = *head
		}
	}
	return heads
}

// termsMatch reports whether a passage term counts as a query term: equal,
// or sharing a first five letters (a crude stem: restarts, restarting).
func termsMatch(a, b string) bool {
	if a == b {
		return true
	}
	const stem = 5
	return len(a) >= stem && len(b) >= stem && a[:stem] == b[:stem]
}

// centreWindow returns the runes [start, end) of text (a passage whose best
// chunk spans focus) that a result of at most limit runes shows: the window
// around the sentence of the best chunk holding most of the query's terms
// (the first such; the chunk's middle when none holds any), a table row
// counting its header's terms too, cut at sentence or line boundaries where
// that keeps the sentence.
func centreWindow(text []rune, focus segment, query string, limit int) (start, end int) {
	if len(text) <= limit {
		return 0, len(text)
	}
	terms := lexical.Tokens(query)
	segs := segments(text)
	heads := tableHeads(text)
	centre, best := (focus.start+focus.end)/2, 0
	for _, s := range segs {
		if s.end <= focus.start || s.start >= focus.end {
			continue
		}
		words := string(text[s.start:s.end])
		if h, ok := heads[s.start]; ok {
			// "week 13" is answered by row 13 under the header "Week".
			words += "\n" + string(text[h.start:h.end])
		}
		seen := map[string]bool{}
		for _, t := range lexical.Tokens(words) {
			for _, q := range terms {
				if termsMatch(t, q) {
					seen[q] = true
				}
			}
		}
		if len(seen) > best {
			best, centre = len(seen), (s.start+s.end)/2
		}
	}
	start = min(max(0, centre-limit/2), len(text)-limit)
	end = start + limit
	// Whole sentences where possible: start at the first sentence that
	// begins in the window, end at the last that ends in it, unless that
	// would drop the centre.
	for _, s := range segs {
		if s.start >= start {
			if s.start <= centre {
				start = s.start
			}
			break
		}
	}
	for i := len(segs) - 1; i >= 0; i-- {
		if s := segs[i]; s.end <= end {
			if s.end > centre {
				end = s.end
			}
			break
		}
	}
	return start, end
}

// maxHeadRunes bounds a table header repeated above a result's text.
const maxHeadRunes = 400

// centre cuts each result's passage longer than limit runes to its
// centreWindow; the char range then spans the text returned (Search
// passes PassageCap). Text that starts
// inside a table below its header gets the header line (and its rule)
// first, from the passage or, when the passage starts inside the table,
// from the chunk before it (read from src; nil reads none), so each row
// shown says what its cells are.
func centre(res []Result, query string, limit int, src *chunks) error {
	for i := range res {
		r := &res[i]
		raw := []rune(r.raw)
		r.raw = ""
		start, end, from := 0, len(raw), r.CharStart
		if len([]rune(r.Snippet)) > limit {
			start, end = centreWindow(raw, r.focus, query, limit)
			r.Snippet = collapseSpace(string(raw[start:end]))
			r.CharStart, r.CharEnd = r.CharStart+start, r.CharStart+end
		}
		head, err := headAbove(raw, start, from, *r, src)
		if err != nil {
			return err
		}
		if head != "" && len([]rune(head)) <= maxHeadRunes {
			r.Snippet = collapseSpace(head) + "\n" + r.Snippet
		}
	}
	return nil
}

// headChunks bounds how many chunks before a passage are read for the
// header of a table the passage starts inside (about 3,200 characters).
const headChunks = 4

// headAbove returns the header line of the table whose row starts text at
// rune at (with the header's rule line when one follows it), "" when at is
// not inside a table below its header or the header is out of reach. When
// the table runs up to the start of text, which starts at the document's
// code point from, the header is looked for in the chunks before r's first
// (read from src; with none, a table at the start of text counts as
// starting there only when text starts the document).
func headAbove(text []rune, at, from int, r Result, src *chunks) (string, error) {
	ls := lines(text)
	row := 0 // the line at begins
	for row+1 < len(ls) && ls[row+1].start <= at {
		row++
	}
	isRow := func(t []rune, l segment) bool { return isTableRow(t[l.start:l.end]) }
	if !isRow(text, ls[row]) {
		return "", nil
	}
	top := row
	for top > 0 && isRow(text, ls[top-1]) {
		top--
	}
	if top == 0 && len(r.Chunks) > 0 && r.Chunks[0] > 0 {
		// The table may start above the passage.
		if src == nil {
			return "", nil
		}
		h, inside, err := headBefore(src, r.Path, r.Chunks[0], from)
		if err != nil || inside {
			return h, err
		}
	}
	if top == row {
		return "", nil // text at starts with the header
	}
	return headLines(text, ls, top), nil
}

// headBefore looks for the header of a table that runs up to code point
// from, where chunk first of path begins a passage, in the chunks before
// it: inside is false when the table starts at from; h is "" when the
// header is out of reach.
func headBefore(src *chunks, path string, first, from int) (h string, inside bool, err error) {
	var recs []schema.Record
	for c := max(0, first-headChunks); c < first; c++ {
		rec, _, err := src.snap.FileChunk(path, c)
		if err != nil {
			return "", false, err
		}
		recs = append(recs, rec)
	}
	before := []rune(joinChunks(recs, nil))
	if n := from - recs[0].CharStart; n >= 0 && n < len(before) {
		before = before[:n] // chunks overlap: only what comes before the passage
	}
	pl := lines(before)
	if last := pl[len(pl)-1]; last.start == last.end {
		pl = pl[:len(pl)-1] // the passage starts a line
	}
	up := len(pl)
	for up > 0 && isTableRow(before[pl[up-1].start:pl[up-1].end]) {
		up--
	}
	switch {
	case up == len(pl):
		return "", false, nil // the table starts in the passage
	case up > 0 || recs[0].ChunkIndex == 0:
		return headLines(before, pl, up), true, nil
	}
	return "", true, nil // rows all the way up: the header is out of reach
}

// headLines is the header line ls[top] of text and its rule, when the
// next line is one.
func headLines(text []rune, ls []segment, top int) string {
	h := string(text[ls[top].start:ls[top].end])
	if top+1 < len(ls) && isTableRule(text[ls[top+1].start:ls[top+1].end]) {
		h += "\n" + string(text[ls[top+1].start:ls[top+1].end])
	}
	return h
}
