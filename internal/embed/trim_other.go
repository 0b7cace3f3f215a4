//go:build !linux

package embed

// trimCHeap does nothing here: other C libraries return freed memory, or
// offer no call for it.
func trimCHeap() {}
