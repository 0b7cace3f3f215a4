package stages

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"strings"
	"unicode/utf8"
)

// Walker lists the files a reindex considers.
type Walker struct {
	DataFolder  string // absolute, symlinks resolved
	IndexFolder string // absolute, symlinks resolved; never entered
	Exts        map[string]bool
	Glob        *Glob // nil means every file
}

// Walk calls emit with every allowed file under the data folder and stops
// at the first error emit returns. Hidden folders (".git", ".cache") are
// skipped; a symlink is followed only when its target stays inside the data
// folder.
func (w *Walker) Walk(ctx context.Context, emit func(*FileJob) error) error {
	return filepath.WalkDir(w.DataFolder, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			if p == w.DataFolder {
				return err
			}
			return nil // unreadable entry: skip it, keep walking
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		if d.IsDir() {
			if p != w.DataFolder && (p == w.IndexFolder || strings.HasPrefix(d.Name(), ".")) {
				return filepath.SkipDir
			}
			return nil
		}
		ext := strings.ToLower(filepath.Ext(p))
		if !w.Exts[ext] {
			return nil
		}
		rel, err := filepath.Rel(w.DataFolder, p)
		if err != nil {
			return nil
		}
		rel = filepath.ToSlash(rel)
		if w.Glob != nil && !w.Glob.Match(rel) {
			return nil
		}
		fi, err := w.stat(p, d)
		if err != nil || !fi.Mode().IsRegular() {
			return nil
		}
		return emit(&FileJob{Rel: rel, Abs: p, Ext: ext, Size: fi.Size(), Mtime: float64(fi.ModTime().UnixNano()) / 1e9})
	})
}

// stat follows a symlink only when it resolves inside the data folder.
func (w *Walker) stat(p string, d fs.DirEntry) (fs.FileInfo, error) {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.Info()
	}
	target, err := filepath.EvalSymlinks(p)
	if err != nil {
		return nil, err
	}
	if !within(w.DataFolder, target) || within(w.IndexFolder, target) {
		return nil, errors.New("symlink leaves the data folder")
	}
	return os.Stat(target)
}

func within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}

// Glob is a shell pattern relative to the data folder: * and ? stay within a
// path segment, ** spans segments, [...] is a class. A pattern without "/"
// matches the file name in any folder.
type Glob struct {
	pattern string
	re      *regexp.Regexp
}

// ParseGlob checks a path_glob. Patterns that reach outside the data folder
// (absolute, or with a ".." segment) are refused.
func ParseGlob(pattern string) (*Glob, error) {
	if pattern == "" {
		return nil, nil
	}
	clean := pattern
	if path.IsAbs(clean) || filepath.IsAbs(pattern) {
		return nil, fmt.Errorf("path_glob %q must be relative to the data folder", pattern)
	}
	for _, seg := range strings.Split(clean, "/") {
		if seg == ".." {
			return nil, fmt.Errorf("path_glob %q reaches outside the data folder", pattern)
		}
	}
	if _, err := path.Match(strings.ReplaceAll(clean, "**", "*"), ""); err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", pattern, err)
	}
	if !strings.Contains(clean, "/") {
		clean = "**/" + clean
	}
	re, err := regexp.Compile("^" + globRegexp(strings.TrimPrefix(clean, "./")) + "$")
	if err != nil {
		return nil, fmt.Errorf("path_glob %q: %v", pattern, err)
	}
	return &Glob{pattern: pattern, re: re}, nil
}

// Match reports whether a slash-separated relative path matches.
func (g *Glob) Match(rel string) bool { return g == nil || g.re.MatchString(rel) }

func (g *Glob) String() string { return g.pattern }

func globRegexp(p string) string {
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
