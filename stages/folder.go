package stages

import (
	"io/fs"
	"os"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/confine"
)

// Folder is the data folder opened as an os.Root. Every listing, stat and
// open of a document goes through it: the kernel resolves each path
// component beneath the folder's handle, so a link that leads outside, or
// is swapped to lead outside after it was checked, is never followed.
type Folder struct {
	Path string // absolute, symlinks resolved
	root *os.Root
}

// OpenFolder opens dir; the caller must Close it.
func OpenFolder(dir string) (*Folder, error) {
	root, err := os.OpenRoot(dir)
	if err != nil {
		return nil, err
	}
	return &Folder{Path: dir, root: root}, nil
}

// Close releases the folder's handle.
func (f *Folder) Close() error { return f.root.Close() }

// ErrOutside is a link that resolves outside the data folder.
var ErrOutside = confine.ErrOutside

// Open opens a document for reading by its raw slash-separated name; only
// a regular file is opened, and a FIFO does not stall (confine.OpenRegular).
func (f *Folder) Open(name string) (*os.File, fs.FileInfo, error) {
	return confine.OpenRegular(f.root, f.Path, name)
}

// Stat follows links that stay inside the folder.
func (f *Folder) Stat(name string) (fs.FileInfo, error) {
	return confine.Do(f.root, f.Path, name, f.root.Stat)
}

// ReadDir lists a folder by its raw slash-separated name ("." for the top),
// sorted by name. A folder that cannot be read whole is an error.
func (f *Folder) ReadDir(name string) ([]fs.DirEntry, error) {
	d, err := f.root.Open(name)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	entries, err := d.ReadDir(-1)
	if err != nil {
		return nil, err
	}
	slices.SortFunc(entries, func(a, b fs.DirEntry) int { return strings.Compare(a.Name(), b.Name()) })
	return entries, nil
}
