package term

import (
	"encoding/json"
	"testing"
)

func TestOneLine(t *testing.T) {
	for _, tc := range []struct {
		in   string
		n    int
		want string
	}{
		{"a  b\n\tc", 10, "a b c"},
		{"héllo wörld", 11, "héllo wörld"},
		{"héllo wörld", 7, "héllo …"},
	} {
		if got := OneLine(tc.in, tc.n); got != tc.want {
			t.Errorf("OneLine(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
}

func TestVisible(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"plain é ✓ text", "plain é ✓ text"},
		{"\x1b]0;pwned\x07", `\x1b]0;pwned\x07`},
		{"a\x1b[2Jb", `a\x1b[2Jb`},
		{"tab\tnl\nnul\x00del\x7f", `tab\x09nl\x0anul\x00del\x7f`},
		{"c1 \u009b31m \u0085", `c1 \u009b31m \u0085`},
		{"x\u202egpj.exe \u2066y\u2069 \u202a", `x\u202egpj.exe \u2066y\u2069 \u202a`},
		{"bad \xff\x9b byte", `bad \xff\x9b byte`},
		{"\uFFFD kept", "\uFFFD kept"},
		{`back\slash`, `back\slash`},
	} {
		if got := Visible(tc.in); got != tc.want {
			t.Errorf("Visible(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
	if got := OneLine("a\x1b[2J  b\u009b", 10); got != `a\x1b[2J b\u009b` {
		t.Errorf("OneLine kept controls raw: %q", got)
	}
}

func TestVisibleJSON(t *testing.T) {
	in := map[string]string{"path": "a\x1b\u009b\x7f\u202e\u2069b é"}
	raw, err := json.Marshal(in)
	if err != nil {
		t.Fatal(err)
	}
	got := VisibleJSON(raw)
	if want := `{"path":"a\u001b\u009b\u007f\u202e\u2069b é"}`; string(got) != want {
		t.Errorf("VisibleJSON = %s, want %s", got, want)
	}
	var back map[string]string
	if err := json.Unmarshal(got, &back); err != nil || back["path"] != in["path"] {
		t.Errorf("VisibleJSON changed the meaning: %q, %v", back["path"], err)
	}
	if plain := []byte(`{"a":"b"}`); &VisibleJSON(plain)[0] != &plain[0] {
		t.Error("VisibleJSON copied JSON with nothing to escape")
	}
}
