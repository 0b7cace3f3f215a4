package engine

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// ScopeFile, in the index folder, records which files the index covers: the
// extensions and --exclude patterns of the runs that built it. A run
// started without --exts or --exclude uses it, so a command line or client
// configuration that leaves them out never drops what an earlier run added.
const ScopeFile = "scope.json"

// Scope is which files of the data folder an index covers.
type Scope struct {
	Exts     []string `json:"exts"`     // with dots, lower case; "" is files without an extension
	Excludes []string `json:"excludes"` // gitignore-style patterns, on top of the rule files
}

// ScopeError is a run refused because its extensions or exclude patterns
// would remove files the index holds, without the flag that allows it.
type ScopeError struct {
	Recorded Scope
	Dropped  []string // extensions the run would leave out
	Added    []string // exclude patterns the run would add
	Files    int      // indexed files those would remove
}

func (e *ScopeError) Error() string {
	var b strings.Builder
	if len(e.Dropped) > 0 {
		fmt.Fprintf(&b, "--exts leaves out %s, which this index covers (recorded list: %s)",
			isearch.ExtList(e.Dropped), isearch.ExtList(e.Recorded.Exts))
		if e.Files > 0 {
			fmt.Fprintf(&b, ", so %d indexed files would be removed", e.Files)
		}
		b.WriteString(". To keep them, drop --exts (the recorded list is used) or add types with --add-exts; " +
			"to remove them from the index, repeat the command with --change-exts")
	}
	if len(e.Added) > 0 {
		if b.Len() > 0 {
			b.WriteString("; also, ")
		}
		fmt.Fprintf(&b, "--exclude adds %s to the recorded patterns (%s), which would remove matching files from the index. "+
			"Drop --exclude to use the recorded patterns, or repeat the command with --change-exclude to apply them",
			strings.Join(e.Added, ", "), orNone(e.Recorded.Excludes))
	}
	return b.String()
}

func orNone(list []string) string {
	if len(list) == 0 {
		return "none"
	}
	return strings.Join(list, ", ")
}

// ScopeRequest is what a command line asks of the scope.
type ScopeRequest struct {
	// Exts replaces the recorded extensions; nil keeps them (DefaultExts
	// for an index without a record).
	Exts []string
	// AddExts are added to them.
	AddExts []string
	// ChangeExts allows a list that leaves out recorded extensions: their
	// files leave the index.
	ChangeExts bool
	// Excludes replace the recorded patterns; nil keeps them.
	Excludes []string
	// ChangeExcludes allows patterns the record does not have.
	ChangeExcludes bool
}

// normaliseExts is ParseExts for a list that may already be normalised,
// as Config.Exts is when the command line parsed it: there "" is files
// without an extension, not a blank item to skip.
func normaliseExts(list []string) ([]string, error) {
	spelled := make([]string, len(list))
	for i, e := range list {
		spelled[i] = cmp.Or(e, NoExt)
	}
	return ParseExts(spelled)
}

// ScopeDamage is a scope record that cannot be trusted: not JSON, or not
// a plausible list of extensions. It is never read as "no extensions".
type ScopeDamage struct {
	Path   string
	Reason string
}

func (e *ScopeDamage) Error() string { return fmt.Sprintf("%s is damaged: %s", e.Path, e.Reason) }

// readScope reads dir's record; nil when there is none, a *ScopeDamage
// when it is damaged.
func readScope(dir string) (*Scope, error) {
	path := filepath.Join(dir, ScopeFile)
	b, err := os.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var s *Scope
	if err := json.Unmarshal(b, &s); err != nil {
		return nil, &ScopeDamage{Path: path, Reason: err.Error()}
	}
	if s == nil || len(s.Exts) == 0 {
		return nil, &ScopeDamage{Path: path, Reason: "it lists no file extensions"}
	}
	for _, e := range s.Exts {
		if e != "" && (e != strings.ToLower(e) || !strings.HasPrefix(e, ".") || !extract.Supported(e)) {
			return nil, &ScopeDamage{Path: path, Reason: fmt.Sprintf("%q is not an extension this program reads", e)}
		}
	}
	return s, nil
}

// writeRecord replaces the file at path with v as indented JSON, written
// beside it first so that a reader never sees half a record.
func writeRecord(path string, v any, perm os.FileMode) error {
	b, err := json.MarshalIndent(v, "", " ")
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, append(b, '\n'), perm); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}

// resolve is the scope a run uses. rec is the record (nil for none);
// indexed are the index's files, whose extensions stand for the record
// of an index built before records were kept. A request that would remove
// indexed files is a *ScopeError unless it says Change.
func (r ScopeRequest) resolve(rec *Scope, indexed map[string]*schema.FileEntry) (Scope, error) {
	var base Scope
	var covered []string // the extensions the index covers
	if rec != nil {
		base, covered = *rec, rec.Exts
	} else {
		// No record (deleted, or an index older than records): the index's
		// own files say what it covers, and a plain run keeps them beside
		// the defaults.
		for _, f := range indexed {
			covered = appendNew(covered, f.Ext)
		}
		slices.Sort(covered)
		base.Exts = appendNew(slices.Clone(DefaultExts), covered...)
	}
	next := Scope{Exts: base.Exts, Excludes: base.Excludes}
	if r.Exts != nil {
		next.Exts = r.Exts
	}
	next.Exts = appendNew(slices.Clone(next.Exts), r.AddExts...)
	if r.Excludes != nil {
		next.Excludes = r.Excludes
	}
	next.Excludes = append([]string{}, next.Excludes...)

	serr := &ScopeError{Recorded: Scope{Exts: covered, Excludes: base.Excludes}}
	if !r.ChangeExts {
		for _, e := range covered {
			if !slices.Contains(next.Exts, e) {
				serr.Dropped = append(serr.Dropped, e)
			}
		}
	}
	if !r.ChangeExcludes && rec != nil {
		for _, p := range next.Excludes {
			if !slices.Contains(base.Excludes, p) {
				serr.Added = append(serr.Added, p)
			}
		}
	}
	if len(indexed) == 0 || len(serr.Dropped) == 0 && len(serr.Added) == 0 {
		return next, nil // nothing indexed is lost
	}
	for _, f := range indexed {
		if slices.Contains(serr.Dropped, f.Ext) {
			serr.Files++
		}
	}
	return next, serr
}

// appendNew appends to list each of items it does not hold yet.
func appendNew(list []string, items ...string) []string {
	for _, s := range items {
		if !slices.Contains(list, s) {
			list = append(list, s)
		}
	}
	return list
}

// equal reports whether two scopes list the same extensions and patterns,
// in any order.
func (s Scope) equal(o Scope) bool {
	same := func(a, b []string) bool {
		return slices.Equal(slices.Sorted(slices.Values(a)), slices.Sorted(slices.Values(b)))
	}
	return same(s.Exts, o.Exts) && same(s.Excludes, o.Excludes)
}

// activeScope is a resolved scope with its extensions as a set.
type activeScope struct {
	Scope
	exts map[string]bool
}

func newActiveScope(s Scope) *activeScope {
	a := &activeScope{Scope: s, exts: make(map[string]bool, len(s.Exts))}
	for _, e := range s.Exts {
		a.exts[e] = true
	}
	return a
}

func (e *Engine) scopeRequest() ScopeRequest {
	return ScopeRequest{Exts: e.cfg.Exts, AddExts: e.cfg.AddExts, ChangeExts: e.cfg.ChangeExts,
		Excludes: e.cfg.Excludes, ChangeExcludes: e.cfg.ChangeExcludes}
}

// resolveScope is the scope of a run that holds the index lock, over the
// index's files indexed. A changed scope is recorded before the run
// changes anything, so a run cut short never leaves files removed under a
// record that still names them.
func (e *Engine) resolveScope(indexed map[string]*schema.FileEntry) (*activeScope, error) {
	if err := e.checkFolderID(); err != nil {
		return nil, err
	}
	rec, err := readScope(e.cfg.IndexFolder)
	var damage *ScopeDamage
	if errors.As(err, &damage) && e.cfg.Exts == nil {
		return nil, e.scopeRepair(damage, indexed)
	}
	if err != nil && damage == nil {
		return nil, err
	}
	// A damaged record with --exts given: the index's files say what it
	// covers, as for an index without a record, and the list is recorded.
	sc, err := e.scopeRequest().resolve(rec, indexed)
	if err != nil {
		return nil, err
	}
	if rec == nil || !rec.equal(sc) {
		if err := writeRecord(filepath.Join(e.cfg.IndexFolder, ScopeFile), sc, 0o644); err != nil {
			return nil, fmt.Errorf("recording the index's extensions: %w", err)
		}
		if rec != nil {
			e.log.Info("index scope changed", "exts", isearch.ExtList(sc.Exts), "excludes", sc.Excludes,
				"was_exts", isearch.ExtList(rec.Exts), "was_excludes", rec.Excludes)
		}
	}
	a := newActiveScope(sc)
	e.scope.Store(a)
	return a, nil
}

// scopeRepair is the refusal of a run over a damaged record, with the
// command that records the index's extensions again (the defaults and
// those of its files, so that no file leaves the index).
func (e *Engine) scopeRepair(damage *ScopeDamage, indexed map[string]*schema.FileEntry) error {
	exts, _ := ScopeRequest{}.resolve(nil, indexed)
	args := []string{"micro-rag-mcp", "reindex", "--data-folder", ShellQuote(e.cfg.DataFolder),
		"--index-folder", ShellQuote(e.cfg.IndexFolder)}
	if !e.cfg.Store.Local() {
		args = append(args, "--store", ShellQuote(e.cfg.Store.String()))
	}
	if e.cfg.Model != "" && e.cfg.Model != DefaultModel {
		args = append(args, "--model", ShellQuote(e.cfg.Model))
	}
	args = append(args, "--exts", ShellQuote(isearch.ExtList(exts.Exts)))
	return fmt.Errorf("%w. It records which file types this index covers, so no run guesses them (a wrong guess "+
		"would remove files). To record the default types and those of the %d indexed files again, run: %s",
		damage, len(indexed), strings.Join(args, " "))
}

// ShellQuote quotes s for a POSIX shell when it holds more than plain
// path characters, for the commands that messages print in full.
func ShellQuote(s string) string {
	plain := s != "" && strings.IndexFunc(s, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("/._-+:,=@%", r))
	}) < 0
	if plain {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
