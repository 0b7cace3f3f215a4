package embed

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
)

// benchWords is plain English vocabulary for seeded, chunk-like passages.
var benchWords = strings.Fields(`the of and to in is that for it as was with be by on not he this are or his
from at which but have an they you were her she there been one all we their has would when if so what
no more about can said into up time only other them new some could these two may first then do any like
my now over such our man me even most made after also did many before must through back years where much
your way well down should because each just those people how too little state good very make world
still own see men work long get here between both life being under never day same another know while
last might us great old year off come since against go came right used take three index search query
document folder file chunk model vector embedding server process local network runtime memory thread
system performance result request response library reader paragraph sentence word character token`)

// passages makes n seeded ~1000-character English passages, the chunk
// size the pipeline sends.
func passages(n int) []string {
	rng := rand.New(rand.NewPCG(7, 11))
	out := make([]string, n)
	for i := range out {
		var sb strings.Builder
		for sb.Len() < 1000 {
			words := 6 + rng.IntN(14)
			for w := range words {
				word := benchWords[rng.IntN(len(benchWords))]
				if w == 0 {
					word = strings.ToUpper(word[:1]) + word[1:]
				}
				sb.WriteString(word)
				if w < words-1 {
					sb.WriteByte(' ')
				}
			}
			sb.WriteString(". ")
		}
		out[i] = sb.String()[:1000]
	}
	return out
}

func benchEmbedder(b *testing.B, threads int) *Embedder {
	e, err := New(Config{Threads: threads})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { e.Close() })
	return e
}

// BenchmarkEmbedBatch64 is the embedder stage's ceiling: 64 chunks of ~1000
// characters per call, tokenisation included.
func BenchmarkEmbedBatch64(b *testing.B) {
	texts := passages(64)
	var bytes int64
	for _, t := range texts {
		bytes += int64(len(t))
	}
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			e := benchEmbedder(b, threads)
			out, err := e.Embed(nil, texts) // warm up: buffers and ORT arena
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.SetBytes(bytes)
			b.ResetTimer()
			for b.Loop() {
				if out, err = e.Embed(out[:0], texts); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(texts)*b.N)/b.Elapsed().Seconds(), "chunks/s")
			sink = out
		})
	}
}

// BenchmarkEmbedTokens is the model alone: the same batch pre-tokenised.
func BenchmarkEmbedTokens(b *testing.B) {
	for _, threads := range []int{1, 2} {
		b.Run(fmt.Sprintf("threads=%d", threads), func(b *testing.B) {
			e := benchEmbedder(b, threads)
			var ids [][]int32
			tokens := 0
			for _, t := range passages(64) {
				ids = append(ids, e.Tokenizer().Encode(nil, t, tokenizer.MaxSeqLen))
				tokens += len(ids[len(ids)-1])
			}
			out, err := e.EmbedTokens(nil, ids)
			if err != nil {
				b.Fatal(err)
			}
			b.ReportAllocs()
			b.ResetTimer()
			for b.Loop() {
				if out, err = e.EmbedTokens(out[:0], ids); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(len(ids)*b.N)/b.Elapsed().Seconds(), "chunks/s")
			b.ReportMetric(float64(tokens)/float64(len(ids)), "tokens/chunk")
			sink = out
		})
	}
}

var sink []float32

// BenchmarkEmbedTokensParallel runs two callers at once on one session with
// one intra-op thread each: parallelism across batches instead of inside one.
// Compare with BenchmarkEmbedTokens/threads=2 in the same run.
func BenchmarkEmbedTokensParallel(b *testing.B) {
	e := benchEmbedder(b, 1)
	var ids [][]int32
	for _, t := range passages(64) {
		ids = append(ids, e.Tokenizer().Encode(nil, t, tokenizer.MaxSeqLen))
	}
	if _, err := e.EmbedTokens(nil, ids); err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	b.ResetTimer()
	for b.Loop() {
		errs := make(chan error, 2)
		for range 2 {
			go func() {
				_, err := e.EmbedTokens(nil, ids)
				errs <- err
			}()
		}
		for range 2 {
			if err := <-errs; err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ReportMetric(float64(2*len(ids)*b.N)/b.Elapsed().Seconds(), "chunks/s")
}

// BenchmarkEmbedQuery is one search query's embedding (a short question),
// by the fp32 file with 1 or 2 intra-op threads and by the default q8 file
// (opened as TestDefaultModelNearFP32 opens it), taking turns.
func BenchmarkEmbedQuery(b *testing.B) {
	const q = "how do I keep a sourdough starter alive over the holidays"
	m, err := model.Lookup(model.Q8Name)
	if err != nil {
		b.Fatal(err)
	}
	q8 := openModel(b, m, "make setup builds it")
	fp1, fp2 := benchEmbedder(b, 1), benchEmbedder(b, 2)
	for _, c := range []struct {
		name string
		e    *Embedder
	}{{"q8", q8}, {"fp32-threads-1", fp1}, {"fp32-threads-2", fp2}} {
		b.Run(c.name, func(b *testing.B) {
			var dst []float32
			for b.Loop() {
				var err error
				if dst, err = c.e.EmbedQuery(dst[:0], q); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
