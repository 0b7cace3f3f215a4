package engine

import (
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// testBackends are the stores the end-to-end tests run on: each test that
// calls eachBackend runs once per backend, the same assertions on both.
// dsn gives a test a store of its own, empty ("" is the local index
// folder).
var testBackends = []struct {
	name string
	dsn  func(t *testing.T) string
}{
	{"local", func(*testing.T) string { return "" }},
	{"postgres", func(t *testing.T) string { return pgtest.Database(t) }},
}

// eachBackend runs test as a subtest per backend.
func eachBackend(t *testing.T, test func(t *testing.T, store index.StoreURL)) {
	eachBackendDSN(t, func(t *testing.T, dsn string) { test(t, storeURL(t, dsn)) })
}

// eachBackendDSN is eachBackend for tests that hand the store to a child
// process: its connection string, password included.
func eachBackendDSN(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range testBackends {
		t.Run(b.name, func(t *testing.T) { test(t, b.dsn(t)) })
	}
}

func storeURL(t testing.TB, dsn string) index.StoreURL {
	u, err := index.ParseStoreURL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
