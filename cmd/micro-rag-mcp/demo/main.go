// Command demo drives a built micro-rag-mcp over the MCP protocol on stdio:
// it indexes a folder (the index goes to a temporary folder), runs a few
// queries and prints ranked results with citations, the best one's
// passage in full. It is what make demo runs.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/internal/mcpcall"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

var queries = []string{
	"What caused the checkout outage and how was it fixed?",
	"How many weeks of parental leave do I get?",
	"How does the ingestion service deliver events exactly once?",
	"Steps to promote a PostgreSQL replica",
	"When does the v1 REST API go away?",
}

func main() {
	bin := flag.String("bin", "bin/micro-rag-mcp", "the micro-rag-mcp binary")
	data := flag.String("data", "testdata/sample", "folder to index")
	verbose := flag.Bool("v", false, "show the server's log on stderr")
	flag.Parse()
	if err := run(os.Stdout, *bin, *data, *verbose); err != nil {
		fmt.Fprintln(os.Stderr, "demo:", err)
		os.Exit(1)
	}
}

func run(w io.Writer, bin, data string, verbose bool) error {
	index, err := os.MkdirTemp("", "micro-rag-demo-index-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(index)

	var opts []transport.StdioOption
	if verbose {
		opts = append(opts, transport.WithCommandStderrWriter(os.Stderr))
	}
	c, err := client.NewStdioMCPClientWithOptions(bin, nil, []string{
		"--data-folder", data, "--index-folder", index,
		"--title", "sample-docs", "--inst", "Engineering team documents: onboarding, incidents, designs, HR.",
	}, opts...)
	if err != nil {
		return err
	}
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()

	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "micro-rag-demo", Version: "1"}
	start := time.Now()
	info, err := c.Initialize(ctx, init)
	if err != nil {
		return fmt.Errorf("initialize: %w", err)
	}
	tools, err := c.ListTools(ctx, mcp.ListToolsRequest{})
	if err != nil {
		return err
	}
	var names []string
	for _, t := range tools.Tools {
		names = append(names, t.Name)
	}
	fmt.Fprintf(w, "server %q %s answered in %v; tools: %s\n", info.ServerInfo.Name, info.ServerInfo.Version,
		time.Since(start).Round(time.Millisecond), strings.Join(names, ", "))

	rr, err := reindexed(ctx, c)
	if err != nil {
		return err
	}
	fmt.Fprintf(w, "index ready after %v: %d chunks in the index\n\n", time.Since(start).Round(time.Millisecond), rr.ChunksTotal)

	for _, q := range queries {
		res, err := mcpcall.Tool(ctx, c, "search", map[string]any{"query": q, "top_k": 3})
		if err != nil {
			return err
		}
		if res.IsError {
			return fmt.Errorf("search: %s", mcpcall.Text(res))
		}
		var out mcpserver.ToolOutput
		if err := mcpcall.Decode(res.StructuredContent, &out); err != nil {
			return err
		}
		fmt.Fprintf(w, "Q: %s\n", q)
		if len(out.Results) == 0 {
			fmt.Fprintln(w, "   (no results)")
		}
		for i, r := range out.Results {
			fmt.Fprintf(w, "  %d. %.3f  %s\n", i+1, r.Score, term.Visible(r.Citation()))
			if i == 0 {
				printPassage(w, r.Snippet)
			} else {
				fmt.Fprintf(w, "     %s\n", term.OneLine(r.Snippet, 160))
			}
		}
		fmt.Fprintln(w)
	}
	return nil
}

// printPassage prints the best result's passage as a client's model reads
// it, line by line: its first 160 characters seldom hold the answer.
func printPassage(w io.Writer, text string) {
	lines := strings.Split(strings.TrimSpace(term.VisibleText(text)), "\n")
	for i, line := range lines {
		if i == demoPassageLines {
			fmt.Fprintf(w, "     … %d more lines\n", len(lines)-i)
			break
		}
		fmt.Fprintf(w, "     | %s\n", line)
	}
}

// demoPassageLines bounds the printed passage: the sample's are 20-41 lines.
const demoPassageLines = 45

// reindexed calls reindex until it runs: the server indexes by itself once
// its model is loaded, and a reindex call waits for that (retrying while it
// is busy) and reports the counts.
func reindexed(ctx context.Context, c *client.Client) (engine.ReindexResult, error) {
	var rr engine.ReindexResult
	for {
		res, err := mcpcall.Tool(ctx, c, "reindex", map[string]any{})
		if err != nil {
			return rr, err
		}
		if res.IsError && strings.HasPrefix(mcpcall.Text(res), "busy:") {
			time.Sleep(200 * time.Millisecond)
			continue
		}
		if res.IsError {
			return rr, fmt.Errorf("reindex: %s", mcpcall.Text(res))
		}
		return rr, mcpcall.Decode(res.StructuredContent, &rr)
	}
}
