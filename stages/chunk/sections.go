package chunk

import (
	"context"
	"strings"
	"unicode/utf8"
)

// Rules names the cut rules in the index's version stamp, so an index cut
// by other rules is rebuilt rather than mixed: "sections" since markdown
// and DOCX sections get their own chunks (SplitSections).
const Rules = "sections"

// minSectionPercent: a section shorter than this share of cfg.Size (a
// title, a heading with one line under it) joins the next section, so a
// chunk is never a heading alone.
const minSectionPercent = 10

// SplitSections is SplitLimit run on each markdown section of text (the
// text from one ATX heading to the next, as AddHeadings finds them), so no
// chunk spans two headings. A short document is otherwise one chunk, and a
// query about one of its sections is compared with all of them at once: on
// the handbook set (bench/eval/folders) that put paraphrases and questions
// the folder does not answer at the same cosine. Chunks keep SplitLimit's
// guarantees within a section and do not overlap across sections; text
// without headings splits exactly as SplitLimit does.
func SplitSections(ctx context.Context, text string, pageStarts []int, cfg Config, tc TokenCounter, maxChunks int) (out []Chunk, truncated bool, err error) {
	starts := sectionStarts(text, cfg)
	if len(starts) == 0 {
		return SplitLimit(ctx, text, pageStarts, cfg, tc, maxChunks)
	}
	bounds := append([]int{0}, starts...)
	b0, line0 := 0, 0 // byte offset and newlines before the section
	for i, r0 := range bounds {
		end := len(text)
		if i+1 < len(bounds) {
			end = b0 + byteLen(text[b0:], bounds[i+1]-r0)
		}
		section := text[b0:end]
		var shifted []int
		if pageStarts != nil {
			shifted = make([]int, len(pageStarts))
			for j, p := range pageStarts {
				shifted[j] = p - r0
			}
		}
		left := 0
		if maxChunks > 0 {
			left = maxChunks - len(out)
		}
		cs, trunc, err := SplitLimit(ctx, section, shifted, cfg, tc, left)
		if err != nil {
			return nil, false, err
		}
		for _, c := range cs {
			c.Index = len(out)
			c.CharStart += r0
			c.CharEnd += r0
			c.LineStart += line0
			c.LineEnd += line0
			out = append(out, c)
		}
		if trunc || (maxChunks > 0 && len(out) == maxChunks && end < len(text) && strings.TrimSpace(text[end:]) != "") {
			return out, true, nil
		}
		line0 += strings.Count(section, "\n")
		b0 = end
	}
	return out, false, nil
}

// sectionStarts lists the code-point offsets where a section begins after
// the first, leaving out headings whose preceding section would be shorter
// than minSectionPercent of cfg.Size.
func sectionStarts(text string, cfg Config) []int {
	size := cfg.Size
	if size < 1 {
		size = Default.Size
	}
	minLen := max(1, size*minSectionPercent/100)
	var starts []int
	prev := 0
	for _, h := range findHeadings(text) {
		if h.at-prev >= minLen {
			starts = append(starts, h.at)
			prev = h.at
		}
	}
	// A short last section (a closing heading) stays with the one before.
	if n := len(starts); n > 0 && utf8.RuneCountInString(text)-starts[n-1] < minLen {
		starts = starts[:n-1]
	}
	return starts
}

// byteLen is the byte length of the first n code points of s.
func byteLen(s string, n int) int {
	b := 0
	for ; n > 0 && b < len(s); n-- {
		_, w := utf8.DecodeRuneInString(s[b:])
		b += w
	}
	return b
}
