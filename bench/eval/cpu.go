package eval

import (
	"bytes"
	"fmt"
	"os"
	"runtime"
	"strings"
)

// CPUModel is the machine's CPU model and core count, for a report's
// header: timings mean little without it.
func CPUModel() string {
	b, err := os.ReadFile("/proc/cpuinfo")
	if err != nil {
		return runtime.GOARCH
	}
	for l := range bytes.Lines(b) {
		if k, v, ok := strings.Cut(string(l), ":"); ok && strings.TrimSpace(k) == "model name" {
			return fmt.Sprintf("%s x%d", strings.TrimSpace(v), runtime.NumCPU())
		}
	}
	return runtime.GOARCH
}
