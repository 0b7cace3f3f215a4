// Package testutil holds helpers shared by the tests of several packages.
package testutil

import (
	"bytes"
	"sync"
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
