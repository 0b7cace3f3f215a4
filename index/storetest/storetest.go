// Package storetest runs a test once per index backend, the same
// assertions on each: the local index folder, and PostgreSQL on the real
// server internal/pgtest starts (call pgtest.Main from TestMain).
package storetest

import (
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// Backends are the stores tests run on; DSN gives a test a store of its
// own, empty ("" is the local index folder).
var Backends = []struct {
	Name string
	DSN  func(t *testing.T) string
}{
	{"local", func(*testing.T) string { return "" }},
	{"postgres", func(t *testing.T) string { return pgtest.Database(t) }},
}

// Each runs test as a subtest per backend.
func Each(t *testing.T, test func(t *testing.T, store index.StoreURL)) {
	EachDSN(t, func(t *testing.T, dsn string) { test(t, URL(t, dsn)) })
}

// EachDSN is Each for tests that hand the store to a child process: its
// connection string, password included.
func EachDSN(t *testing.T, test func(t *testing.T, dsn string)) {
	for _, b := range Backends {
		t.Run(b.Name, func(t *testing.T) { test(t, b.DSN(t)) })
	}
}

// URL parses a connection string as --store does.
func URL(t testing.TB, dsn string) index.StoreURL {
	t.Helper()
	u, err := index.ParseStoreURL(dsn)
	if err != nil {
		t.Fatal(err)
	}
	return u
}
