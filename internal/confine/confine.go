// Package confine reaches files beneath a folder through its os.Root: the
// kernel resolves each path component under the folder's handle, so a link
// that leads outside, or is swapped to lead outside after a check, is never
// followed. Documents and ignore rule files are both read this way.
package confine

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
)

// ErrOutside is a link that resolves outside the folder.
var ErrOutside = errors.New("symlink leads outside the data folder; not followed")

// errEscapes is the error os.Root gives for a path that escapes it, which
// the os package does not export: learned once from an absolute name,
// which os.Root refuses before it looks at the file system.
var errEscapes = sync.OnceValue(func() error {
	root, err := os.OpenRoot("/")
	if err != nil {
		return nil
	}
	defer root.Close()
	_, err = root.Lstat("/")
	var pe *fs.PathError
	if !errors.As(err, &pe) {
		return nil
	}
	return pe.Err
})

// escapes reports whether err is os.Root refusing a path that leads out.
func escapes(err error) bool {
	var pe *fs.PathError
	want := errEscapes()
	return want != nil && errors.As(err, &pe) && errors.Is(pe.Err, want)
}

// Do runs op on name (slash-separated, relative) through root, the handle
// of dir (absolute, symlinks resolved). os.Root refuses every absolute link
// target, even one inside the folder; such a link is resolved by path and
// op runs again, still through the root, on the relative result, so a swap
// between the two steps cannot lead outside either. A link to the folder
// itself is inside: op gets ".".
func Do[T any](root *os.Root, dir, name string, op func(string) (T, error)) (T, error) {
	v, err := op(name)
	if !escapes(err) {
		return v, err
	}
	target, rerr := filepath.EvalSymlinks(filepath.Join(dir, name))
	if rerr != nil || !Within(dir, target) {
		return v, ErrOutside
	}
	rel, rerr := filepath.Rel(dir, target)
	if rerr != nil {
		return v, ErrOutside
	}
	v, err = op(filepath.ToSlash(rel))
	if escapes(err) {
		return v, ErrOutside
	}
	return v, err
}

// OpenRegular opens name for reading through root (see Do). What was
// opened is checked, not the name: anything but a regular file is refused.
// O_NONBLOCK keeps a FIFO swapped in for a file from stalling the open.
// The caller closes the file.
func OpenRegular(root *os.Root, dir, name string) (*os.File, fs.FileInfo, error) {
	file, err := Do(root, dir, name, func(rel string) (*os.File, error) {
		return root.OpenFile(rel, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	})
	if err != nil {
		return nil, nil, err
	}
	fi, err := file.Stat()
	if err == nil && !fi.Mode().IsRegular() {
		err = fmt.Errorf("not a regular file but %s", kind(fi.Mode()))
	}
	if err != nil {
		file.Close()
		return nil, nil, err
	}
	return file, fi, nil
}

func kind(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a folder"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device"
	}
	return fmt.Sprintf("of type %v", m.Type())
}

// Within reports whether p is dir or lies below it (both absolute).
func Within(dir, p string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, "../") && !filepath.IsAbs(rel)
}
