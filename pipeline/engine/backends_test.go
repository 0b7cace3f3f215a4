package engine

import "github.com/micro-rag/micro-rag-mcp/internal/storetest"

// The end-to-end tests that call these run once per backend
// (internal/storetest): the local index folder and PostgreSQL.
var (
	eachBackend    = storetest.Each
	eachBackendDSN = storetest.EachDSN
	storeURL       = storetest.URL
)
