package ignore

import (
	"slices"
	"strings"
	"testing"
)

// refMatchSegs is the matcher as it was before it became linear: plain
// recursion, exponential in the number of "**" segments, so only for
// small inputs. It takes the segments as a pattern line spells them.
func refMatchSegs(segs, parts []string) bool {
	if len(segs) == 0 {
		return len(parts) == 0
	}
	if segs[0] == "**" {
		if len(segs) == 1 {
			return len(parts) > 0
		}
		for i := range len(parts) {
			if refMatchSegs(segs[1:], parts[i:]) {
				return true
			}
		}
		return false
	}
	return len(parts) > 0 && segMatch(segs[0], parts[0]) && refMatchSegs(segs[1:], parts[1:])
}

// FuzzMatchSegs checks the linear matcher against the recursive one.
func FuzzMatchSegs(f *testing.F) {
	for _, s := range [][2]string{
		{"**/b", "a/b"}, {"**/b", "b"}, {"a/**", "a"}, {"a/**", "a/b/c"}, {"a/**/b", "a/b"},
		{"a/**/b", "a/x/y/b"}, {"**/**/x", "x"}, {"a/**/**", "a/b"}, {"a/**/**", "a"},
		{"*/b/**/c", "z/b/c"}, {"[!a]/**", "b/c"}, {"**", "a"}, {"a/**/b/**/c", "a/b/x/b/c"},
		{"**/a/**/a/b", "a/a/a/a/b"}, {"x**/y", "xz/y"}, {"a//b", "a/b"}, {"**/", "a"},
	} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, rel string) {
		segs, parts := strings.Split(pattern, "/"), strings.Split(rel, "/")
		if len(segs) > 12 || len(parts) > 12 || slices.Contains(parts, "") {
			t.Skip() // the reference is exponential; a path has no empty segment
		}
		got, _ := matchSegs(compileSegs(segs), parts)
		if want := refMatchSegs(segs, parts); got != want {
			t.Errorf("%q against %q: %v, the recursive matcher says %v", pattern, rel, got, want)
		}
	})
}

// TestMatchStepsBounded counts the matcher's steps on patterns that made
// the recursive matcher exponential, and holds them to a small multiple of
// pattern segments times path segments. Steps, not time, so the bound is
// the same on any machine.
func TestMatchStepsBounded(t *testing.T) {
	deep := slices.Repeat([]string{"a"}, 30)
	alternating := strings.Repeat("**/a/", 10) + "**/x"
	for _, c := range []struct {
		line  string
		parts []string
		want  bool
	}{
		{strings.Repeat("**/", 10) + "b", deep, false},
		{strings.Repeat("**/", 20) + "b", deep, false},
		{strings.Repeat("**/", 20) + "b", append(slices.Clone(deep), "b"), true},
		{"/" + strings.Repeat("**/", 20) + "a", deep, true},
		{alternating, deep, false},
		{alternating, append(slices.Clone(deep), "x"), true},
		{"a/" + strings.Repeat("*/**/", 12) + "**", deep, true},
	} {
		p, ok := parseLine(c.line)
		if !ok || !p.anchored {
			t.Fatalf("%q did not parse as an anchored pattern", c.line)
		}
		got, steps := matchSegs(p.segs, c.parts)
		if got != c.want {
			t.Errorf("%q against %d segments: %v, want %v", c.line, len(c.parts), got, c.want)
		}
		raw := strings.Count(strings.Trim(c.line, "/"), "/") + 1
		if limit := 2 * (raw + 1) * (len(c.parts) + 1); steps > limit {
			t.Errorf("%q against %d segments: %d steps, over %d", c.line, len(c.parts), steps, limit)
		}
	}
}
