//go:build !linux

package extract

import "github.com/tetratelabs/wazero/experimental"

// Elsewhere PDFium's memory is wazero's own, a Go slice copied as it
// grows: the limit holds, but RSS can reach a few times it, and refused
// growths are not counted.
func (m *wasmMemories) allocator() experimental.MemoryAllocator { return nil }

func (m *wasmMemories) runtimeLimitPages() uint32 { return uint32(min(m.limit>>16, 65536)) }

func (m *wasmMemories) sweep() {}
