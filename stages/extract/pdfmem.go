package extract

import (
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
)

// wasmMemories holds the WebAssembly memories of one start of the PDF
// engine: on Linux each is a mapping of its own outside the Go heap
// (pdfmem_linux.go). wazero's default grows a Go slice by copying it into
// a larger one, and the collector lets the old copies pile up: a PDF that
// filled a 2 GiB module took the process to 5.1 GiB of RSS. A mapping
// reserved at the limit grows in place, only the pages PDFium touches
// become resident, and they go back to the system when the instance does.
// Safe for concurrent use.
type wasmMemories struct {
	limit uint64
	// refused counts growths refused at the limit, the sign that a file
	// needed more memory than PDFium may have. It is one count for all
	// instances: with shared set, a file's reading sees the refusals of
	// others too.
	refused atomic.Int64
	shared  bool
	// busy reports whether a call may still run in a module being freed
	// (one abandoned at its deadline); such a memory must stay mapped.
	busy func() bool

	mu      sync.Mutex
	retired [][]byte // freed while busy; unmapped by sweep
}

// newWASMMemories returns the memories of an engine with instances
// instances of at most limit bytes each; busy is as for the field.
func newWASMMemories(limit uint64, instances int, busy func() bool) *wasmMemories {
	return &wasmMemories{limit: limit, shared: instances > 1, busy: busy}
}

// refusals is how many growths m has refused so far; 0 for nil.
func (m *wasmMemories) refusals() int64 {
	if m == nil {
		return 0
	}
	return m.refused.Load()
}

// tooLarge is the reason of a file that needed more memory than m allows.
func (m *wasmMemories) tooLarge() string {
	return fmt.Sprintf("PDF needs more than %s of memory", bytesize.Format(int64(m.limit)))
}
