package stages

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
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
var ErrOutside = errors.New("symlink leads outside the data folder; not followed")

// Open opens a document for reading by its raw slash-separated name. What
// was opened is checked, not the name: anything but a regular file is
// refused. O_NONBLOCK keeps a FIFO swapped in for a file from stalling the
// open.
func (f *Folder) Open(name string) (*os.File, fs.FileInfo, error) {
	file, err := inside(f, name, func(rel string) (*os.File, error) {
		return f.root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, nil, err
	}
	fi, err := file.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file (%v)", fi.Mode().Type())
	}
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return file, fi, nil
}

// Stat follows links that stay inside the folder.
func (f *Folder) Stat(name string) (fs.FileInfo, error) {
	return inside(f, name, f.root.Stat)
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

// inside runs op on name through the root. os.Root refuses every absolute
// link target, even one inside the folder; such a link is resolved by path
// and op runs again, still through the root, on the relative result, so a
// swap between the two steps cannot lead outside either.
func inside[T any](f *Folder, name string, op func(string) (T, error)) (T, error) {
	v, err := op(name)
	var pe *fs.PathError
	if err == nil || !errors.As(err, &pe) || pe.Err.Error() != "path escapes from parent" {
		return v, err
	}
	target, rerr := filepath.EvalSymlinks(filepath.Join(f.Path, name))
	if rerr != nil || !within(f.Path, target) || target == f.Path {
		return v, ErrOutside
	}
	rel, rerr := filepath.Rel(f.Path, target)
	if rerr != nil {
		return v, ErrOutside
	}
	v, err = op(filepath.ToSlash(rel))
	if errors.As(err, &pe) && pe.Err.Error() == "path escapes from parent" {
		return v, ErrOutside
	}
	return v, err
}
