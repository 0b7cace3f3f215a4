package engine

// The backends --store can name, registered by importing them
// (index.RegisterBackend): the local index folder (no --store) and
// PostgreSQL.
import (
	_ "github.com/micro-rag/micro-rag-mcp/index/localstore"
	_ "github.com/micro-rag/micro-rag-mcp/index/pgstore"
)
