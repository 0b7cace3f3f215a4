// Package ignore decides which paths under a data folder stay out of the
// index: .gitignore and .micro-rag-ignore files with git's nesting rules,
// --exclude patterns, and built-in skips (hidden folders, node_modules).
//
// The matcher is our own, checked against git itself (ls-files and
// check-ignore) over generated trees. go-git's plumbing/format/gitignore
// failed that check three ways: "dir/**" matched dir itself, a name pattern
// such as "!dir/" matched every path below dir, and an anchored pattern
// matched every path below it, so negations re-included files git ignores.
package ignore

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"slices"
	"strings"
	"sync"

	"github.com/micro-rag/micro-rag-mcp/internal/confine"
)

// Names of the files that hold rules. In one folder .micro-rag-ignore is
// read after .gitignore, so its lines win.
const (
	GitIgnoreFile = ".gitignore"
	RuleFile      = ".micro-rag-ignore"
)

// IsRuleFile reports whether a file name (base name) holds ignore rules, so
// a change to it changes which files are indexed.
func IsRuleFile(name string) bool { return name == GitIgnoreFile || name == RuleFile }

// BuiltinSkip reports whether a folder is skipped whatever the rules say:
// hidden folders (".git", ".cache", ...) and node_modules.
func BuiltinSkip(dirName string) bool {
	return strings.HasPrefix(dirName, ".") || dirName == "node_modules"
}

// Rules answers "is this path ignored?" for one data folder. Rule files are
// read on first use of their folder and cached, so build a new Rules when
// files may have changed (each reindex run does). Safe for concurrent use.
//
// A rule file that exists but cannot be read as rules fails closed: every
// path below its folder counts as ignored, and Err says why.
type Rules struct {
	root     string    // absolute, symlinks resolved
	excludes []pattern // from --exclude; they win over files

	mu   sync.Mutex
	dirs map[string]folderRules // slash-separated rel dir ("" for the top)
}

// folderRules is what one folder's rule files say, or why they cannot be read.
type folderRules struct {
	ps  []pattern
	err error // a *FileError
}

// FileError is a rule file that exists but cannot be used: unreadable, not
// a regular file, a link leading outside the data folder, or over the size
// cap. Everything below its folder counts as ignored until it is fixed, so
// a broken file never lets in what it might have excluded.
type FileError struct {
	Path string // the rule file, slash-separated, relative to the data folder
	Err  error
}

func (e *FileError) Error() string {
	scope := "the data folder"
	if dir := path.Dir(e.Path); dir != "." {
		scope = dir + "/"
	}
	return fmt.Sprintf("ignore file %s cannot be used (%v), so nothing in %s is indexed until it is fixed", e.Path, e.Err, scope)
}

func (e *FileError) Unwrap() error { return e.Err }

// New returns the rules for root (absolute, symlinks resolved, as links in
// it are judged against it), with excludes given in gitignore syntax
// relative to root. A malformed exclude pattern is an error.
func New(root string, excludes []string) (*Rules, error) {
	r := &Rules{root: root, dirs: map[string]folderRules{}}
	for _, e := range excludes {
		if err := CheckPattern(e); err != nil {
			return nil, err
		}
		if p, ok := parseLine(e); ok {
			r.excludes = append(r.excludes, p)
		}
	}
	return r, nil
}

// CheckPattern reports a pattern that can never match because its glob is
// malformed (an unclosed "[", a trailing "\").
func CheckPattern(p string) error {
	body := strings.TrimPrefix(strings.TrimSpace(p), "!")
	if strings.Trim(body, "/") == "" {
		return fmt.Errorf("exclude pattern %q is empty", p)
	}
	for _, seg := range strings.Split(strings.Trim(body, "/"), "/") {
		if _, err := path.Match(gitClass(seg), ""); err != nil {
			return fmt.Errorf("exclude pattern %q: %v", p, err)
		}
	}
	return nil
}

// Ignored reports whether rel (slash-separated, relative to the root) is
// left out, checking each parent folder first: as in git, nothing inside
// an ignored folder can be re-included.
func (r *Rules) Ignored(rel string, isDir bool) bool {
	parts := strings.Split(rel, "/")
	for i := 1; i < len(parts); i++ {
		if BuiltinSkip(parts[i-1]) || r.match(parts[:i], true) {
			return true
		}
	}
	if isDir && BuiltinSkip(parts[len(parts)-1]) {
		return true
	}
	return r.match(parts, isDir)
}

// Match reports whether rel itself matches the rules, assuming its parent
// folders are not ignored (a walker that prunes ignored folders knows so).
// Built-in skips are not applied here.
func (r *Rules) Match(rel string, isDir bool) bool {
	return r.match(strings.Split(rel, "/"), isDir)
}

// Err returns the *FileError of the rule files of folder dir (slash-
// separated, "." or "" for the top), or nil when they are fine or absent.
func (r *Rules) Err(dir string) error {
	if dir == "." {
		dir = ""
	}
	return r.folder(dir).err
}

func (r *Rules) match(parts []string, isDir bool) bool {
	// The deepest folder's rules win; a folder's own rules never apply to
	// the folder itself. Every folder above is still read: one whose rule
	// files are broken hides what is below it, whatever else says.
	decided, ignored := false, false
	for depth := len(parts) - 1; depth >= 0; depth-- {
		fr := r.folder(strings.Join(parts[:depth], "/"))
		if fr.err != nil {
			return true
		}
		if !decided {
			decided, ignored = decide(fr.ps, parts[depth:], isDir)
		}
	}
	if ok, excluded := decide(r.excludes, parts, isDir); ok {
		return excluded
	}
	return ignored
}

// decide applies one list of patterns, last line first; ok is false when
// none matches.
func decide(ps []pattern, parts []string, isDir bool) (ok, ignored bool) {
	for i := len(ps) - 1; i >= 0; i-- {
		if ps[i].match(parts, isDir) {
			return true, !ps[i].negated
		}
	}
	return false, false
}

// folder returns the rules of one folder, reading its rule files once.
func (r *Rules) folder(key string) folderRules {
	r.mu.Lock()
	defer r.mu.Unlock()
	if fr, ok := r.dirs[key]; ok {
		return fr
	}
	fr := r.read(key)
	r.dirs[key] = fr
	return fr
}

func (r *Rules) read(key string) folderRules {
	root, err := os.OpenRoot(r.root)
	if err != nil {
		return folderRules{err: &FileError{Path: path.Join(key, GitIgnoreFile), Err: err}}
	}
	defer root.Close()
	var fr folderRules
	for _, name := range []string{GitIgnoreFile, RuleFile} {
		name = path.Join(key, name)
		b, err := readRuleFile(root, r.root, name)
		if err != nil {
			return folderRules{err: &FileError{Path: name, Err: err}}
		}
		// Git skips a UTF-8 byte-order mark; left in, it would spoil the
		// first pattern.
		b = bytes.TrimPrefix(b, []byte("\ufeff"))
		for line := range strings.SplitSeq(string(b), "\n") {
			if p, ok := parseLine(line); ok {
				fr.ps = append(fr.ps, p)
			}
		}
	}
	return fr
}

// maxRuleFile bounds what one rule file may make us read; a larger one is
// an error, never read in part.
const maxRuleFile = 4 << 20

var errTooBig = fmt.Errorf("larger than the %d MiB limit for a rule file", maxRuleFile>>20)

// readRuleFile reads a rule file through the data folder's root (dir is
// its path), nil when there is none. Anything else that is not a regular
// file inside the folder, readable whole, is an error: a FIFO among them,
// refused without waiting for a writer.
func readRuleFile(root *os.Root, dir, name string) ([]byte, error) {
	f, fi, err := confine.OpenRegular(root, dir, name)
	if errors.Is(err, fs.ErrNotExist) {
		if _, lerr := root.Lstat(name); errors.Is(lerr, fs.ErrNotExist) {
			return nil, nil
		}
		return nil, errors.New("a symlink to nothing")
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > maxRuleFile {
		return nil, errTooBig
	}
	b, err := io.ReadAll(io.LimitReader(f, maxRuleFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxRuleFile {
		return nil, errTooBig // it grew while we read
	}
	return b, nil
}

// pattern is one gitignore line.
type pattern struct {
	segs     []string // split at "/"; a "**" segment spans folders
	negated  bool     // "!": re-include
	dirOnly  bool     // trailing "/": folders only
	anchored bool     // held a "/" before its end: matched from the rule file's folder
}

// parseLine reads one gitignore line; blank lines and comments give none.
func parseLine(line string) (pattern, bool) {
	line = strings.TrimSuffix(line, "\r")
	if strings.HasPrefix(line, "#") {
		return pattern{}, false
	}
	// Trailing spaces go unless escaped with a backslash.
	for strings.HasSuffix(line, " ") && !strings.HasSuffix(line, "\\ ") {
		line = line[:len(line)-1]
	}
	var p pattern
	line, p.negated = strings.CutPrefix(line, "!")
	line, p.dirOnly = strings.CutSuffix(line, "/")
	if strings.Contains(line, "/") {
		p.anchored = true
		line = strings.TrimPrefix(line, "/")
	}
	if line == "" {
		return pattern{}, false
	}
	p.segs = strings.Split(gitClass(line), "/")
	if p.anchored {
		p.segs = compileSegs(p.segs)
	}
	return p, true
}

// match reports whether the pattern names parts, a path relative to the
// folder of its rule file.
func (p pattern) match(parts []string, isDir bool) bool {
	if p.dirOnly && !isDir {
		return false
	}
	if !p.anchored {
		return segMatch(p.segs[0], parts[len(parts)-1])
	}
	ok, _ := matchSegs(p.segs, parts)
	return ok
}

// compileSegs rewrites an anchored pattern's segments so that "**" always
// means "zero or more segments": a run of "**" is one, and a trailing "**"
// (one or more: "dir/**" is what is inside dir, not dir) becomes "*/**".
func compileSegs(segs []string) []string {
	bothStars := func(a, b string) bool { return a == "**" && b == "**" }
	out := slices.CompactFunc(append(make([]string, 0, len(segs)+1), segs...), bothStars)
	if out[len(out)-1] == "**" {
		out = append(out[:len(out)-1], "*", "**")
	}
	return out
}

// matchSegs matches compiled segments against path segments, "**" being a
// star over whole segments. Backtracking only to the latest "**" suffices
// (an earlier one can never need to take more), so it takes at most about
// len(segs)·len(parts) steps where plain recursion took exponentially many.
// steps counts loop turns, for the test that bounds them.
func matchSegs(segs, parts []string) (ok bool, steps int) {
	si, pi := 0, 0
	star, resume := -1, 0 // the latest "**", and the part it would take next
	for pi < len(parts) {
		steps++
		switch {
		case si < len(segs) && segs[si] == "**":
			star, resume = si, pi
			si++
		case si < len(segs) && segMatch(segs[si], parts[pi]):
			si++
			pi++
		case star >= 0:
			resume++
			si, pi = star+1, resume
		default:
			return false, steps
		}
	}
	for si < len(segs) && segs[si] == "**" {
		si++
		steps++
	}
	return si == len(segs), steps
}

// segMatch matches one path segment; "*" and "?" never cross a "/" here.
func segMatch(pat, name string) bool {
	ok, err := path.Match(pat, name)
	return err == nil && ok
}

// gitClass rewrites git's negated class "[!...]" as "[^...]", the only
// spelling Go's path matching knows.
func gitClass(p string) string {
	if !strings.Contains(p, "[!") {
		return p
	}
	var b strings.Builder
	for i := 0; i < len(p); i++ {
		switch {
		case p[i] == '\\' && i+1 < len(p):
			b.WriteString(p[i : i+2])
			i++
		case p[i] == '[' && i+1 < len(p) && p[i+1] == '!':
			b.WriteString("[^")
			i++
		default:
			b.WriteByte(p[i])
		}
	}
	return b.String()
}
