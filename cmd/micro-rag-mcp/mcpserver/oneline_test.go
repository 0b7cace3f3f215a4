package mcpserver

import "testing"

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
