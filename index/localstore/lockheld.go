package localstore

import (
	"fmt"
	"os"
	"strings"
	"syscall"
)

// lockHeld reports whether some process holds a flock on the file at
// path, as /proc/locks lists it. Reading the list takes no lock, so a
// status never makes a starting reindex busy; where there is no such list
// (not Linux) it reports false.
func lockHeld(path string) bool {
	fi, err := os.Stat(path)
	if err != nil {
		return false
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return false
	}
	locks, err := os.ReadFile("/proc/locks")
	if err != nil {
		return false
	}
	dev := uint64(st.Dev)
	// "1: FLOCK  ADVISORY  WRITE 4242 fe:00:10446524 0 EOF": the device's
	// major and minor in hex, then the inode.
	file := fmt.Sprintf("%02x:%02x:%d", (dev>>8)&0xfff|(dev>>32)&^0xfff, dev&0xff|(dev>>12)&^0xff, st.Ino)
	for line := range strings.Lines(string(locks)) {
		f := strings.Fields(line)
		if len(f) >= 6 && f[1] == "FLOCK" && f[5] == file {
			return true
		}
	}
	return false
}
