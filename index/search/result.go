package search

import (
	"cmp"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

// mergeCopies folds results whose passage text is the same (identical
// files in two folders, a .txt beside its .pdf) into the best-ranked one,
// whose Paths lists every path. At most topK results are kept; results
// past them still add their path to a kept copy.
func mergeCopies(res []Result, topK int) []Result {
	out := make([]Result, 0, min(len(res), topK))
	first := map[string]int{} // passage text → index in out
	for _, r := range res {
		key := strings.Join(strings.Fields(r.Snippet), " ")
		if i, ok := first[key]; ok && key != "" {
			h := &out[i]
			if h.Paths == nil {
				h.Paths = []string{h.Path}
			}
			if !slices.Contains(h.Paths, r.Path) {
				h.Paths = append(h.Paths, r.Path)
			}
			continue
		}
		if len(out) == topK {
			continue // later results may still be copies of kept ones
		}
		first[key] = len(out)
		out = append(out, r)
	}
	return out
}

// roundScores rounds what a result reports: digits past these cost a
// model tokens and say nothing. Scores to 1/1000 (the order is the
// ranking's) and the explained fused score with them, mtimes to the
// millisecond.
func roundScores(res []Result) {
	for i := range res {
		res[i].Score = math.Round(res[i].Score*1e3) / 1e3
		res[i].Mtime = math.Round(res[i].Mtime*1e3) / 1e3
		if x := res[i].Explain; x != nil {
			x.Fused = math.Round(x.Fused*1e3) / 1e3
		}
	}
}

// Citation names where a result is: its path plus page or line range
// when known.
func (r Result) Citation() string {
	switch {
	case r.Page > 0:
		return fmt.Sprintf("%s, page %d", r.Path, r.Page)
	case r.LineStart > 0 && r.LineEnd > r.LineStart:
		return fmt.Sprintf("%s, lines %d-%d", r.Path, r.LineStart, r.LineEnd)
	case r.LineStart > 0:
		return fmt.Sprintf("%s, line %d", r.Path, r.LineStart)
	}
	return r.Path
}

// Output is a search's answer as every caller shows it: the search tool's
// structuredContent (which adds the index state while indexing runs) and
// the CLI's search --json are this object.
type Output struct {
	Results []Result `json:"results"`
	// Note says where else the answer may be when nothing scored high,
	// or which filter left out every file.
	Note string `json:"note,omitempty"`

	query       string // for Text
	filteredOut bool   // the filters passed no file
}

// FilteredOut reports whether the search's filters passed no indexed
// file, so that nothing was searched (Note says how many each passes).
func (o Output) FilteredOut() bool { return o.filteredOut }

// StrongScore is the score from which a result is taken as an answer: below
// it (or with no result) a search says which files the index leaves out for
// their extension. On testdata/sample and a folder with a rota table, 17 of
// 19 questions put their answer first at 0.4 or more (the others 0.22 and
// 0.24); wrong passages found for questions whose answer sat in an
// unindexed CSV scored 0.30 to 0.37 (issue 32). The note is worded "if the
// answer may be in them", so a needless one costs some 60 tokens.
const StrongScore = 0.4

// Unindexed is what a folder holds that the index leaves out because its
// extension is not enabled: Count files, a few of them named in Examples,
// of the extensions Exts.
type Unindexed struct {
	Count          int
	Examples, Exts []string
}

// NotEnabledNote tells the model, when no result scores StrongScore, that
// the folder holds files skipped because their extension is not enabled
// (u), and how to add them; "" otherwise.
func NotEnabledNote(res []Result, u Unindexed) string {
	count, examples, exts := u.Count, u.Examples, u.Exts
	if count == 0 || len(res) > 0 && res[0].Score >= StrongScore {
		return ""
	}
	files := "files"
	if count == 1 {
		files = "file"
	}
	ex := strings.Join(examples, ", ")
	if more := count - len(examples); more > 0 {
		ex += fmt.Sprintf(" and %d more", more)
	}
	list := ExtList(exts)
	return fmt.Sprintf("Note: nothing scored high, and the folder holds %d %s not indexed because the extension is not enabled (%s: %s). "+
		"If the answer may be in them, add --add-exts %s to the server's arguments; the reindex at its next start indexes them.",
		count, files, list, term.Visible(ex), list)
}

// ExtList names extensions for people: ".txt,.md" with NoExt for "".
func ExtList(exts []string) string { return strings.Join(SpelledExts(exts), ",") }

// SpelledExts is an extension list as people and results read it: files
// without an extension as NoExt, the name --exts takes, not "".
func SpelledExts(exts []string) []string {
	out := make([]string, len(exts))
	for i, e := range exts {
		out[i] = cmp.Or(e, NoExt)
	}
	return out
}

// Text renders the output as text for the model (and the CLI): where each
// result is, its score (with Explain, what it is made of), and the same
// passage text as its snippet, so a client that reads only one of text and
// structuredContent reads the answer either way; then the note.
func (o Output) Text() string {
	text := formatResults(o.query, o.Results)
	if o.Note != "" {
		text += "\n\n" + o.Note
	}
	return text
}

func formatResults(query string, res []Result) string {
	if r := []rune(query); len(r) > 200 {
		query = string(r[:200]) + "…" // a long query is not worth echoing whole
	}
	if len(res) == 0 {
		return fmt.Sprintf("No passages matched %q.", query)
	}
	var b strings.Builder
	noun := "passages"
	if len(res) == 1 {
		noun = "passage"
	}
	fmt.Fprintf(&b, "%d %s, best first; each is the part of its file around the best match, and its link reads on:", len(res), noun)
	for i, r := range res {
		// Names and text from documents reach the client's display: their
		// control characters are escaped (structuredContent keeps them exact).
		fmt.Fprintf(&b, "\n\n[%d] %s (%.2f)", i+1, term.Visible(r.Citation()), r.Score)
		if len(r.Paths) > 1 {
			fmt.Fprintf(&b, ", same text in %s", term.Visible(strings.Join(r.Paths[1:], ", ")))
		}
		if x := r.Explain; x != nil {
			fmt.Fprintf(&b, "\ncosine %.3f  bm25 %.2f  keyword %.3f  share %.2f  spec %.2f  cover %.2f  best %.3f  fused %.3f",
				x.Cosine, x.BM25, x.Keyword, x.Share, x.Specificity, x.Coverage, x.Support, x.Fused)
		}
		fmt.Fprintf(&b, "\n%s", term.VisibleText(r.Snippet))
	}
	return b.String()
}

// missNote says, when no file snap holds with text passes f, how many
// each of f's filters passes on its own, so the caller learns which one
// left everything out rather than that the folder lacks an answer; ""
// when some file passes.
func (f *Filter) missNote(snap index.View) string {
	if !f.active() || len(f.chunkIDs(snap)) > 0 {
		return ""
	}
	type part struct {
		name string
		only Filter
	}
	var parts []part
	if f.Path != nil {
		parts = append(parts, part{fmt.Sprintf("path_glob %q", cmp.Or(f.glob, "(given)")), Filter{Path: f.Path}})
	}
	if len(f.Exts) > 0 {
		parts = append(parts, part{"ext " + ExtList(f.Exts), Filter{Exts: f.Exts}})
	}
	if !f.ModifiedAfter.IsZero() {
		parts = append(parts, part{"modified_after " + f.ModifiedAfter.Format(time.RFC3339), Filter{ModifiedAfter: f.ModifiedAfter}})
	}
	if !f.ModifiedBefore.IsZero() {
		parts = append(parts, part{"modified_before " + f.ModifiedBefore.Format(time.RFC3339), Filter{ModifiedBefore: f.ModifiedBefore}})
	}
	files, counts := 0, make([]int, len(parts))
	for _, p := range snap.Paths() {
		e, ok := snap.File(p)
		if !ok || len(e.ChunkIDs) == 0 {
			continue
		}
		files++
		for i := range parts {
			if parts[i].only.pass(e.Path, e.Ext, e.Mtime) {
				counts[i]++
			}
		}
	}
	each := make([]string, len(parts))
	for i, p := range parts {
		each[i] = fmt.Sprintf("%s passes %d", p.name, counts[i])
	}
	note := fmt.Sprintf("Note: no indexed file passes the search's filters, so nothing was searched (of the %d files the index holds, %s)",
		files, strings.Join(each, ", "))
	if !slices.Contains(counts, 0) {
		note += "; no file passes them all"
	}
	if dir := f.globFolder(snap); dir != "" && counts[0] == 0 {
		// "ops" or "ops/" meant as a folder matches no file.
		note += fmt.Sprintf(`; %q names a folder: path_glob %q matches the files in it`, f.glob, dir+"/**")
	}
	return term.Visible(note) + ". Widen or drop a filter."
}

// globFolder is f's path_glob without a trailing slash when it names a
// folder holding indexed files (no pattern characters); "" otherwise.
func (f *Filter) globFolder(snap index.View) string {
	dir := strings.TrimSuffix(strings.TrimPrefix(f.glob, "./"), "/")
	if f.Path == nil || dir == "" || strings.ContainsAny(dir, "*?[\\") {
		return ""
	}
	for _, p := range snap.Paths() {
		if strings.HasPrefix(p, dir+"/") {
			return dir
		}
	}
	return ""
}
