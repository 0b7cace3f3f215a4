package embed

/*
#cgo LDFLAGS: -ldl
#define _GNU_SOURCE
#include <dlfcn.h>

// trim calls glibc's malloc_trim when the C library has one (musl has
// not), so heap pages a destroyed session left free go back to the system.
static void trim(void) {
	int (*malloc_trim)(size_t) = (int (*)(size_t))dlsym(RTLD_DEFAULT, "malloc_trim");
	if (malloc_trim) {
		malloc_trim(0);
	}
}
*/
import "C"

// trimCHeap returns the free pages of the C heap to the system: ONNX
// Runtime frees a session's weights and arena into it, and glibc keeps
// much of that resident otherwise.
func trimCHeap() { C.trim() }
