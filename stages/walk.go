package stages

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"path"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
	"github.com/micro-rag/micro-rag-mcp/internal/confine"
	"github.com/micro-rag/micro-rag-mcp/internal/ignore"
	"github.com/micro-rag/micro-rag-mcp/stages/extract"
)

// Walker lists the files a reindex considers.
type Walker struct {
	Folder      *Folder // the data folder; every listing and stat goes through it
	IndexFolder string  // absolute, symlinks resolved; never entered
	Exts        map[string]bool
	Glob        *glob.Glob    // nil means every file
	Rules       *ignore.Rules // .gitignore, .micro-rag-ignore, --exclude; nil = built-in skips only
	// Paths, when set, limits the walk to these raw slash-separated paths
	// (files or folders); paths that no longer exist are simply not found.
	// Updates after file changes use it.
	Paths []string
	// Skipped, when set, hears of every regular file the walk saw but does
	// not emit because of its extension (SkipReason), size or content, and
	// of links to nothing, so a run can report them; files the rules or
	// the glob leave out are not reported.
	Skipped func(rel, ext, reason string)
	// TableCap, when above 0, leaves out CSV and TSV files larger than
	// it, reported as SkipLargeTable.
	TableCap int64
}

// Walk calls emit with every allowed file under the data folder (or under
// Paths) and stops at the first error emit returns. Hidden folders (".git",
// ".cache"), node_modules and what the ignore rules name are skipped; a
// symlink is followed only when it resolves inside the data folder. A
// folder or file that cannot be listed or examined is emitted as Failed (a
// folder with Dir set), so that its entries are kept, not dropped. A folder
// whose rule file cannot be used is withheld instead: its rule file is
// emitted as Failed and nothing below it, so its entries leave the index
// rather than be served against rules that could not be read.
func (w *Walker) Walk(ctx context.Context, emit func(*FileJob) error) error {
	skip := "" // the index folder, when it lies inside the data folder
	if data := w.Folder.Path; w.IndexFolder != "" && w.IndexFolder != data && confine.Within(data, w.IndexFolder) {
		skip, _ = filepath.Rel(data, w.IndexFolder)
		skip = filepath.ToSlash(skip)
	}
	if w.Paths == nil {
		return w.walkDir(ctx, ".", skip, emit)
	}
	for _, p := range outermost(w.Paths) {
		if err := w.walkPath(ctx, p, skip, emit); err != nil {
			return err
		}
	}
	return nil
}

// walkPath walks one path of a scoped run, if it still exists and neither
// it nor a folder above it is skipped or withheld.
func (w *Walker) walkPath(ctx context.Context, p, skip string, emit func(*FileJob) error) error {
	if !validRel(p) {
		return nil
	}
	// The folders above p, top first, as a full walk would meet them.
	parts := strings.Split(p, "/")
	for i := range len(parts) {
		dir := strings.Join(parts[:i], "/")
		if i > 0 && w.skipDir(dir, parts[i-1], skip) {
			return nil
		}
		if withheld, err := w.withheld(dir, emit); withheld || err != nil {
			return err
		}
	}
	fi, err := w.Folder.root.Lstat(p)
	if err != nil {
		return nil // deleted or moved away: Finish drops what was under it
	}
	d := fs.FileInfoToDirEntry(fi)
	if d.IsDir() {
		if w.skipDir(p, d.Name(), skip) {
			return nil
		}
		return w.walkDir(ctx, p, skip, emit)
	}
	return w.file(p, d, emit)
}

// validRel reports whether p is a clean relative slash-separated path, in
// any bytes: fs.ValidPath would refuse a name that is not UTF-8.
func validRel(p string) bool {
	return !slices.ContainsFunc(strings.Split(p, "/"), func(e string) bool {
		return e == "" || e == "." || e == ".."
	})
}

func (w *Walker) skipDir(p, name, skip string) bool {
	return p == skip || ignore.BuiltinSkip(name) || w.Rules != nil && w.Rules.Match(p, true)
}

// InScope reports whether an index path lies within Paths (always, without
// Paths): a run may drop only entries in its scope that it did not find.
func (w *Walker) InScope(rel string) bool {
	return w.Paths == nil || slices.ContainsFunc(w.Paths, func(p string) bool {
		p = schema.EncodePath(p)
		return rel == p || strings.HasPrefix(rel, p+"/")
	})
}

// outermost drops paths that lie inside another path of the list, so no
// file is walked twice.
func outermost(paths []string) []string {
	sorted := slices.Clone(paths)
	slices.Sort(sorted)
	var out []string
	for _, p := range sorted {
		if n := len(out); n > 0 && (p == out[n-1] || strings.HasPrefix(p, out[n-1]+"/")) {
			continue
		}
		out = append(out, p)
	}
	return out
}

// walkDir lists one folder (rel is "." or a raw slash-separated path) in
// name order and descends into its subfolders.
func (w *Walker) walkDir(ctx context.Context, rel, skip string, emit func(*FileJob) error) error {
	entries, err := w.Folder.ReadDir(rel)
	if err != nil {
		if rel == "." {
			return err
		}
		if errors.Is(err, fs.ErrNotExist) {
			return nil // gone since it was listed
		}
		return w.failed(rel, true, err, emit)
	}
	if withheld, err := w.withheld(rel, emit); withheld || err != nil {
		return err
	}
	for _, d := range entries {
		if err := ctx.Err(); err != nil {
			return context.Cause(ctx)
		}
		name := d.Name()
		p := name
		if rel != "." {
			p = rel + "/" + name
		}
		if d.IsDir() {
			if w.skipDir(p, name, skip) {
				continue
			}
			if err := w.walkDir(ctx, p, skip, emit); err != nil {
				return err
			}
			continue
		}
		if err := w.file(p, d, emit); err != nil {
			return err
		}
	}
	return nil
}

// file emits one directory entry if it is a document the run considers.
func (w *Walker) file(p string, d fs.DirEntry, emit func(*FileJob) error) error {
	ext := extract.TextExt(d.Name(), strings.ToLower(path.Ext(d.Name())))
	if !w.Exts[ext] && w.Skipped == nil {
		return nil
	}
	enc := schema.EncodePath(p)
	if w.Glob != nil && !w.Glob.Match(enc) || w.Rules != nil && w.Rules.Match(p, false) {
		return nil
	}
	if !w.Exts[ext] {
		w.skipped(p, enc, ext, d)
		return nil
	}
	if _, ok := extract.GzipInner(d.Name()); ext == ".gz" && !ok {
		w.skipped(p, enc, ext, d) // a tar archive, a PDF: not read compressed
		return nil
	}
	fi, err := w.stat(p, d)
	switch {
	case errors.Is(err, ErrOutside):
		// Never followed; reported, and emitted so that the writer drops a
		// file that became such a link.
		if w.Skipped != nil {
			w.Skipped(enc, ext, SkipOutside)
		}
		return emit(&FileJob{Rel: enc, Name: p, Ext: ext, Kind: Skipped, Err: err})
	case errors.Is(err, fs.ErrNotExist):
		if w.Skipped != nil && w.dangling(p, d) {
			w.Skipped(enc, ext, SkipBrokenLink)
		}
		return nil // gone since listed, or a link to nothing: not in the index
	case err != nil:
		return w.failed(p, false, err, emit)
	case !fi.Mode().IsRegular():
		return nil // FIFOs, sockets, devices, folders behind links
	}
	if w.TableCap > 0 && IsTable(ext) && fi.Size() > w.TableCap {
		if w.Skipped != nil {
			w.Skipped(enc, ext, SkipLargeTable)
		}
		return nil
	}
	if ext == "" && !w.looksLikeText(p) {
		if w.Skipped != nil {
			w.Skipped(enc, ext, SkipBinary)
		}
		return nil
	}
	return emit(&FileJob{Rel: enc, Name: p, Ext: ext, Size: fi.Size(), Mtime: float64(fi.ModTime().UnixNano()) / 1e9})
}

// looksLikeText reads the first bytes of a file without an extension:
// only text is emitted, so a program or a data file is reported as binary
// rather than failed. One that cannot be read is emitted, to fail there.
func (w *Walker) looksLikeText(p string) bool {
	f, _, err := w.Folder.Open(p)
	if err != nil {
		return true
	}
	defer f.Close()
	buf := make([]byte, 8<<10)
	n, err := io.ReadFull(f, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return true
	}
	return extract.LooksLikeText(buf[:n])
}

// dangling reports whether p, which could not be followed for not
// existing, is a symbolic link still there (rather than a file deleted
// since the folder was listed).
func (w *Walker) dangling(p string, d fs.DirEntry) bool {
	if d.Type()&fs.ModeSymlink == 0 {
		return false
	}
	fi, err := w.Folder.root.Lstat(p)
	return err == nil && fi.Mode()&fs.ModeSymlink != 0
}

// skipped reports a file left out for its extension, if it is a regular
// file (through a link that stays inside the folder) and not a rule file.
func (w *Walker) skipped(p, enc, ext string, d fs.DirEntry) {
	if ignore.IsRuleFile(d.Name()) {
		return
	}
	if d.Type()&fs.ModeSymlink != 0 {
		if fi, err := w.stat(p, d); err != nil || !fi.Mode().IsRegular() {
			return
		}
	} else if !d.Type().IsRegular() {
		return
	}
	w.Skipped(enc, ext, SkipReason(ext))
}

// failed emits a file or folder that could not be examined.
func (w *Walker) failed(rel string, dir bool, err error, emit func(*FileJob) error) error {
	enc := schema.EncodePath(rel)
	if !dir && w.Glob != nil && !w.Glob.Match(enc) {
		return nil
	}
	return emit(&FileJob{Rel: enc, Name: rel, Dir: dir, Kind: Failed, Err: err})
}

// withheld reports whether the rule files of folder dir ("" or "." for the
// top) cannot be used, and if so emits the broken one as Failed with the
// reason. Checked after the folder is listed: one that cannot be listed at
// all keeps its entries as before.
func (w *Walker) withheld(dir string, emit func(*FileJob) error) (bool, error) {
	if w.Rules == nil {
		return false, nil
	}
	var fe *ignore.FileError
	if !errors.As(w.Rules.Err(dir), &fe) {
		return false, nil
	}
	return true, emit(&FileJob{Rel: schema.EncodePath(fe.Path), Name: fe.Path, Kind: Failed, Err: fe})
}

// stat returns what a directory entry is, following a symlink through the
// folder's root: one that resolves outside the data folder, or into the
// index, is not followed.
func (w *Walker) stat(rel string, d fs.DirEntry) (fs.FileInfo, error) {
	if d.Type()&fs.ModeSymlink == 0 {
		return d.Info()
	}
	fi, err := w.Folder.Stat(rel)
	if err != nil {
		return nil, err
	}
	// A link into the index folder would index the index. This check is
	// by path; what is read is confined by the root regardless.
	if w.IndexFolder != "" {
		if target, err := filepath.EvalSymlinks(filepath.Join(w.Folder.Path, rel)); err == nil && confine.Within(w.IndexFolder, target) {
			return nil, ErrOutside
		}
	}
	return fi, nil
}
