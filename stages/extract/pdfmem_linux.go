package extract

import (
	"fmt"
	"sync"
	"syscall"

	"github.com/tetratelabs/wazero/experimental"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

func (m *wasmMemories) allocator() experimental.MemoryAllocator { return m }

// runtimeLimitPages is wazero's own cap: the most a module may declare, so
// that growth up to it reaches Reallocate, which enforces the limit and
// counts refusals (wazero turns down growth past its cap without asking).
func (m *wasmMemories) runtimeLimitPages() uint32 { return 65536 }

// Allocate reserves address space for the whole limit without committing
// it; wazero calls it once per instance.
func (m *wasmMemories) Allocate(_, max uint64) experimental.LinearMemory {
	reserve := (min(max, m.limit) + pageSize - 1) &^ (pageSize - 1)
	b, err := syscall.Mmap(-1, 0, int(reserve), syscall.PROT_NONE, syscall.MAP_PRIVATE|syscall.MAP_ANON|syscall.MAP_NORESERVE)
	if err != nil {
		// Read's recover turns this into a failure of the file.
		panic(fmt.Errorf("reserve %s of address space for PDFium: %w", bytesize.Format(int64(reserve)), err))
	}
	return &wasmMemory{owner: m, b: b}
}

// sweep unmaps the memories freed while a call could still run in them;
// call it once none can.
func (m *wasmMemories) sweep() {
	m.mu.Lock()
	retired := m.retired
	m.retired = nil
	m.mu.Unlock()
	for _, b := range retired {
		syscall.Munmap(b)
	}
}

const pageSize = 1 << 16 // WebAssembly's, a multiple of the system's

// wasmMemory is one instance's linear memory: b is the reservation, its
// first size bytes readable and writable.
type wasmMemory struct {
	owner *wasmMemories
	// mu orders Free, which a deadline may call from another goroutine,
	// with Reallocate.
	mu   sync.Mutex
	b    []byte
	size uint64
}

// Reallocate grows the readable part to size bytes in place; new pages
// read as zero, as WebAssembly requires. Past the limit it returns nil,
// which the module sees as a failed memory.grow.
func (w *wasmMemory) Reallocate(size uint64) []byte {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.b == nil {
		return nil // freed: the module is closing
	}
	if size > uint64(len(w.b)) {
		w.owner.refused.Add(1)
		return nil
	}
	if size > w.size {
		if err := syscall.Mprotect(w.b[w.size:size], syscall.PROT_READ|syscall.PROT_WRITE); err != nil {
			w.owner.refused.Add(1) // out of commit charge: as good as the limit
			return nil
		}
		w.size = size
	}
	return w.b[:size:size]
}

// Free returns the pages to the system. A call abandoned at its deadline
// may still be running in this memory: it then reads zeros instead of
// faulting, and the mapping goes at the next sweep.
func (w *wasmMemory) Free() {
	w.mu.Lock()
	b := w.b
	w.b = nil
	w.mu.Unlock()
	if b == nil {
		return
	}
	if w.owner.busy() {
		syscall.Madvise(b, syscall.MADV_DONTNEED)
		w.owner.mu.Lock()
		w.owner.retired = append(w.owner.retired, b)
		w.owner.mu.Unlock()
		return
	}
	syscall.Munmap(b)
}
