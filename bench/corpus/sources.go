package corpus

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"go/ast"
	"go/build"
	"go/doc"
	"go/parser"
	"go/token"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strings"
	"unicode/utf8"
)

// Roots are where Build looks; variables so tests can narrow them. Man
// pages only feed the groff-made PDFs: a machine without them gets those
// PDFs from LibreOffice instead.
var manGlob = "/usr/share/man/man[1578]/*.gz"

// minSourceChars drops stubs (a one-line package comment).
const minSourceChars = 1500

// goDocPrefix marks a text source that is the documentation of one Go
// standard-library package.
const goDocPrefix = "godoc:"

// goSources lists the standard library's package folders. Their doc
// comments are English prose of every length that each machine running
// these benchmarks has (the Go toolchain ships them), identical for one Go
// release, so the corpus no longer depends on what else is installed.
func goSources() ([]string, string, error) {
	root, release := goRoot()
	src := filepath.Join(root, "src")
	var out []string
	err := filepath.WalkDir(src, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() {
			return nil
		}
		if name := d.Name(); p != src && (name == "testdata" || name == "vendor" || strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")) {
			return filepath.SkipDir
		}
		if hasGoFiles(p) {
			out = append(out, goDocPrefix+p)
		}
		return nil
	})
	sort.Strings(out)
	if err == nil && len(out) == 0 {
		err = fmt.Errorf("no Go packages under %s", src)
	}
	return out, release, err
}

// goRoot asks the go command first: the benchmarks run under it, and a
// binary moved away from its toolchain has a stale runtime.GOROOT.
func goRoot() (root, release string) {
	out, err := exec.Command("go", "env", "GOROOT", "GOVERSION").Output()
	if f := strings.Fields(string(out)); err == nil && len(f) == 2 {
		return f[0], f[1]
	}
	return runtime.GOROOT(), runtime.Version()
}

func hasGoFiles(dir string) bool {
	ents, err := os.ReadDir(dir)
	return err == nil && slices.ContainsFunc(ents, func(e os.DirEntry) bool {
		n := e.Name()
		return !e.IsDir() && strings.HasSuffix(n, ".go") && !strings.HasSuffix(n, "_test.go")
	})
}

// readGoDoc renders one package's documentation as plain text: the package
// comment, then each documented constant group, variable group, type,
// function and method under a heading line.
func readGoDoc(dir string) (string, bool) {
	fset := token.NewFileSet()
	ents, err := os.ReadDir(dir)
	if err != nil {
		return "", false
	}
	var files []*ast.File
	for _, e := range ents {
		n := e.Name()
		if e.IsDir() || !strings.HasSuffix(n, ".go") || strings.HasSuffix(n, "_test.go") {
			continue
		}
		// Files for other platforms declare the same names again with other
		// comments, and go/doc keeps whichever it meets last: one platform
		// keeps the text the same from build to build.
		if ok, err := build.Default.MatchFile(dir, n); err != nil || !ok {
			continue
		}
		f, err := parser.ParseFile(fset, filepath.Join(dir, n), nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			continue
		}
		// Commands and packages split by build tags share a folder: keep the
		// package of the first file.
		if len(files) > 0 && f.Name.Name != files[0].Name.Name {
			continue
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return "", false
	}
	pkg, err := doc.NewFromFiles(fset, files, dir)
	if err != nil {
		return "", false
	}
	var sb strings.Builder
	section := func(heading, text string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		if heading != "" {
			sb.WriteString(heading + "\n\n")
		}
		sb.Write(pkg.Text(text))
		sb.WriteString("\n")
	}
	section("", pkg.Doc)
	values := func(kind string, vs []*doc.Value) {
		for _, v := range vs {
			section(kind+" "+strings.Join(v.Names, ", "), v.Doc)
		}
	}
	funcs := func(prefix string, fs []*doc.Func) {
		for _, f := range fs {
			section("func "+prefix+f.Name, f.Doc)
		}
	}
	values("const", pkg.Consts)
	values("var", pkg.Vars)
	funcs("", pkg.Funcs)
	for _, t := range pkg.Types {
		section("type "+t.Name, t.Doc)
		values("const", t.Consts)
		values("var", t.Vars)
		funcs("", t.Funcs)
		funcs("("+t.Name+") ", t.Methods)
	}
	text := sb.String()
	if !utf8.ValidString(text) || len(text) < minSourceChars {
		return "", false
	}
	return text, true
}

// readRoff returns a man page's roff source, skipping ".so" redirections.
func readRoff(path string) ([]byte, bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, false
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, false
	}
	b, err := io.ReadAll(io.LimitReader(zr, 1<<20))
	if err != nil || bytes.HasPrefix(b, []byte(".so ")) || len(b) < 2000 {
		return nil, false
	}
	return b, true
}

// Slug is s lower-cased for a file name: every character but a-z and 0-9
// a dash, none at either end.
func Slug(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	return strings.Trim(sb.String(), "-")
}

func sourceName(path string) string {
	base := filepath.Base(path)
	if dir, ok := strings.CutPrefix(path, goDocPrefix); ok {
		base = "go-" + filepath.Base(dir)
	}
	s := Slug(strings.TrimSuffix(base, ".gz"))
	return s[:min(40, len(s))]
}
