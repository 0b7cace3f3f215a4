// Package testutil holds helpers shared by the tests of several packages:
// a buffer safe for concurrent writers, file set-up that ends the test
// on an error instead of ignoring it, and a loop to race work against.
package testutil

import (
	"bytes"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// SyncBuffer collects what a goroutine or a child process writes (a log,
// a stderr) while the test reads it.
type SyncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *SyncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *SyncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// WriteFile writes data to path, making its folder first; an error ends
// the test.
func WriteFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

// MkdirAll makes the folder path; an error ends the test.
func MkdirAll(t testing.TB, path string) {
	t.Helper()
	if err := os.MkdirAll(path, 0o755); err != nil {
		t.Fatal(err)
	}
}

// Symlink makes link point to target; an error ends the test.
func Symlink(t testing.TB, target, link string) {
	t.Helper()
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
}

// Remove removes path; an error ends the test.
func Remove(t testing.TB, path string) {
	t.Helper()
	if err := os.Remove(path); err != nil {
		t.Fatal(err)
	}
}

// WhileRunning calls f over and over, a millisecond apart, on its own
// goroutine until work returns (races work with f).
func WhileRunning(work, f func()) {
	stop := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-stop:
				return
			default:
			}
			f()
			time.Sleep(time.Millisecond)
		}
	})
	work()
	close(stop)
	wg.Wait()
}
