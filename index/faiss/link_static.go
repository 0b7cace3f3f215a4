//go:build cgo && faiss_static

package faiss

// Release builds (make dist, -tags faiss_static) link FAISS, OpenBLAS (with
// Debian's LAPACK inside), the gfortran runtime and OpenMP statically, so
// the binary needs no BLAS packages on the target. libquadmath (LGPL) stays
// a shared library that the tarball ships in lib/, found through the
// $ORIGIN-relative run path; libstdc++ stays shared because the bundled ONNX
// Runtime loads it anyway. -Bdynamic before the shared ones lets the C
// library that the linker adds last link as usual.

/*
#cgo LDFLAGS: -Wl,-Bstatic -lfaiss -lopenblas -lgfortran -lgomp -Wl,-Bdynamic -lquadmath -lstdc++ -lm -Wl,-rpath,$ORIGIN/../lib
*/
import "C"
