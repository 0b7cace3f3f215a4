package engine

import (
	"errors"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

func TestScopeResolve(t *testing.T) {
	files := func(paths ...string) map[string]*schema.FileEntry {
		m := map[string]*schema.FileEntry{}
		for _, p := range paths {
			ext := p[strings.LastIndexByte(p, '.'):]
			m[p] = &schema.FileEntry{Path: p, Ext: ext}
		}
		return m
	}
	rec := &Scope{Exts: []string{".txt", ".md"}, Excludes: []string{"drafts/"}}
	for _, tc := range []struct {
		name    string
		req     ScopeRequest
		rec     *Scope
		indexed map[string]*schema.FileEntry
		exts    string // want, joined; "" when refused
		excl    string
		dropped string // refused: extensions left out
		added   string // refused: patterns added
		nfiles  int
	}{
		{name: "new index takes the defaults", exts: strings.Join(DefaultExts, ",")},
		{name: "no flags keep the record", rec: rec, indexed: files("a.txt"), exts: ".txt,.md", excl: "drafts/"},
		{name: "add", req: ScopeRequest{AddExts: []string{".html", ".txt"}}, rec: rec, indexed: files("a.txt"), exts: ".txt,.md,.html", excl: "drafts/"},
		{name: "superset", req: ScopeRequest{Exts: []string{".md", ".txt", ".csv"}}, rec: rec, indexed: files("a.txt"), exts: ".md,.txt,.csv", excl: "drafts/"},
		{name: "narrower refused", req: ScopeRequest{Exts: []string{".html"}}, rec: rec, indexed: files("a.txt", "b.txt", "c.md"),
			dropped: ".txt,.md", nfiles: 3},
		{name: "narrower allowed", req: ScopeRequest{Exts: []string{".html"}, ChangeExts: true}, rec: rec, indexed: files("a.txt"), exts: ".html", excl: "drafts/"},
		{name: "narrower on an empty index", req: ScopeRequest{Exts: []string{".html"}}, rec: rec, exts: ".html", excl: "drafts/"},
		{name: "no record: the files say what is covered", req: ScopeRequest{Exts: []string{".txt", ".pdf"}}, indexed: files("a.txt", "b.md", "c.md"),
			dropped: ".md", nfiles: 2},
		{name: "no record, covered", req: ScopeRequest{Exts: []string{".txt"}}, indexed: files("a.txt"), exts: ".txt"},
		{name: "exclude added refused", req: ScopeRequest{Excludes: []string{"drafts/", "old/"}}, rec: rec, indexed: files("a.txt"), added: "old/"},
		{name: "exclude added allowed", req: ScopeRequest{Excludes: []string{"old/"}, ChangeExcludes: true}, rec: rec, indexed: files("a.txt"), exts: ".txt,.md", excl: "old/"},
		{name: "exclude lifted", req: ScopeRequest{Excludes: []string{}}, rec: rec, indexed: files("a.txt"), exts: ".txt,.md"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := tc.req.resolve(tc.rec, tc.indexed)
			var serr *ScopeError
			if tc.dropped != "" || tc.added != "" {
				if !errors.As(err, &serr) || strings.Join(serr.Dropped, ",") != tc.dropped || strings.Join(serr.Added, ",") != tc.added || serr.Files != tc.nfiles {
					t.Fatalf("want refusal (dropped %q, added %q, %d files), got %+v, %v", tc.dropped, tc.added, tc.nfiles, got, err)
				}
				return
			}
			if err != nil || strings.Join(got.Exts, ",") != tc.exts || strings.Join(got.Excludes, ",") != tc.excl {
				t.Fatalf("got %+v, %v; want exts %q excludes %q", got, err, tc.exts, tc.excl)
			}
		})
	}
}

// Every spelling of an extension list survives the command line's parse and
// the engine's second one (New normalises Config.Exts again): noext and
// group names included, case and dots aside.
func TestExtSpellingsRoundTrip(t *testing.T) {
	defaults := strings.Join(DefaultExts, ",")
	for _, tc := range []struct{ typed, want string }{
		{".md,noext", ".md,"},
		{"noext", ""},
		{"NOEXT,.noext", ""},
		{".MD,md,Md", ".md"},
		{"md, .txt ,", ".md,.txt"},
		{strings.ToUpper(isearch.ExtList(DefaultExts)), defaults},
		{strings.ReplaceAll(isearch.ExtList(DefaultExts), ".", ""), defaults},
		{"markup,noext", strings.Join(append(slices.Clone(ExtGroups["markup"]), ""), ",")},
		{".CODE", strings.Join(ExtGroups["code"], ",")},
	} {
		t.Run(tc.typed, func(t *testing.T) {
			first, err := ParseExts(strings.Split(tc.typed, ","))
			if err != nil {
				t.Fatal(err)
			}
			e, err := New(Config{DataFolder: t.TempDir(), Exts: first, AddExts: first, NoInitialReindex: true})
			if err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(e.cfg.Exts, ","); got != tc.want {
				t.Errorf("Exts: typed %q, engine has %q, want %q", tc.typed, got, tc.want)
			}
			if got := strings.Join(e.cfg.AddExts, ","); got != tc.want {
				t.Errorf("AddExts: typed %q, engine has %q, want %q", tc.typed, got, tc.want)
			}
		})
	}
}

// A damaged or implausible scope record is never read as "no extensions":
// a plain run over it is refused with the command that records it again,
// the record stays as it was, and a run that names --exts repairs it.
func TestScopeDamagedRecord(t *testing.T) {
	indexed := map[string]*schema.FileEntry{
		"a.md": {Path: "a.md", Ext: ".md"}, "m.go": {Path: "m.go", Ext: ".go"}, "README": {Path: "README", Ext: ""}}
	for _, content := range []string{`{"exts":[".md",".go",""],"exc`, `null`, `[]`, `{}`, `{"exts":[]}`, `{"exts":["MD"]}`, `{"exts":[".exe"]}`} {
		t.Run(content, func(t *testing.T) {
			dir := t.TempDir()
			path := filepath.Join(dir, ScopeFile)
			if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
				t.Fatal(err)
			}
			var damage *ScopeDamage
			if _, err := readScope(dir); !errors.As(err, &damage) {
				t.Fatalf("readScope: %v, want a *ScopeDamage", err)
			}
			data := filepath.Join(t.TempDir(), "my docs")
			if err := os.Mkdir(data, 0o700); err != nil {
				t.Fatal(err)
			}
			e := &Engine{cfg: Config{DataFolder: data, IndexFolder: dir}}
			_, err := e.resolveScope(indexed)
			want := "run: micro-rag-mcp reindex --data-folder " + ShellQuote(data) + " --index-folder " + ShellQuote(dir) + " --exts " +
				isearch.ExtList(append(slices.Clone(DefaultExts), ".go"))
			if err == nil || !strings.HasSuffix(err.Error(), want) {
				t.Fatalf("plain run: %v\nwant it to end with %q", err, want)
			}
			if b, _ := os.ReadFile(path); string(b) != content {
				t.Fatalf("the refused run rewrote the record: %q", b)
			}
			e.cfg.Exts = []string{".md", ".go", ""}
			sc, err := e.resolveScope(indexed)
			if err != nil || strings.Join(sc.Exts, ",") != ".md,.go," {
				t.Fatalf("run with --exts: %+v, %v", sc, err)
			}
			if rec, err := readScope(dir); err != nil || strings.Join(rec.Exts, ",") != ".md,.go," {
				t.Fatalf("record after the repair: %+v, %v", rec, err)
			}
		})
	}
}

// Without a record (deleted, or an index older than records) a plain run
// keeps every indexed file's extension and adds the defaults; it is not
// refused over --exts, which nobody gave.
func TestScopeMissingRecordKeepsIndexedFiles(t *testing.T) {
	indexed := map[string]*schema.FileEntry{"a.md": {Path: "a.md", Ext: ".md"}, "m.go": {Path: "m.go", Ext: ".go"}}
	got, err := ScopeRequest{}.resolve(nil, indexed)
	want := isearch.ExtList(append(slices.Clone(DefaultExts), ".go"))
	if err != nil || isearch.ExtList(got.Exts) != want {
		t.Fatalf("got %v, %v; want %s", got.Exts, err, want)
	}
}
