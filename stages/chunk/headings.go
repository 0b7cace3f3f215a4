package chunk

import (
	"strings"
	"unicode/utf8"
)

// maxHeadingBytes caps a chunk's heading trail.
const maxHeadingBytes = 1000

// AddHeadings sets each chunk's Headings from markdown ATX heading lines
// ("# Title" to "###### Title", outside fenced code blocks) in text: the
// trail of headings in scope where the chunk starts, then those inside it,
// one per line. chunks must come from Split(text, ...).
func AddHeadings(text string, chunks []Chunk) {
	hs := findHeadings(text)
	if len(hs) == 0 {
		return
	}
	var trail [7]string // by level; a heading clears the deeper levels
	next := 0
	for i := range chunks {
		c := &chunks[i]
		for next < len(hs) && hs[next].at < c.CharStart {
			h := hs[next]
			trail[h.level] = h.text
			clear(trail[h.level+1:])
			next++
		}
		var b strings.Builder
		add := func(s string) {
			if s == "" || b.Len()+len(s) > maxHeadingBytes {
				return
			}
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
		for _, s := range trail {
			add(s)
		}
		for j := next; j < len(hs) && hs[j].at < c.CharEnd; j++ {
			add(hs[j].text)
		}
		c.Headings = b.String()
	}
}

type heading struct {
	at    int // code-point offset of the line start
	level int
	text  string
}

func findHeadings(text string) []heading {
	var hs []heading
	var fence string // the open code fence's marker, or ""
	at := 0
	for len(text) > 0 {
		line, rest, _ := strings.Cut(text, "\n")
		body := strings.TrimLeft(line, " ")
		indented := len(line)-len(body) > 3
		switch {
		case indented:
		case fence != "":
			if strings.HasPrefix(body, fence) && strings.TrimSpace(strings.TrimLeft(body, fence[:1])) == "" {
				fence = ""
			}
		case strings.HasPrefix(body, "```") || strings.HasPrefix(body, "~~~"):
			fence = body[:3]
		default:
			if h, ok := atxHeading(body); ok {
				h.at = at
				hs = append(hs, h)
			}
		}
		at += utf8.RuneCountInString(line) + 1
		text = rest
	}
	return hs
}

// atxHeading parses "## Text ##" (the line without leading spaces).
func atxHeading(line string) (heading, bool) {
	level := 0
	for level < len(line) && line[level] == '#' {
		level++
	}
	if level == 0 || level > 6 || (level < len(line) && line[level] != ' ' && line[level] != '\t') {
		return heading{}, false
	}
	text := strings.TrimSpace(line[level:])
	if t := strings.TrimRight(text, "#"); t == "" || strings.HasSuffix(t, " ") || strings.HasSuffix(t, "\t") {
		text = strings.TrimSpace(t)
	}
	if text == "" {
		return heading{}, false
	}
	return heading{level: level, text: text}, true
}
