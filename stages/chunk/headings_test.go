package chunk

import (
	"strings"
	"testing"
)

func TestAddHeadings(t *testing.T) {
	text := strings.Join([]string{
		"# Manual",
		"intro text",
		"## Install ##",
		"steps",
		"```sh",
		"# not a heading, a shell comment",
		"``` still code",
		"# nor this",
		"````",
		"### Linux",
		"apt install",
		"## Errors",
		"#hashtag is not a heading",
		"    # indented code is not either",
		"QX-7731-B means full",
	}, "\n")
	at := func(s string) int { return len([]rune(text[:strings.Index(text, s)])) }
	span := func(from, to string) Chunk {
		end := len([]rune(text))
		if to != "" {
			end = at(to)
		}
		return Chunk{CharStart: at(from), CharEnd: end}
	}
	chunks := []Chunk{span("# Manual", "steps"), span("steps", "apt install"), span("apt install", "## Errors"), span("#hashtag", "")}
	AddHeadings(text, chunks)
	want := []string{
		"Manual\nInstall",
		"Manual\nInstall\nLinux",
		"Manual\nInstall\nLinux",
		"Manual\nErrors",
	}
	for i, c := range chunks {
		if c.Headings != want[i] {
			t.Errorf("chunk %d: headings %q, want %q", i, c.Headings, want[i])
		}
	}
}
