package corpus

import (
	"bytes"
	"compress/gzip"
	"context"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"unicode/utf8"
)

// Source is one real text found on the machine.
type Source struct {
	Name string // short, file-name safe
	Path string
	Text string
}

// Roots are where Sources looks; variables so tests can narrow them.
var (
	licenseGlob = "/usr/share/common-licenses/*"
	docGlobs    = []string{
		"/usr/share/doc/*/copyright",
		"/usr/share/doc/*/README",
		"/usr/share/doc/*/README.gz",
		"/usr/share/doc/*/README.md",
		"/usr/share/doc/*/README.md.gz",
		"/usr/share/doc/*/NEWS.gz",
		"/usr/share/doc/*/NEWS.Debian.gz",
		"/usr/share/doc/*/changelog.gz",
	}
	manGlob = "/usr/share/man/man[1578]/*.gz"
)

// minSourceChars drops stubs ("see /usr/share/common-licenses/GPL").
const minSourceChars = 1500

// candidates lists source files in a stable order, with symlinks resolved
// and duplicates removed, so the same machine state gives the same list.
func candidates(globs []string) []string {
	seen := map[string]bool{}
	var out []string
	for _, g := range globs {
		m, _ := filepath.Glob(g)
		for _, p := range m {
			real, err := filepath.EvalSymlinks(p)
			if err != nil || seen[real] {
				continue
			}
			if fi, err := os.Stat(real); err != nil || !fi.Mode().IsRegular() {
				continue
			}
			seen[real] = true
			out = append(out, real)
		}
	}
	sort.Strings(out)
	return out
}

// readPlain reads a text file, gunzipping .gz, and keeps it only if it is
// valid UTF-8 prose of a useful length.
func readPlain(path string) (string, bool) {
	b, err := os.ReadFile(path)
	if err != nil {
		return "", false
	}
	if strings.HasSuffix(path, ".gz") {
		zr, err := gzip.NewReader(bytes.NewReader(b))
		if err != nil {
			return "", false
		}
		if b, err = io.ReadAll(io.LimitReader(zr, 4<<20)); err != nil {
			return "", false
		}
	}
	if !utf8.Valid(b) || bytes.IndexByte(b, 0) >= 0 || len(b) < minSourceChars {
		return "", false
	}
	return strings.ReplaceAll(string(b), "\r\n", "\n"), true
}

// renderMan formats a man page source as plain UTF-8 text with groff.
func renderMan(ctx context.Context, path string) (string, bool) {
	src, ok := readRoff(path)
	if !ok {
		return "", false
	}
	cmd := exec.CommandContext(ctx, "groff", "-mandoc", "-t", "-Tutf8", "-P-cbou")
	cmd.Stdin = bytes.NewReader(src)
	cmd.Env = append(os.Environ(), "MANWIDTH=80")
	out, err := cmd.Output()
	if err != nil || !utf8.Valid(out) || len(out) < minSourceChars {
		return "", false
	}
	return string(out), true
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

func sourceName(path string) string {
	base := filepath.Base(path)
	if strings.HasPrefix(path, "/usr/share/doc/") {
		base = filepath.Base(filepath.Dir(path)) + "-" + base
	}
	base = strings.TrimSuffix(base, ".gz")
	var sb strings.Builder
	for _, r := range strings.ToLower(base) {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			sb.WriteRune(r)
		default:
			sb.WriteByte('-')
		}
	}
	s := strings.Trim(sb.String(), "-")
	if len(s) > 40 {
		s = s[:40]
	}
	return s
}
