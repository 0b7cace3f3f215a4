// Package glob is the path_glob syntax that reindex, list and search's
// filter share: shell patterns relative to the data folder.
package glob

import (
	"fmt"
	"path"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Glob is a shell pattern relative to the data folder: * and ? stay within a
// path segment, ** spans segments, [...] is a class. A pattern without "/"
// matches the file name in any folder.
type Glob struct {
	pattern string
	re      *regexp.Regexp
}

// Parse checks a path_glob. Patterns that reach outside the data folder
// (absolute, or with a ".." segment) are refused.
func Parse(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, nil
	}
	// Compared in NFC on both sides: a name written on macOS is NFD on
	// disk, and the pattern's writer types NFC.
	clean := norm.NFC.String(pattern)
	if path.IsAbs(clean) || filepath.IsAbs(pattern) {
		return nil, fmt.Errorf("path_glob %q must be relative to the data folder", pattern)
	}
	if slices.Contains(strings.Split(clean, "/"), "..") {
		return nil, fmt.Errorf("path_glob %q reaches outside the data folder", pattern)
	}
	if _, err := path.Match(strings.ReplaceAll(clean, "**", "*"), ""); err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", pattern, err)
	}
	if !strings.Contains(clean, "/") {
		clean = "**/" + clean
	}
	re, err := regexp.Compile("^" + regexpOf(strings.TrimPrefix(clean, "./")) + "$")
	if err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", pattern, err)
	}
	return &Glob{pattern: pattern, re: re}, nil
}

// Match reports whether a slash-separated relative path matches.
func (g *Glob) Match(rel string) bool { return g == nil || g.re.MatchString(norm.NFC.String(rel)) }

func (g *Glob) String() string { return g.pattern }

// regexpOf translates a pattern into a regular expression.
func regexpOf(p string) string {
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch c := p[i]; c {
		case '*':
			if strings.HasPrefix(p[i:], "**/") {
				b.WriteString("(?:.*/)?")
				i += 2
			} else if strings.HasPrefix(p[i:], "**") {
				b.WriteString(".*")
				i++
			} else {
				b.WriteString("[^/]*")
			}
		case '?':
			b.WriteString("[^/]")
		case '[':
			j := strings.IndexByte(p[i:], ']')
			if j < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := p[i+1 : i+j]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + class + "]")
			i += j
		case '\\':
			if i+1 < len(p) {
				i++
				b.WriteString(regexp.QuoteMeta(p[i : i+1]))
			}
		default:
			_, size := utf8.DecodeRuneInString(p[i:])
			b.WriteString(regexp.QuoteMeta(p[i : i+size]))
			i += size - 1
		}
	}
	return b.String()
}
