package search

import (
	"strings"
	"testing"
)

// Bad filter arguments are refused with the argument named.
func TestParseFilterErrors(t *testing.T) {
	for _, c := range []struct {
		args FilterArgs
		want string
	}{
		{FilterArgs{PathGlob: "[a-"}, "path_glob"},
		{FilterArgs{PathGlob: "../x"}, "outside the data folder"},
		{FilterArgs{Exts: []string{"*.md"}}, `argument "ext"`},
		{FilterArgs{ModifiedAfter: "yesterday"}, `argument "modified_after" must be an RFC 3339 time`},
		{FilterArgs{ModifiedBefore: "2026-13-01T00:00:00Z"}, `"modified_before"`},
		{FilterArgs{ModifiedAfter: "2026-02-01T00:00:00Z", ModifiedBefore: "2026-01-01T00:00:00Z"}, "must be before"},
	} {
		if f, err := ParseFilter(c.args); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%+v: %v, %v; want an error with %q", c.args, f, err, c.want)
		}
	}
	if f, err := ParseFilter(FilterArgs{}); f != nil || err != nil {
		t.Errorf("no arguments: %v %v, want no filter", f, err)
	}
	f, err := ParseFilter(FilterArgs{Exts: []string{"md", ".PDF", "noext"}})
	if err != nil || strings.Join(f.Exts, ",") != ".md,.pdf," {
		t.Errorf("exts: %v %v", f, err)
	}
}
