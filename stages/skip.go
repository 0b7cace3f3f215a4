package stages

import (
	"fmt"
	"slices"
	"sync"

	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Why a file the walk saw holds no text in the index. Failures (a file
// that should have been read and could not) are reported apart, as Failed.
const (
	SkipNotEnabled = "extension_not_enabled" // a reader exists; the extension is not in the list
	SkipNoReader   = "no_reader"             // no reader for the file type
	SkipBinary     = "binary"                // not text
	SkipCompressed = "compressed"            // compressed or archived: not opened
	SkipNoText     = "no_text"               // read, but no text in it (an image-only PDF, an empty file)
	SkipLargeTable = "table_too_large"       // a CSV or TSV file over Walker.TableCap
	SkipBrokenLink = "broken_link"           // a symbolic link whose target does not exist
	SkipOutside    = "link_outside"          // a symbolic link leading outside the data folder
)

// skipOrder is the order groups are reported in.
var skipOrder = []string{SkipNoText, SkipBrokenLink, SkipOutside, SkipNotEnabled, SkipLargeTable, SkipNoReader, SkipCompressed, SkipBinary}

// skipNotes say what a reason means and what to do about it.
var skipNotes = map[string]string{
	SkipNotEnabled: "a reader exists but the extension is not in the list; add it with --add-exts",
	SkipNoReader:   "no reader for these file types",
	SkipLargeTable: fmt.Sprintf("CSV and TSV files over the size cap (--max-table-kib, %d by default) are not indexed: such a table is a data export rather than a document, and takes minutes to embed; raise the cap to index them", DefaultTableCap>>10),
	SkipBinary:     "not text",
	SkipCompressed: "compressed or archived files are not opened; unpack them into the folder to index them (gzip-compressed documents, such as README.gz, are read with --add-exts .gz)",
	SkipBrokenLink: "symbolic links whose target does not exist (moved, renamed or deleted): point them at the file, or remove them",
	SkipOutside:    "symbolic links leading outside the data folder are not followed, so that reads stay inside it: copy or move the file into the folder",
	SkipNoText:     "read, but no text found: an empty file, or a PDF whose pages are images (a scan); OCR is not available",
}

// DefaultTableCap is the largest CSV or TSV file a reindex reads: tables
// are indexed by default, and one over the cap is reported as
// SkipLargeTable. A 256 KiB sales export (7 columns, 4,400 rows) made
// 1,246 chunks, so the cap's 512 KiB is about 2,500 chunks: 100 s of
// embedding at the 25 chunks/s of two cores (BENCHMARKS.md, EmbedRaw),
// where a folder of notes takes seconds. The reindex of that 256 KiB file
// peaked at 847 MB RSS (three small notes: 236 MB), and took 31 minutes on
// two cores shared with five other engineers' builds and tests.
const DefaultTableCap = 512 << 10

// IsTable reports whether ext (lower case, with its dot) is a delimited
// table, which TableCap bounds.
func IsTable(ext string) bool { return ext == ".csv" || ext == ".tsv" }

// MaxSkipExamples bounds the example paths kept per reason.
const MaxSkipExamples = 5

// SkipGroup counts the files skipped for one reason.
type SkipGroup struct {
	Reason   string   `json:"reason"`
	Count    int      `json:"count"`
	Examples []string `json:"examples"` // up to MaxSkipExamples paths, in walk order
	// Exts are the extensions met ("" for none), for the reasons that
	// depend on it: what --add-exts would take.
	Exts []string `json:"exts"`
	Note string   `json:"note"`
}

// Skips collects skipped files from the walker and the writer. Safe for
// concurrent use; the zero value is ready.
type Skips struct {
	mu     sync.Mutex
	groups map[string]*SkipGroup
}

// Add counts rel (an index path) as skipped for reason.
func (s *Skips) Add(rel, ext, reason string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.groups == nil {
		s.groups = map[string]*SkipGroup{}
	}
	g := s.groups[reason]
	if g == nil {
		g = &SkipGroup{Reason: reason, Examples: []string{}, Exts: []string{}, Note: skipNotes[reason]}
		s.groups[reason] = g
	}
	g.Count++
	if len(g.Examples) < MaxSkipExamples {
		g.Examples = append(g.Examples, rel)
	}
	if (reason == SkipNotEnabled || reason == SkipNoReader || reason == SkipCompressed || reason == SkipLargeTable) && !slices.Contains(g.Exts, ext) {
		g.Exts = append(g.Exts, ext)
	}
}

// Groups returns the counts by reason, in a fixed order; never nil.
func (s *Skips) Groups() []SkipGroup {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := []SkipGroup{}
	for _, r := range skipOrder {
		if g := s.groups[r]; g != nil {
			c := *g
			c.Examples, c.Exts = slices.Clone(g.Examples), slices.Clone(g.Exts)
			slices.Sort(c.Exts)
			out = append(out, c)
		}
	}
	return out
}

// SkipTotal is the number of files in groups.
func SkipTotal(groups []SkipGroup) int {
	n := 0
	for _, g := range groups {
		n += g.Count
	}
	return n
}

// compressedExts are archives and compressed files: never opened.
var compressedExts = map[string]bool{
	".gz": true, ".tgz": true, ".bz2": true, ".tbz2": true, ".xz": true, ".txz": true, ".zst": true, ".lz": true,
	".lzma": true, ".lz4": true, ".z": true, ".zip": true, ".7z": true, ".rar": true, ".tar": true, ".jar": true,
	".war": true, ".deb": true, ".rpm": true, ".apk": true, ".cab": true, ".br": true,
}

// binaryExts are file types that hold no text to index.
var binaryExts = map[string]bool{
	".png": true, ".jpg": true, ".jpeg": true, ".gif": true, ".bmp": true, ".tif": true, ".tiff": true, ".webp": true,
	".ico": true, ".heic": true, ".mp3": true, ".mp4": true, ".m4a": true, ".wav": true, ".ogg": true, ".flac": true,
	".avi": true, ".mkv": true, ".mov": true, ".webm": true, ".exe": true, ".dll": true, ".so": true, ".o": true,
	".a": true, ".class": true, ".pyc": true, ".bin": true, ".woff": true, ".woff2": true, ".ttf": true, ".otf": true,
	".sqlite": true, ".db": true, ".iso": true, ".dmg": true, ".mo": true,
}

// SkipReason says why a file whose extension (lower case, with its dot)
// is not in the run's list is skipped.
func SkipReason(ext string) string {
	switch {
	case compressedExts[ext]:
		return SkipCompressed
	case extract.Supported(ext):
		return SkipNotEnabled
	case binaryExts[ext]:
		return SkipBinary
	}
	return SkipNoReader
}
