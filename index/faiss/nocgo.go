//go:build !cgo

package faiss

// FAISS is C++: without cgo this package cannot be built. The undefined
// name below is the compiler's whole message, so make it say what to do.
var _ = micro_rag_mcp_needs_cgo__build_with_CGO_ENABLED_1_after_make_setup
