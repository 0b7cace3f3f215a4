package main

import (
	"os"
	"runtime/debug"
)

// defaultMemoryLimit is the Go heap's share of the 600 MB one file may
// take the process to: the model and ONNX Runtime hold about 200 MB
// outside it. It is a soft limit: near it the collector runs more often
// (at most half the CPU), it never fails an allocation. A 100 MB RTF
// peaked at 631 MB RSS without it and 477 MB with it (BENCHMARKS.md).
const defaultMemoryLimit = 320 << 20

// setMemoryLimit applies defaultMemoryLimit unless GOMEMLIMIT says
// otherwise ("off" lifts it).
func setMemoryLimit() {
	if _, set := os.LookupEnv("GOMEMLIMIT"); !set {
		debug.SetMemoryLimit(defaultMemoryLimit)
	}
}
