package localstore

import (
	"context"
	"errors"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
)

// A binary that imports this package serves the local index folder (no
// --store), as index/pgstore serves postgres://.
func init() {
	index.RegisterBackend(index.FolderBackend, index.Driver{Open: openBackend, Summary: summary, CheckFolder: CheckFolder,
		Verify: func(_ context.Context, cfg index.BackendConfig) error { return Verify(cfg.Folder) }})
}

// errNoFolder means a local StoreURL without its folder.
var errNoFolder = errors.New("no index folder given (index.StoreURL.InFolder)")

func openBackend(_ context.Context, cfg index.BackendConfig) (index.Backend, error) {
	if cfg.Folder == "" {
		return nil, errNoFolder
	}
	s, err := Open(cfg.Folder, cfg.Version, cfg.Options)
	if err != nil {
		return nil, err
	}
	return Local(s), nil
}

func summary(_ context.Context, cfg index.BackendConfig) (index.Summary, error) {
	if cfg.Folder == "" {
		return index.Summary{}, errNoFolder
	}
	return ReadSummary(cfg.Folder)
}

// The local folder serves the seam: a Writer directly, a Store and its
// Snapshots through Local (Go has no covariant results, and the package's
// own code and tests keep the concrete types).
var (
	_ index.View         = (*Snapshot)(nil)
	_ index.Updater      = (*Writer)(nil)
	_ index.KeywordQuery = (*lexical.Query)(nil)
)

// Local serves s through the Backend interface.
func Local(s *Store) index.Backend { return localBackend{s} }

// LocalStore is the Store behind a Backend made by Local, for what only the
// local folder has (its folder, test hooks on FAISS writes).
func LocalStore(b index.Backend) (*Store, bool) {
	l, ok := b.(localBackend)
	return l.Store, ok
}

type localBackend struct{ *Store }

func (l localBackend) Acquire() index.View {
	if snap := l.Store.Acquire(); snap != nil {
		return snap
	}
	return nil // not a nil *Snapshot inside a non-nil View
}

func (l localBackend) Begin() (index.Updater, error) {
	w, err := l.Store.Begin()
	if err != nil {
		return nil, err
	}
	return w, nil
}
