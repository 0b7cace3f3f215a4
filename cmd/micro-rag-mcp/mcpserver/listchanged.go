package mcpserver

import (
	"context"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"
)

// IndexPollEvery is how often the server looks whether the index changed,
// to tell clients that the resource list did.
const IndexPollEvery = time.Second

// watchIndex sends notifications/resources/list_changed to every client
// each time version changes, until ctx ends. The documents are the
// resources, so any commit may change their list; the first version seen
// is the baseline, and "" (not loaded yet) is no version.
func watchIndex(ctx context.Context, s *server.MCPServer, version func() string, ticks <-chan time.Time) {
	last := version()
	for {
		select {
		case <-ctx.Done():
			return
		case <-ticks:
		}
		v := version()
		if v == last || v == "" {
			continue
		}
		s.SendNotificationToAllClients(mcp.MethodNotificationResourcesListChanged, nil)
		last = v
	}
}
