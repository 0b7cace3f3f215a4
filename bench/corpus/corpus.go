// Package corpus builds seeded, reproducible document folders for the
// benchmarks out of real text every such machine has: the documentation of
// Go's standard library, from the toolchain that runs the benchmarks. PDF
// and DOCX files are made by real tools:
// LibreOffice (one batched call per format) and groff. Built folders are
// cached, so only the first benchmark run pays for them; nothing is
// committed to the repository.
package corpus

import (
	"bytes"
	"cmp"
	"context"
	"encoding/csv"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"html"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"time"
)

// generatorVersion changes whenever the same Config would build different
// files; cached corpora of another version are rebuilt.
const generatorVersion = 2

// MetaFile is written last into a finished corpus folder; it describes it.
const MetaFile = "corpus.json"

// Mtime is the modification time of every generated file, so two builds of
// one Config are identical on disk.
var Mtime = time.Date(2024, 1, 2, 3, 4, 5, 0, time.UTC)

// Config describes one corpus.
type Config struct {
	Seed  uint64
	Files int
	// Exts is the mix: each file draws its type uniformly from this list,
	// so repeat an extension to weight it. Supported: .txt .md .html .csv
	// .pdf .docx. Empty means DefaultExts.
	Exts []string
	// Text per file in bytes, log-uniform in [MinChars, MaxChars]; PDFs
	// made by groff hold a whole man page instead. Zero means 300..20000.
	MinChars, MaxChars int
	// Root is the cache folder holding corpora; "" means CacheRoot().
	Root string
}

// DefaultExts is the mix of the product's default file types.
var DefaultExts = []string{".txt", ".txt", ".txt", ".md", ".md", ".md", ".pdf", ".pdf", ".docx", ".docx"}

// CacheRoot is ${XDG_CACHE_HOME:-~/.cache}/micro-rag-mcp/bench-corpus.
func CacheRoot() string {
	base := os.Getenv("XDG_CACHE_HOME")
	if base == "" {
		home, _ := os.UserHomeDir()
		base = filepath.Join(home, ".cache")
	}
	return filepath.Join(base, "micro-rag-mcp", "bench-corpus")
}

func (c Config) withDefaults() Config {
	if len(c.Exts) == 0 {
		c.Exts = DefaultExts
	}
	if c.MinChars <= 0 {
		c.MinChars = 300
	}
	if c.MaxChars < c.MinChars {
		c.MaxChars = max(20000, c.MinChars)
	}
	c.Root = cmp.Or(c.Root, CacheRoot())
	return c
}

type meta struct {
	Version  int      `json:"version"`
	Seed     uint64   `json:"seed"`
	Files    int      `json:"files"`
	Exts     []string `json:"exts"`
	MinChars int      `json:"min_chars"`
	MaxChars int      `json:"max_chars"`
	Sources  uint64   `json:"sources"` // hash of the source file list
	Bytes    int64    `json:"bytes"`   // total size of the generated files
	Counts   map[string]int
}

// Name is the cache folder name: <seed>-<files>, plus a short hash when the
// mix or sizes differ from the defaults.
func (c Config) Name() string {
	c = c.withDefaults()
	name := fmt.Sprintf("%d-%d", c.Seed, c.Files)
	if !slices.Equal(c.Exts, DefaultExts) || c.MinChars != 300 || c.MaxChars != 20000 {
		h := fnv.New32a()
		fmt.Fprintf(h, "%v/%d/%d", c.Exts, c.MinChars, c.MaxChars)
		name += fmt.Sprintf("-%08x", h.Sum32())
	}
	return name
}

// Corpus is a built folder.
type Corpus struct {
	Dir    string
	Bytes  int64          // total size of the documents
	Counts map[string]int // files per extension
}

// Build returns the corpus for cfg, generating it under cfg.Root unless a
// finished copy from the same generator and sources is already there.
func Build(ctx context.Context, cfg Config) (Corpus, error) {
	cfg = cfg.withDefaults()
	if cfg.Files <= 0 {
		return Corpus{}, errors.New("corpus: Files must be positive")
	}
	for _, e := range cfg.Exts {
		if !slices.Contains([]string{".txt", ".md", ".html", ".csv", ".pdf", ".docx"}, e) {
			return Corpus{}, fmt.Errorf("corpus: unsupported extension %q", e)
		}
	}
	plain, release, err := goSources()
	if err != nil {
		return Corpus{}, fmt.Errorf("corpus: Go documentation: %w", err)
	}
	// Man pages are many (~20k): globbed only, checked when drawn.
	mans, _ := filepath.Glob(manGlob)
	sort.Strings(mans)
	want := meta{Version: generatorVersion, Seed: cfg.Seed, Files: cfg.Files, Exts: cfg.Exts,
		MinChars: cfg.MinChars, MaxChars: cfg.MaxChars, Sources: listHash([]string{release}, plain, mans)}
	dir := filepath.Join(cfg.Root, cfg.Name())
	var got meta
	b, err := os.ReadFile(filepath.Join(dir, MetaFile))
	if err == nil && json.Unmarshal(b, &got) == nil && got.Version == want.Version && got.Sources == want.Sources &&
		got.Seed == want.Seed && got.Files == want.Files && slices.Equal(got.Exts, want.Exts) &&
		got.MinChars == want.MinChars && got.MaxChars == want.MaxChars {
		return Corpus{Dir: dir, Bytes: got.Bytes, Counts: got.Counts}, nil
	}
	g := &generator{cfg: cfg, rng: rand.New(rand.NewPCG(cfg.Seed, 0x5eed)), plain: plain, mans: mans, texts: map[string]string{}}
	err = Publish(dir, func(out, stage string) (any, error) {
		g.out, g.stage = out, stage
		m, err := g.run(ctx)
		want.Bytes, want.Counts = m.Bytes, m.Counts
		return want, err
	})
	return Corpus{Dir: dir, Bytes: want.Bytes, Counts: want.Counts}, err
}

// Publish makes the folder dir: fill writes its files under out, with
// stage as scratch space, and returns the description that goes to
// MetaFile, written last; the finished folder then replaces dir.
func Publish(dir string, fill func(out, stage string) (meta any, err error)) error {
	if err := os.MkdirAll(filepath.Dir(dir), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dir), ".build-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	out := filepath.Join(tmp, "corpus")
	meta, err := fill(out, filepath.Join(tmp, "stage"))
	if err != nil {
		return err
	}
	b, _ := json.MarshalIndent(meta, "", "  ")
	if err := WriteFile(filepath.Join(out, MetaFile), b); err != nil {
		return err
	}
	if err := os.RemoveAll(dir); err != nil {
		return err
	}
	return os.Rename(out, dir)
}

func listHash(lists ...[]string) uint64 {
	h := fnv.New64a()
	for _, l := range lists {
		for _, p := range l {
			h.Write([]byte(p))
			h.Write([]byte{0})
		}
	}
	return h.Sum64()
}

type generator struct {
	cfg        Config
	rng        *rand.Rand
	plain      []string
	mans       []string
	texts      map[string]string // path → text, loaded on first use
	out, stage string
	convert    map[string][]Conversion // target ext → files for LibreOffice
	groff      []converted             // man page → PDF
	bytes      int64
	counts     map[string]int
}

type converted struct{ src, dst string }

func (g *generator) run(ctx context.Context) (meta, error) {
	g.convert = map[string][]Conversion{}
	g.counts = map[string]int{}
	// Draw every decision first, in one fixed order, so the files depend on
	// the seed alone and not on which tools ran.
	for i := range g.cfg.Files {
		ext := g.cfg.Exts[g.rng.IntN(len(g.cfg.Exts))]
		sub := filepath.Join(fmt.Sprintf("d%02d", g.rng.IntN(8)), fmt.Sprintf("e%02d", g.rng.IntN(8)))
		if ext == ".pdf" && len(g.mans) > 0 && g.rng.IntN(2) == 0 {
			// Stubs (".so" redirects, tiny pages) pass to the next page.
			j := g.rng.IntN(len(g.mans))
			for k := 0; k < 50; k++ {
				if _, ok := readRoff(g.mans[(j+k)%len(g.mans)]); ok {
					j = (j + k) % len(g.mans)
					break
				}
			}
			man := g.mans[j]
			dst := filepath.Join(g.out, sub, fmt.Sprintf("f%05d-man-%s.pdf", i, sourceName(man)))
			g.groff = append(g.groff, converted{man, dst})
			g.counts[ext]++
			continue
		}
		src, text := g.window()
		dst := filepath.Join(g.out, sub, fmt.Sprintf("f%05d-%s%s", i, sourceName(src), ext))
		if err := g.write(ext, dst, src, text); err != nil {
			return meta{}, err
		}
		g.counts[ext]++
	}
	if err := g.runGroff(ctx); err != nil {
		return meta{}, err
	}
	for _, ext := range []string{".pdf", ".docx"} {
		if err := ConvertOffice(ctx, g.stage, ext, TextFilter, g.convert[ext]); err != nil {
			return meta{}, err
		}
	}
	err := filepath.WalkDir(g.out, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		g.bytes += fi.Size()
		return os.Chtimes(p, Mtime, Mtime)
	})
	return meta{Bytes: g.bytes, Counts: g.counts}, err
}

// window picks a source and a paragraph-aligned slice of it of a
// log-uniform length.
func (g *generator) window() (string, string) {
	for {
		src := g.plain[g.rng.IntN(len(g.plain))]
		want := int(float64(g.cfg.MinChars) * math.Pow(float64(g.cfg.MaxChars)/float64(g.cfg.MinChars), g.rng.Float64()))
		start := g.rng.Float64()
		text, ok := g.texts[src]
		if !ok {
			text, _ = readGoDoc(strings.TrimPrefix(src, goDocPrefix)) // "" when unusable
			g.texts[src] = text
		}
		if text == "" {
			continue
		}
		if len(text) <= want {
			return src, text
		}
		from := int(start * float64(len(text)-want))
		if i := strings.Index(text[from:], "\n\n"); i >= 0 && from+i+2+want <= len(text) {
			from += i + 2
		} else if i := strings.IndexByte(text[from:], '\n'); i >= 0 && from+i+1+want <= len(text) {
			from += i + 1
		}
		to := from + want
		if j := strings.LastIndexAny(text[from:to], "\n "); j > want/2 {
			to = from + j
		}
		return src, strings.ToValidUTF8(text[from:to], "")
	}
}

func (g *generator) write(ext, dst, src, text string) error {
	switch ext {
	case ".md":
		text = markdown(src, text)
	case ".html":
		text = htmlDoc(src, text)
	case ".csv":
		text = csvDoc(text)
	case ".pdf", ".docx": // staged as text, converted by LibreOffice later
		staged := filepath.Join(g.stage, ext[1:], fmt.Sprintf("s%05d.txt", len(g.convert[ext])))
		g.convert[ext] = append(g.convert[ext], Conversion{staged, dst})
		dst = staged
	}
	return WriteFile(dst, []byte(text))
}

// WriteFile writes b to path, making its folder.
func WriteFile(path string, b []byte) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}

func paragraphs(text string) []string {
	var out []string
	for p := range strings.SplitSeq(text, "\n\n") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

func markdown(src, text string) string {
	var sb strings.Builder
	fmt.Fprintf(&sb, "# %s\n\n", sourceName(src))
	for i, p := range paragraphs(text) {
		if i > 0 && i%4 == 0 {
			fmt.Fprintf(&sb, "## Part %d\n\n", i/4+1)
		}
		sb.WriteString(p)
		sb.WriteString("\n\n")
	}
	return sb.String()
}

func htmlDoc(src, text string) string {
	var sb strings.Builder
	name := html.EscapeString(sourceName(src))
	fmt.Fprintf(&sb, "<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>%s</title></head>\n<body>\n<h1>%s</h1>\n", name, name)
	for _, p := range paragraphs(text) {
		fmt.Fprintf(&sb, "<p>%s</p>\n", html.EscapeString(p))
	}
	sb.WriteString("</body></html>\n")
	return sb.String()
}

func csvDoc(text string) string {
	var buf strings.Builder
	w := csv.NewWriter(&buf)
	w.Write([]string{"line", "words", "text"})
	for i, l := range strings.Split(text, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			w.Write([]string{fmt.Sprint(i + 1), fmt.Sprint(len(strings.Fields(l))), l})
		}
	}
	w.Flush()
	return buf.String()
}

// runGroff typesets man pages straight to PDF.
func (g *generator) runGroff(ctx context.Context) error {
	for _, c := range g.groff {
		src, ok := readRoff(c.src)
		if !ok {
			return fmt.Errorf("corpus: man page %s is unreadable", c.src)
		}
		cmd := exec.CommandContext(ctx, "groff", "-mandoc", "-t", "-Tpdf")
		cmd.Stdin = bytes.NewReader(src)
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			return fmt.Errorf("corpus: groff -Tpdf %s: %v: %s", c.src, err, stderr.String())
		}
		if err := WriteFile(c.dst, out); err != nil {
			return err
		}
	}
	return nil
}

// LibreOffice import filters for ConvertOffice: plain UTF-8 text, or HTML
// opened as a Writer document (so h1..h3 become heading styles).
const (
	TextFilter = "Text (encoded):UTF8,LF,Liberation Serif,en-US"
	HTMLFilter = "HTML (StarWriter)"
)

// Conversion is one file for ConvertOffice: Src is read, Dst is written.
type Conversion struct{ Src, Dst string }

// ConvertOffice converts files to ext (".pdf" or ".docx") in one LibreOffice
// call: its start-up costs seconds, the conversions a fraction each. work is
// a scratch folder for LibreOffice's profile and output; the base names of
// the sources must be distinct.
func ConvertOffice(ctx context.Context, work, ext, infilter string, files []Conversion) error {
	if len(files) == 0 {
		return nil
	}
	// The profile is a file: URL, which LibreOffice needs absolute (with a
	// relative one it waits forever).
	work, err := filepath.Abs(work)
	if err != nil {
		return err
	}
	outDir := filepath.Join(work, "out"+ext)
	profile := filepath.Join(work, "lo-profile")
	filter := map[string]string{".pdf": "pdf:writer_pdf_Export", ".docx": "docx:MS Word 2007 XML"}[ext]
	if filter == "" {
		return fmt.Errorf("corpus: LibreOffice cannot make %q", ext)
	}
	args := []string{"-env:UserInstallation=file://" + profile, "--headless", "--norestore",
		"--infilter=" + infilter, "--convert-to", filter, "--outdir", outDir}
	for _, f := range files {
		args = append(args, f.Src)
	}
	cmd := exec.CommandContext(ctx, "soffice", args...)
	cmd.Env = append(os.Environ(), "HOME="+work)
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("corpus: soffice --convert-to %s (install with scripts/bench-setup.sh): %v: %s", ext, err, LastLines(out.String(), 5))
	}
	for _, f := range files {
		made := filepath.Join(outDir, strings.TrimSuffix(filepath.Base(f.Src), filepath.Ext(f.Src))+ext)
		if err := os.MkdirAll(filepath.Dir(f.Dst), 0o755); err != nil {
			return err
		}
		if err := os.Rename(made, f.Dst); err != nil {
			return fmt.Errorf("corpus: soffice made no %s for %s: %v: %s", ext, f.Src, err, LastLines(out.String(), 5))
		}
	}
	return nil
}

// LastLines is the last n lines of a tool's output, for an error message.
func LastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(0, len(lines)-n):], "\n")
}
