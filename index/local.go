package index

import "github.com/micro-rag/micro-rag-mcp/index/lexical"

// The local folder serves the seam: a Writer directly, a Store and its
// Snapshots through Local (Go has no covariant results, and the package's
// own code and tests keep the concrete types).
var (
	_ View         = (*Snapshot)(nil)
	_ Updater      = (*Writer)(nil)
	_ KeywordQuery = (*lexical.Query)(nil)
)

// Local serves s through the Backend interface.
func Local(s *Store) Backend { return localBackend{s} }

// LocalStore is the Store behind a Backend made by Local, for what only the
// local folder has (its folder, test hooks on FAISS writes).
func LocalStore(b Backend) (*Store, bool) {
	l, ok := b.(localBackend)
	return l.Store, ok
}

type localBackend struct{ *Store }

func (l localBackend) Acquire() View {
	if snap := l.Store.Acquire(); snap != nil {
		return snap
	}
	return nil // not a nil *Snapshot inside a non-nil View
}

func (l localBackend) Begin() (Updater, error) {
	w, err := l.Store.Begin()
	if err != nil {
		return nil, err
	}
	return w, nil
}
