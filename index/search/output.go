package search

import (
	"fmt"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

// Output is a search's answer as every caller shows it: the search tool's
// structuredContent (which adds the index state while indexing runs) and
// the CLI's search --json are this object.
type Output struct {
	Results []Result `json:"results"`
	// Note says where else the answer may be when nothing scored high.
	Note string `json:"note,omitempty"`
}

// StrongScore is the score from which a result is taken as an answer: below
// it (or with no result) a search says which files the index leaves out for
// their extension. On testdata/sample and a folder with a rota table, 17 of
// 19 questions put their answer first at 0.4 or more (the others 0.22 and
// 0.24); wrong passages found for questions whose answer sat in an
// unindexed CSV scored 0.30 to 0.37 (issue 32). The note is worded "if the
// answer may be in them", so a needless one costs some 60 tokens.
const StrongScore = 0.4

// NotEnabledNote tells the model, when no result scores StrongScore, that
// the folder holds count files skipped because their extension (exts) is
// not enabled, a few of them named in examples, and how to add them; ""
// otherwise.
func NotEnabledNote(res []Result, count int, examples, exts []string) string {
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
func ExtList(exts []string) string {
	out := make([]string, len(exts))
	for i, e := range exts {
		out[i] = e
		if e == "" {
			out[i] = NoExt
		}
	}
	return strings.Join(out, ",")
}

// Text renders the output as text for the model: where each result is,
// its score, and the same passage text as its snippet, so a client that
// reads only one of text and structuredContent reads the answer either
// way; then the note.
func (o Output) Text(query string) string {
	text := formatResults(query, o.Results)
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
		fmt.Fprintf(&b, "\n%s", term.VisibleText(r.Snippet))
	}
	return b.String()
}
