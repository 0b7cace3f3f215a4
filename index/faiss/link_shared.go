//go:build cgo && !faiss_static

package faiss

// Development builds link the system's shared OpenBLAS and LAPACK
// (libfaiss-dev ships only a static libfaiss.a).

/*
#cgo LDFLAGS: -lfaiss -lopenblas -llapack -lgomp -lstdc++ -lm
*/
import "C"
