package eval

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/sha256"
	_ "embed"
	"fmt"
	"hash/fnv"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
)

// manGeneratorVersion changes whenever the same man pages would give
// different files.
const manGeneratorVersion = 1

//go:embed manpages.txt
var manPageList string

// ManDir is where the man pages are read; a variable so tests can point
// elsewhere.
var ManDir = "/usr/share/man"

// manWidth is the text rendering's line length, as MANWIDTH=80 gives it.
const manWidth = 80

// ManPage is one line of manpages.txt: tar.1 is {tar 1}, openssl-req.1ssl
// is {openssl-req 1ssl}.
type ManPage struct {
	Name, Section string
}

//go:embed crowded.txt
var crowdedList string

// ManPages is the committed list of pages of the man-page set.
func ManPages() ([]ManPage, error) { return parseManList("manpages.txt", manPageList) }

func parseManList(file, list string) ([]ManPage, error) {
	var out []ManPage
	for l := range strings.SplitSeq(list, "\n") {
		if l = strings.TrimSpace(l); l == "" || strings.HasPrefix(l, "#") {
			continue
		}
		i := strings.LastIndexByte(l, '.')
		if i <= 0 || i == len(l)-1 || l[i+1] < '1' || l[i+1] > '9' {
			return nil, fmt.Errorf("eval: %s: %q is not NAME.SECTION", file, l)
		}
		out = append(out, ManPage{l[:i], l[i+1:]})
	}
	return out, nil
}

// Source is the page's gzipped roff file.
func (p ManPage) Source() string {
	return filepath.Join(ManDir, "man"+p.Section[:1], p.Name+"."+p.Section+".gz")
}

// Doc is the page's corpus file, e.g. man1/tar.txt: a third each of plain
// text, Markdown and PDF, chosen by a hash of the page's name so the
// choice does not follow the list's grouping by package.
func (p ManPage) Doc() Document {
	h := fnv.New32a()
	h.Write([]byte(p.Name + "." + p.Section))
	return Document{Name: "man" + p.Section[:1] + "/" + p.Name, Ext: [...]string{".txt", ".md", ".pdf"}[h.Sum32()%3]}
}

// roff reads the page's source; a page that only points at another (.so)
// is refused, since the list names real pages.
func (p ManPage) roff() ([]byte, error) {
	f, err := os.Open(p.Source())
	if err != nil {
		return nil, fmt.Errorf("eval: man page %s.%s (is its package installed? scripts/bench-setup.sh): %w", p.Name, p.Section, err)
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", p.Source(), err)
	}
	b, err := io.ReadAll(zr)
	if err != nil {
		return nil, fmt.Errorf("eval: %s: %w", p.Source(), err)
	}
	if bytes.HasPrefix(b, []byte(".so ")) {
		return nil, fmt.Errorf("eval: %s only points at another page", p.Source())
	}
	return b, nil
}

// noHyphen is put before every page, as man --nh does: no word is split
// across lines, so a phrase reads the same in every file type.
const noHyphen = ".nh\n.de hy\n..\n"

// groff typesets a page's source for a device (utf8 or pdf). -mandoc
// reads both man and mdoc pages, -t runs tbl, -Kutf-8 reads the source as
// UTF-8. The text has no bold or underline (-P-cbou, what col -bx strips
// from man's output); the PDF's date is corpus.Mtime, so two builds are alike.
func groff(ctx context.Context, src []byte, device string) ([]byte, error) {
	args := []string{"-mandoc", "-t", "-Kutf-8", "-T" + device}
	if device == "utf8" {
		w := strconv.Itoa(manWidth) + "n"
		args = append(args, "-P-cbou", "-rLL="+w, "-rLT="+w)
	}
	cmd := exec.CommandContext(ctx, "groff", args...)
	cmd.Stdin = io.MultiReader(strings.NewReader(noHyphen), bytes.NewReader(src))
	cmd.Env = append(os.Environ(), "SOURCE_DATE_EPOCH="+strconv.FormatInt(corpus.Mtime.Unix(), 10))
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("eval: groff -T%s (install with scripts/bench-setup.sh): %v: %s", device, err, corpus.LastLines(stderr.String(), 1))
	}
	return out, nil
}

// BuildManPages returns the man-page corpus under cacheDir (as
// eval-mancorpus-<hash>), rendering it unless a finished copy made from the
// same page sources and groff is there, and what it was made from.
func BuildManPages(ctx context.Context, cacheDir string) (Corpus, string, error) {
	return buildManCorpus(ctx, cacheDir, "manpages.txt", manPageList, "eval-mancorpus-")
}

// BuildCrowded is BuildManPages for the crowded set's pages (crowded.txt),
// as eval-crowdedcorpus-<hash>.
func BuildCrowded(ctx context.Context, cacheDir string) (Corpus, string, error) {
	return buildManCorpus(ctx, cacheDir, "crowded.txt", crowdedList, "eval-crowdedcorpus-")
}

func buildManCorpus(ctx context.Context, cacheDir, file, list, prefix string) (Corpus, string, error) {
	pages, err := parseManList(file, list)
	if err != nil {
		return Corpus{}, "", err
	}
	// groff's version is part of the cache key: another groff may render
	// differently.
	out, err := exec.CommandContext(ctx, "groff", "--version").Output()
	if err != nil {
		return Corpus{}, "", fmt.Errorf("eval: groff --version (install with scripts/bench-setup.sh): %w", err)
	}
	ver := strings.TrimSpace(strings.SplitN(string(out), "\n", 2)[0])
	h := sha256.New()
	fmt.Fprintf(h, "man corpus v%d %s\n", manGeneratorVersion, ver)
	docs := make([]Document, len(pages))
	srcs := make([][]byte, len(pages))
	for i, p := range pages {
		if srcs[i], err = p.roff(); err != nil {
			return Corpus{}, "", err
		}
		docs[i] = p.Doc()
		fmt.Fprintf(h, "%s %d\n%s", docs[i].Path(), len(srcs[i]), srcs[i])
	}
	dir, err := cached(cacheDir, prefix, h, manGeneratorVersion, docs, func(out, _ string) error {
		for i, d := range docs {
			b, err := renderMan(ctx, pages[i], srcs[i], d.Ext)
			if err != nil {
				return fmt.Errorf("%s: %w", d.Path(), err)
			}
			if err := corpus.WriteFile(filepath.Join(out, d.Path()), b); err != nil {
				return err
			}
		}
		return nil
	})
	return Corpus{Dir: dir, Docs: docs}, fmt.Sprintf("%d of Debian's man pages rendered by %s", len(pages), ver), err
}

// renderMan makes one page's file of type ext.
func renderMan(ctx context.Context, p ManPage, src []byte, ext string) ([]byte, error) {
	if ext == ".pdf" {
		return groff(ctx, src, "pdf")
	}
	text, err := groff(ctx, src, "utf8")
	if err != nil || ext == ".txt" {
		return text, err
	}
	return []byte(manMarkdown(p, string(text))), nil
}

// manMarkdown converts a page's text rendering to Markdown: the title,
// headings at the left margin as ##, indented ones (subsections) as ###,
// filled paragraphs joined into one line each, a tag with its indented
// text as a list item, and lines groff did not fill (synopses, examples,
// tables) as code blocks. It reads only the layout, so it can be wrong
// where a page's layout is unusual; the words are always kept.
func manMarkdown(p ManPage, text string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s(%s)\n", p.Name, p.Section)
	for _, pt := range manParts(manBody(text)) {
		pt.write(&sb)
	}
	return sb.String()
}

// manBody is the page's lines without trailing blanks, blank lines at
// either end, and the running header and footer.
func manBody(text string) []string {
	lines := strings.Split(strings.ReplaceAll(text, "\t", "        "), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	// The first line and the last are the running header and footer.
	if len(lines) >= 2 {
		lines = lines[1 : len(lines)-1]
	}
	return lines
}

// manPart is a heading, a list item's tag, a paragraph or a code block.
type manPart struct {
	head, tag, para string
	code            []string
	inItem          bool
}

// manParts reads the parts off the page's blank-line separated blocks;
// code blocks only a blank line apart become one.
func manParts(lines []string) []manPart {
	var parts []manPart
	item := 0 // indent of the open list item's text, 0 when none is open
	section := ""
	for start := 0; start < len(lines); {
		if lines[start] == "" {
			start++
			continue
		}
		end := start
		for end < len(lines) && lines[end] != "" {
			end++
		}
		for _, r := range manRuns(lines[start:end]) {
			parts = r.addTo(parts, &item, &section)
		}
		start = end
	}
	return parts
}

// addTo appends the run's parts, keeping item (the open list item's
// indent) and section (the current heading) up to date.
func (r manRun) addTo(parts []manPart, item *int, section *string) []manPart {
	switch {
	case r.heading > 0:
		*item = 0
		if r.heading == 1 {
			*section = collapse(r.lines[0])
		}
		return append(parts, manPart{head: strings.Repeat("#", r.heading+1) + " " + collapse(r.lines[0])})
	case r.tag != "":
		*item = r.indent
		parts = append(parts, manPart{tag: r.tag})
	case r.indent < *item:
		*item = 0
	}
	inItem := *item > 0
	if r.filled || *section == "NAME" {
		return append(parts, manPart{para: joinLines(r.lines), inItem: inItem})
	}
	var code []string
	for _, l := range r.lines {
		code = append(code, cutIndent(l, r.indent))
	}
	if n := len(parts) - 1; n >= 0 && parts[n].code != nil && parts[n].inItem == inItem {
		parts[n].code = append(append(parts[n].code, ""), code...)
		return parts
	}
	return append(parts, manPart{code: code, inItem: inItem})
}

// write writes the part as Markdown, indented under a list item when in one.
func (pt manPart) write(sb *strings.Builder) {
	pad := ""
	if pt.inItem {
		pad = "  "
	}
	switch {
	case pt.head != "":
		fmt.Fprintf(sb, "\n%s\n", pt.head)
	case pt.tag != "":
		fmt.Fprintf(sb, "\n- %s\n", pt.tag)
	case pt.code != nil:
		fmt.Fprintf(sb, "\n%s```\n", pad)
		for _, l := range pt.code {
			if l != "" {
				l = pad + l
			}
			sb.WriteString(l + "\n")
		}
		fmt.Fprintf(sb, "%s```\n", pad)
	default:
		fmt.Fprintf(sb, "\n%s%s\n", pad, pt.para)
	}
}

// joinLines joins filled lines into one. With hyphenation off, a hyphen
// at a line's end is part of the word ("host-" "specific").
func joinLines(lines []string) string {
	var sb strings.Builder
	for i, l := range lines {
		if i > 0 && !strings.HasSuffix(lines[i-1], "-") {
			sb.WriteByte(' ')
		}
		sb.WriteString(collapse(l))
	}
	return sb.String()
}

// manRun is a stretch of lines of one block of the rendering.
type manRun struct {
	lines   []string
	indent  int    // of the lines; the least, for code
	heading int    // 1 for a section heading, 2 for a subsection, else 0
	tag     string // the tag this run is the text of, if any
	filled  bool   // a paragraph groff filled, rather than lines kept as set
}

// manRuns splits a block (lines without a blank one) into headings and
// runs of lines at one indent, ties a one-line run to the deeper run after
// it as its tag (also where the tag shares its line with the text's first
// words), and merges neighbouring unfilled runs into one.
func manRuns(block []string) []manRun {
	var runs []manRun
	for i := 0; i < len(block); {
		ind := indentOf(block[i])
		if ind < 5 {
			runs = append(runs, manRun{lines: block[i : i+1], indent: ind, heading: min(ind, 1) + 1})
			i++
			continue
		}
		j := i + 1
		for j < len(block) && indentOf(block[j]) == ind {
			j++
		}
		runs = append(runs, manRun{lines: block[i:j], indent: ind})
		i = j
	}
	var out []manRun
	for k := 0; k < len(runs); k++ {
		r := runs[k]
		if r.heading == 0 && len(r.lines) == 1 && k+1 < len(runs) && runs[k+1].heading == 0 && runs[k+1].indent > r.indent {
			next := runs[k+1]
			tag, rest := r.lines[0], ""
			// "Host    Restricts the ...": the text starts on the tag's
			// line at the indent of the lines below.
			if at := runeIndex(tag, next.indent); at > 1 && tag[at-1] == ' ' && tag[at-2] == ' ' && tag[at] != ' ' {
				tag, rest = tag[:at], strings.Repeat(" ", next.indent)+tag[at:]
			}
			if rest == "" && strings.ContainsAny(tag[len(tag)-1:], ".:") {
				out = append(out, r.finish())
				continue // a lead-in sentence, not a tag
			}
			next.tag = collapse(tag)
			if rest != "" {
				next.lines = append([]string{rest}, next.lines...)
			}
			r = next
			k++
		}
		r = r.finish()
		if n := len(out); n > 0 && !r.filled && r.heading == 0 && r.tag == "" && !out[n-1].filled && out[n-1].heading == 0 {
			out[n-1].lines = append(slices.Clip(out[n-1].lines), r.lines...)
			out[n-1].indent = min(out[n-1].indent, r.indent)
			continue
		}
		out = append(out, r)
	}
	return out
}

// finish sets whether a run of text was filled.
func (r manRun) finish() manRun {
	if r.heading == 0 {
		r.filled = filled(r.lines)
	}
	return r
}

// filled reports whether groff filled these lines: every line but the last
// is too full to take the next line's first word.
func filled(lines []string) bool {
	for k := 0; k+1 < len(lines); k++ {
		next := strings.Fields(lines[k+1])[0]
		if utf8.RuneCountInString(lines[k])+1+utf8.RuneCountInString(next) <= manWidth {
			return false
		}
	}
	// A line of its own is a paragraph when it ends like a sentence or a
	// lead-in, else a command or a name kept as set.
	return len(lines) > 1 || strings.ContainsAny(lines[0][len(lines[0])-1:], ".:;,")
}

func indentOf(l string) int { return len(l) - len(strings.TrimLeft(l, " ")) }

// runeIndex is the byte offset of the n-th rune of s, or -1 past its end.
func runeIndex(s string, n int) int {
	for i := range s {
		if n == 0 {
			return i
		}
		n--
	}
	return -1
}

func collapse(s string) string { return strings.Join(strings.Fields(s), " ") }

// cutIndent removes up to n leading spaces.
func cutIndent(l string, n int) string { return l[min(n, indentOf(l)):] }
