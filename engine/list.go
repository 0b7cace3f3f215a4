package engine

import (
	"context"

	"github.com/micro-rag/micro-rag-mcp/index/glob"
)

// IndexedFile is one indexed file, as the CLI's list shows it.
type IndexedFile struct {
	Path   string  `json:"path"` // relative to the data folder, "/"-separated (schema.EncodePath)
	Ext    string  `json:"ext"`
	Size   int64   `json:"size"`
	Mtime  float64 `json:"mtime"`  // seconds since the epoch
	Chunks int     `json:"chunks"` // 0: no text found
	Pages  int     `json:"pages,omitempty"`
}

// ListFiles lists the files of the last commit whose path matches pattern
// (glob.Parse syntax; "" for all), by path. Like ReadStatus it reads the
// index files alone: no model, no lock, nothing written.
func (e *Engine) ListFiles(pattern string) ([]IndexedFile, error) {
	g, err := glob.Parse(pattern)
	if err != nil {
		return nil, err
	}
	sum, err := e.readSummary(context.Background())
	if err != nil {
		return nil, err
	}
	out := []IndexedFile{}
	for _, f := range sum.Files {
		if g.Match(f.Path) {
			out = append(out, IndexedFile{Path: f.Path, Ext: f.Ext, Size: f.Size, Mtime: f.Mtime,
				Chunks: len(f.ChunkIDs), Pages: len(f.PageStarts)})
		}
	}
	return out, nil
}
