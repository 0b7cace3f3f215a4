package engine

// The database backends --store can name, registered by importing them
// (index.RegisterBackend); the local index folder needs none.
import _ "github.com/micro-rag/micro-rag-mcp/index/pgstore"
