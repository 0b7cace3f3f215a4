package stages

import (
	"sync"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/internal/embed"
	"github.com/micro-rag/micro-rag-mcp/internal/model"
	"github.com/micro-rag/micro-rag-mcp/internal/tokenizer"
)

// The real model's tokenizer and embedder, loaded once per test process.
var (
	sharedTokenizer = sync.OnceValues(func() (*tokenizer.Tokenizer, error) {
		files, err := model.Locate("")
		if err != nil {
			return nil, err
		}
		return tokenizer.Load(files.Tokenizer)
	})
	sharedEmbedder = sync.OnceValues(func() (*embed.Embedder, error) { return embed.New(embed.Config{}) })
)

func testTokenizer(t *testing.T) *tokenizer.Tokenizer {
	t.Helper()
	tok, err := sharedTokenizer()
	if err != nil {
		t.Fatalf("loading the tokenizer (run `make setup` first): %v", err)
	}
	return tok
}

func testEmbedder(t *testing.T) *embed.Embedder {
	t.Helper()
	e, err := sharedEmbedder()
	if err != nil {
		t.Fatalf("creating the embedder (run `make setup` first): %v", err)
	}
	return e
}
