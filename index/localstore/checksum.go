package localstore

import (
	"fmt"
	"hash/crc32"
	"io"
	"os"
	"strings"
)

// Checksums in commit.json are CRC-32 (IEEE polynomial) written as
// "crc32:%08x". They guard against damage on disk, not against an attacker.
// Go computes this CRC with carry-less multiplication: at 1M chunks
// (1.5 GB of vectors) it costs about a tenth of SHA-256 (BenchmarkChecksum).
const checksumAlgo = "crc32:"

// normTolerance is how far from 1 a stored vector's length may be. Vectors
// are normalised in float32 (error ~1e-7); anything past this is damage.
const normTolerance = 1e-3

func formatChecksum(sum uint32) string { return fmt.Sprintf("%s%08x", checksumAlgo, sum) }

// parseChecksum reads a commit.json checksum; ok is false for "" (an index
// written before checksums) and for any other algorithm.
func parseChecksum(s string) (uint32, bool) {
	hex, ok := strings.CutPrefix(s, checksumAlgo)
	if !ok || len(hex) != 8 {
		return 0, false
	}
	var sum uint32
	if _, err := fmt.Sscanf(hex, "%08x", &sum); err != nil {
		return 0, false
	}
	return sum, true
}

// extendChecksum is the checksum of old data followed by more.
func extendChecksum(sum uint32, more []byte) uint32 {
	return crc32.Update(sum, crc32.IEEETable, more)
}

// readerChecksum reads r to its end and returns its checksum.
func readerChecksum(r io.Reader) (uint32, error) {
	h := crc32.NewIEEE()
	// Hide an *os.File's WriteTo, which would copy in 32 KB pieces.
	_, err := io.CopyBuffer(h, struct{ io.Reader }{r}, make([]byte, 1<<20))
	return h.Sum32(), err
}

// fileChecksum is the checksum of a whole file.
func fileChecksum(path string) (uint32, error) {
	f, err := os.Open(path)
	if err != nil {
		return 0, err
	}
	defer f.Close()
	return readerChecksum(f)
}

// checkVectors reports the first of n vectors whose length is not 1.
func checkVectors(vectors []float32, dim int) error {
	for i := 0; i+dim <= len(vectors); i += dim {
		var ss float32
		for _, x := range vectors[i : i+dim] {
			ss += x * x
		}
		// |v|² within (1±tol)² ⇔ |v| within 1±tol; NaN fails both.
		if !(ss >= (1-normTolerance)*(1-normTolerance) && ss <= (1+normTolerance)*(1+normTolerance)) {
			return fmt.Errorf("vector %d has squared length %g, want 1", i/dim, ss)
		}
	}
	return nil
}
