package schema

import (
	"testing"
	"unicode/utf8"
)

func TestEncodePath(t *testing.T) {
	for _, tc := range []struct{ raw, enc string }{
		{"notes/plain.md", "notes/plain.md"},
		{"résumé.md", "résumé.md"},
		{"100%.txt", "100%.txt"},
		{"caf\xe9.txt", "caf%E9.txt"},          // Latin-1 é
		{"a%41.txt", "a%2541.txt"},             // a literal escape-like "%41"
		{"%\xff", "%%FF"},                      // "%" then an invalid byte
		{"%e9/\xe9", "%25e9/%E9"},              // the two names that used to collide
		{"\xff\xfe.md", "%FF%FE.md"},           // two invalid bytes
		{"ok\xe2\x82.md", "ok%E2%82.md"},       // a truncated UTF-8 sequence
		{"\xed\xa0\x80.md", "%ED%A0%80.md"},    // a surrogate is not UTF-8
		{"x\u00e9%c3%A9", "x\u00e9%25c3%25A9"}, // escapes in either case
	} {
		if got := EncodePath(tc.raw); got != tc.enc {
			t.Errorf("EncodePath(%q) = %q, want %q", tc.raw, got, tc.enc)
		}
		if got := DecodePath(tc.enc); got != tc.raw {
			t.Errorf("DecodePath(%q) = %q, want %q", tc.enc, got, tc.raw)
		}
	}
}

func FuzzEncodePath(f *testing.F) {
	for _, s := range []string{"a", "caf\xe9", "%41", "%%", "%\xff%", "\xe2\x82%ac"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		enc := EncodePath(raw)
		if !utf8.ValidString(enc) {
			t.Fatalf("EncodePath(%q) = %q is not UTF-8", raw, enc)
		}
		if got := DecodePath(enc); got != raw {
			t.Fatalf("DecodePath(EncodePath(%q)) = %q via %q", raw, got, enc)
		}
	})
}
