package localstore

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// asUnprivileged runs f where file permissions apply: as root (this
// machine's tests), on an OS thread that drops the capabilities that
// bypass them, a thread never handed back to other goroutines.
func asUnprivileged(t *testing.T, f func()) {
	t.Helper()
	if os.Geteuid() != 0 {
		f()
		return
	}
	done := make(chan error)
	go func() {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		hdr := unix.CapUserHeader{Version: unix.LINUX_CAPABILITY_VERSION_3}
		var caps [2]unix.CapUserData
		if err := unix.Capget(&hdr, &caps[0]); err != nil {
			done <- err
			return
		}
		caps[0].Effective &^= 1<<unix.CAP_DAC_OVERRIDE | 1<<unix.CAP_DAC_READ_SEARCH
		if err := unix.Capset(&hdr, &caps[0]); err != nil {
			done <- err
			return
		}
		f()
		done <- nil
	}()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// TestUnreadableIndexIsNotDamage: an index file this process may not read
// (made by another user, a chmod) is reported as that, not as damage that
// has a writer throw the index away to rebuild it (writerState).
func TestUnreadableIndexIsNotDamage(t *testing.T) {
	for _, name := range []string{FilesFile, FaissFile, ManifestFile} {
		t.Run(name, func(t *testing.T) {
			dir, _ := committedStore(t)
			s := openStore(t, dir)
			path := filepath.Join(dir, name)
			if err := os.Chmod(path, 0); err != nil {
				t.Fatal(err)
			}
			notDamage := func(what string, err error) {
				if err == nil || index.IsDamaged(err) || !errors.Is(err, fs.ErrPermission) || strings.Contains(err.Error(), "disagree") {
					t.Errorf("%s: %v; want the permission error, not damage", what, err)
				}
			}
			asUnprivileged(t, func() {
				st, err := s.loadCommitted()
				if err == nil {
					st.close()
				}
				notDamage("loadCommitted", err)
				if name == FilesFile { // the summary reads only the commit record
					_, err = ReadSummary(dir)
					notDamage("ReadSummary", err)
				}
			})
		})
	}
}
