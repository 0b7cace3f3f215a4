package chunk

import "testing"

var chunkSink []Chunk

// BenchmarkSplit chunks about 1 MB of seeded English prose with the default
// configuration. minilm is production (WordPiece with FitPrefix); countonly
// makes the token-window search use Count alone; pieces is the cheap test
// counter, showing the splitter's own cost.
func BenchmarkSplit(b *testing.B) {
	text := englishText(2024, 1<<20)
	tok := realTokenizer(b)
	for _, bc := range []struct {
		name string
		tc   TokenCounter
	}{{"tc=minilm", tok}, {"tc=countonly", countOnly{tok}}, {"tc=pieces", pieceCounter{}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			n := 0
			for b.Loop() {
				chunkSink = Split(text, nil, Default, bc.tc)
				n += len(chunkSink)
			}
			b.ReportMetric(float64(n)/b.Elapsed().Seconds(), "chunks/s")
		})
	}
}

// BenchmarkSplitCJK is the token-bound case: every chunk needs the token
// window search.
func BenchmarkSplitCJK(b *testing.B) {
	text := hardTexts()["cjk"]
	tok := realTokenizer(b)
	for _, bc := range []struct {
		name string
		tc   TokenCounter
	}{{"tc=minilm", tok}, {"tc=countonly", countOnly{tok}}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(text)))
			b.ReportAllocs()
			for b.Loop() {
				chunkSink = Split(text, nil, Default, bc.tc)
			}
		})
	}
}
