package engine

import (
	"strings"
	"testing"
	"unicode/utf8"
)

func TestSnippet(t *testing.T) {
	short := "A short\n\nchunk."
	if got := Snippet(short, "chunk", 300); got != "A short chunk." {
		t.Fatalf("short: %q", got)
	}
	filler := strings.Repeat("filler words here ", 40)
	text := filler + "The parental leave policy grants sixteen weeks of paid parental leave. " + filler
	got := Snippet(text, "How many weeks of parental leave?", 120)
	if !strings.Contains(got, "sixteen weeks of paid parental leave") {
		t.Fatalf("snippet misses the matching passage: %q", got)
	}
	if !strings.HasPrefix(got, "…") || !strings.HasSuffix(got, "…") {
		t.Fatalf("cut snippet not marked: %q", got)
	}
	if n := utf8.RuneCountInString(got); n > 122 {
		t.Fatalf("snippet has %d runes", n)
	}
	// No query word present: the start of the chunk.
	if got := Snippet(text, "zebra", 50); !strings.HasPrefix(got, "filler words") {
		t.Fatalf("fallback: %q", got)
	}
}
