// Package mcpcall holds the few steps a Go MCP client of this server
// repeats: call a tool, read its text, decode its structured content. The
// demo and the evaluations use it; it is not API.
package mcpcall

import (
	"context"
	"encoding/json"
	"strings"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/mcp"
)

// Tool calls the tool name with args.
func Tool(ctx context.Context, c *client.Client, name string, args map[string]any) (*mcp.CallToolResult, error) {
	req := mcp.CallToolRequest{}
	req.Params.Name = name
	req.Params.Arguments = args
	return c.CallTool(ctx, req)
}

// Text joins the text blocks of a tool result.
func Text(res *mcp.CallToolResult) string {
	var b strings.Builder
	for _, c := range res.Content {
		if tc, ok := c.(mcp.TextContent); ok {
			b.WriteString(tc.Text)
		}
	}
	return b.String()
}

// Decode fills v from a result's structured content (a map after the
// client decoded it) by a JSON round trip.
func Decode(structured, v any) error {
	b, err := json.Marshal(structured)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, v)
}
