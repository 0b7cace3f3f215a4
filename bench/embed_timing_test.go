package bench

import (
	"testing"
	"time"
)

// longChunks returns n real chunks of at least 900 characters, the size the
// pipeline mostly sends.
func longChunks(b *testing.B, n int) []string {
	c := buildCorpus(b, embedCorpus)
	var out []string
	for _, t := range chunkTexts(b, corpusFiles(b, c.Dir)) {
		if len(t) >= 900 {
			out = append(out, t)
		}
		if len(out) == n {
			return out
		}
	}
	b.Fatalf("only %d chunks of 900+ characters in the embedding corpus", len(out))
	return nil
}

// BenchmarkEmbedRaw is the ceiling: the model alone on pre-tokenised
// batches of 64 real ~1000-character chunks (one op = 4 batches).
func BenchmarkEmbedRaw(b *testing.B) {
	e := embedder(b)
	seqs := tokenize(tok(b), longChunks(b, 256))
	tokens := 0
	for _, s := range seqs {
		tokens += len(s)
	}
	vecs := embedRaw(b, e, seqs[:64], nil) // warm-up: ORT arena, buffers
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		vecs = embedRaw(b, e, seqs, vecs)
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N*len(seqs))/sec, "chunks/s")
	b.ReportMetric(float64(b.N*tokens)/sec, "tokens/s")
}

// BenchmarkTokenize is the WordPiece tokenizer alone on the same chunks.
func BenchmarkTokenize(b *testing.B) {
	t := tok(b)
	texts := longChunks(b, 256)
	var bytes int64
	for _, s := range texts {
		bytes += int64(len(s))
	}
	var ids []int32
	b.ReportAllocs()
	b.SetBytes(bytes)
	tokens := 0
	start := time.Now()
	for b.Loop() {
		for _, s := range texts {
			ids = t.Encode(ids[:0], s, 256)
			tokens += len(ids)
		}
	}
	sec := time.Since(start).Seconds()
	b.ReportMetric(float64(b.N*len(texts))/sec, "chunks/s")
	b.ReportMetric(float64(tokens)/sec, "tokens/s")
}
