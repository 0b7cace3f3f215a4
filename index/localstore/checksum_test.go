package localstore

import (
	"crypto/sha256"
	"hash"
	"hash/crc32"
	"math/rand/v2"
	"testing"
	"time"
)

func TestChecksumFormat(t *testing.T) {
	data := []byte("hello, manifest\n")
	whole := crc32.ChecksumIEEE(data)
	if got := extendChecksum(extendChecksum(0, data[:5]), data[5:]); got != whole {
		t.Fatalf("extended checksum %08x, whole %08x", got, whole)
	}
	s := formatChecksum(whole)
	if got, ok := parseChecksum(s); !ok || got != whole {
		t.Fatalf("parse(%q) = %08x, %v", s, got, ok)
	}
	for _, bad := range []string{"", "sha256:00", "crc32:1234567", "crc32:zzzzzzzz"} {
		if _, ok := parseChecksum(bad); ok {
			t.Errorf("parseChecksum(%q) accepted", bad)
		}
	}
}

// faissBytesAt1M is faiss.index's size at 1M chunks of 384 dimensions.
const faissBytesAt1M = 1_000_000 * (384*4 + 8)

// BenchmarkChecksum compares the hashes files.json could record, on 64 MB
// of random bytes; ms-at-1M scales the cost to faiss.index at 1M chunks.
func BenchmarkChecksum(b *testing.B) {
	buf := make([]byte, 64<<20)
	rng := rand.New(rand.NewPCG(1, 1))
	for i := range buf {
		buf[i] = byte(rng.Uint32())
	}
	for _, c := range []struct {
		name string
		h    func() hash.Hash
	}{
		{"crc32", func() hash.Hash { return crc32.NewIEEE() }},
		{"crc32c", func() hash.Hash { return crc32.New(crc32.MakeTable(crc32.Castagnoli)) }},
		{"sha256", sha256.New},
	} {
		b.Run(c.name, func(b *testing.B) {
			b.SetBytes(int64(len(buf)))
			h := c.h()
			start := time.Now()
			for b.Loop() {
				h.Reset()
				h.Write(buf)
				h.Sum(nil)
			}
			perByte := time.Since(start).Seconds() / float64(b.N*len(buf))
			b.ReportMetric(perByte*faissBytesAt1M*1e3, "ms-at-1M")
		})
	}
}
