// Command micro-rag-mcp serves semantic search over one folder of documents
// through the Model Context Protocol on stdio.
package main

import (
	"fmt"
	"os"
)

func main() {
	fmt.Fprintln(os.Stderr, "micro-rag-mcp: not yet wired")
	os.Exit(2)
}
