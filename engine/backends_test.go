package engine

import "github.com/micro-rag/micro-rag-mcp/index/storetest"

// The end-to-end tests that call these run once per backend
// (index/storetest): the local index folder and PostgreSQL.
var (
	eachBackend    = storetest.Each
	eachBackendDSN = storetest.EachDSN
	storeURL       = storetest.URL
)
