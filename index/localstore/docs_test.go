package localstore

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// TestFormatPagesCoverEveryFile: index/docs lists every file the index
// writes, each page exists, and the schema table has the current schema,
// so a layout change without its page or its bump shows here.
func TestFormatPagesCoverEveryFile(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "docs", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(raw)
	for _, name := range []string{VersionFile, CommitFile, FilesFile, ManifestFile, FaissFile, LockFile, "files-<G>.log.jsonl", "vectors-<G>.seg", "lexical-<G>.seg", "last-run.json", "scope.json", "data-folder.json"} {
		if !strings.Contains(readme, "`"+name+"`") {
			t.Errorf("index/docs/README.md does not list %s", name)
		}
	}
	for _, page := range []string{"version", "commit-json", "files-json", "file-log", "manifest", "faiss-index", "vector-segments", "lexical-segments", "index-lock", "last-run", "scope-json", "data-folder-json"} {
		if !strings.Contains(readme, "("+page+".md)") {
			t.Errorf("index/docs/README.md does not link %s.md", page)
		}
		if _, err := os.Stat(filepath.Join("..", "docs", page+".md")); err != nil {
			t.Error(err)
		}
	}
	if !strings.Contains(readme, fmt.Sprintf("\n| %d | ", schema.SchemaVersion)) {
		t.Errorf("index/docs/README.md has no row for schema %d", schema.SchemaVersion)
	}
}
