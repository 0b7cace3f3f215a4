package glob

import "testing"

func TestParse(t *testing.T) {
	for _, tc := range []struct {
		pattern string
		match   []string
		miss    []string
	}{
		{"*.md", []string{"a.md", "docs/deep/b.md"}, []string{"a.txt", "a.md.txt"}},
		{"docs/*.md", []string{"docs/a.md"}, []string{"docs/x/a.md", "a.md"}},
		{"docs/**", []string{"docs/a.md", "docs/x/y/z.pdf"}, []string{"other/a.md"}},
		{"**/notes?.txt", []string{"notes1.txt", "a/b/notesX.txt"}, []string{"notes12.txt"}},
		{"[ab]*.txt", []string{"a1.txt", "sub/b.txt"}, []string{"c.txt"}},
		{"[!ab]*.txt", []string{"c.txt"}, []string{"a.txt"}},
		{"./docs/*.md", []string{"docs/a.md"}, []string{"a.md"}},
		{"résumé *.md", []string{"résumé 1.md"}, []string{"resume 1.md"}},
	} {
		g, err := Parse(tc.pattern)
		if err != nil {
			t.Fatalf("%q: %v", tc.pattern, err)
		}
		for _, p := range tc.match {
			if !g.Match(p) {
				t.Errorf("%q should match %q", tc.pattern, p)
			}
		}
		for _, p := range tc.miss {
			if g.Match(p) {
				t.Errorf("%q should not match %q", tc.pattern, p)
			}
		}
	}
	for _, bad := range []string{"/etc/*", "../*.md", "docs/../../x", "[a-"} {
		if _, err := Parse(bad); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
	if g, err := Parse(""); g != nil || err != nil || !g.Match("anything") {
		t.Errorf("empty glob: %v %v", g, err)
	}
}

// A name can be on disk in either Unicode form (NFD from macOS, NFC as typed
// by a person or a model); a pattern matches it in both.
func TestMatchEitherNormalForm(t *testing.T) {
	const nfc, nfd = "caf\u00e9-rules.md", "cafe\u0301-rules.md"
	for _, tc := range []struct{ pattern, name string }{
		{nfc, nfd}, {nfd, nfc}, {"caf?-rules.md", nfd}, {"notes/caf\u00e9*", "notes/" + nfd},
	} {
		g, err := Parse(tc.pattern)
		if err != nil {
			t.Fatal(err)
		}
		if !g.Match(tc.name) {
			t.Errorf("%+q does not match %+q", tc.pattern, tc.name)
		}
	}
}
