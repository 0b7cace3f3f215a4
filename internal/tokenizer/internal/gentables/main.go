// Command gentables regenerates internal/tokenizer/tables.go and
// testdata/normref.txt.gz from the reference tokenizer (go generate in
// internal/tokenizer). It finds the model's tokenizer.json the way the server
// does and runs testdata/gen_tables.py, which needs python3 with
// tokenizers==0.23.3.
package main

import (
	"fmt"
	"os"
	"os/exec"

	"github.com/micro-rag/micro-rag-mcp/internal/model"
)

func main() {
	files, err := model.Locate("")
	if err != nil {
		fmt.Fprintln(os.Stderr, "gentables:", err)
		os.Exit(1)
	}
	cmd := exec.Command("python3", "gen_tables.py", files.Tokenizer)
	cmd.Dir = "testdata" // the script writes ../tables.go
	cmd.Stdout, cmd.Stderr = os.Stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		fmt.Fprintln(os.Stderr, "gentables:", err)
		os.Exit(1)
	}
}
