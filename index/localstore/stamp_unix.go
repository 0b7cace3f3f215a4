package localstore

import (
	"io/fs"
	"syscall"
)

func stampOf(fi fs.FileInfo) fileStamp {
	st := fileStamp{size: fi.Size(), mtime: fi.ModTime()}
	if sys, ok := fi.Sys().(*syscall.Stat_t); ok {
		st.ino = sys.Ino
	}
	return st
}
