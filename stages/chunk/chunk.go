// Package chunk cuts normalised document text into overlapping, paragraph-
// aware chunks that each fit the embedding model's token window.
package chunk

// Config sets chunk size and overlap in Unicode code points.
type Config struct {
	Size      int // target chunk length
	Overlap   int // code points shared with the previous chunk
	MaxTokens int // model window including [CLS] and [SEP]
}

// Default is 1000/200 code points (docs/how-it-works.md) with MiniLM's
// 256-token window.
var Default = Config{Size: 1000, Overlap: 200, MaxTokens: 256}

// TokenCounter measures text in model tokens (word pieces, no special tokens).
type TokenCounter interface {
	Count(text string) int
}

// Chunk is one piece of a document. CharStart/CharEnd are code-point offsets
// into the document text; the text between them is exactly Text.
type Chunk struct {
	Index     int
	Text      string
	CharStart int
	CharEnd   int
	Page      int    // 1-based page of CharStart for paged formats, else 0
	LineStart int    // 1-based line of CharStart
	LineEnd   int    // 1-based line of the last code point
	Headings  string // headings in scope and inside, one per line (AddHeadings)
}
