package mcpserver_test

import (
	"context"
	"strings"
	"testing"

	"github.com/mark3labs/mcp-go/mcp"
)

// The server and both tools carry the instance's --title, so a client with
// several instances can tell them apart.
func TestTitlesOverTheWire(t *testing.T) {
	c, init := connect(t, nil)
	if init.ServerInfo.Title != "team-docs" {
		t.Errorf("serverInfo.title = %q, want team-docs", init.ServerInfo.Title)
	}
	list, err := c.ListTools(context.Background(), mcp.ListToolsRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range list.Tools {
		if !strings.Contains(tool.Title, "team-docs") || !strings.Contains(tool.Description, `"team-docs"`) {
			t.Errorf("tool %s: title %q, description %q do not name the instance", tool.Name, tool.Title, tool.Description)
		}
	}
	if len(list.Tools) != 2 {
		t.Errorf("%d tools, want 2", len(list.Tools))
	}
}
