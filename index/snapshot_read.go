package index

import (
	"fmt"
	"slices"
	"sort"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Record returns the manifest record of one live chunk.
func (sn *Snapshot) Record(id int64) (schema.Record, error) { return sn.record(id) }

// FileChunks returns the records of a file's live chunks ordered by chunk
// index, or false when the path is not indexed.
func (sn *Snapshot) FileChunks(path string) ([]schema.Record, bool, error) {
	f, ok := sn.files.Get(path)
	if !ok {
		return nil, false, nil
	}
	out := make([]schema.Record, 0, len(f.ChunkIDs))
	for _, id := range f.ChunkIDs {
		rec, err := sn.record(id)
		if err != nil {
			return nil, true, err
		}
		out = append(out, rec)
	}
	slices.SortFunc(out, func(a, b schema.Record) int { return a.ChunkIndex - b.ChunkIndex })
	return out, true, nil
}

// FileChunk returns chunk number i (from 0) of a file. ok is false when the
// file is not indexed; a chunk number out of range is an error.
func (sn *Snapshot) FileChunk(path string, i int) (rec schema.Record, ok bool, err error) {
	f, ok := sn.files.Get(path)
	if !ok {
		return schema.Record{}, false, nil
	}
	if i < 0 || i >= len(f.ChunkIDs) {
		return schema.Record{}, true, fmt.Errorf("%s has chunks 0 to %d; there is no chunk %d", path, len(f.ChunkIDs)-1, i)
	}
	// Chunk ids are stored in chunk order; check rather than trust it.
	if rec, err = sn.record(f.ChunkIDs[i]); err == nil && rec.ChunkIndex == i {
		return rec, true, nil
	}
	recs, _, err := sn.FileChunks(path)
	if err != nil {
		return schema.Record{}, true, err
	}
	for _, r := range recs {
		if r.ChunkIndex == i {
			return r, true, nil
		}
	}
	return schema.Record{}, true, fmt.Errorf("%s has no chunk %d", path, i)
}

// Paths lists the indexed files in byte order. The slice is shared: do not
// modify it.
func (sn *Snapshot) Paths() []string {
	sn.pathsOnce.Do(func() {
		sn.paths = make([]string, 0, sn.files.Len())
		for p := range sn.files.All() {
			sn.paths = append(sn.paths, p)
		}
		sort.Strings(sn.paths)
	})
	return sn.paths
}

// Similarity is the cosine similarity of a normalised query vector and the
// stored vector of chunk id (for candidates found by other means than FAISS).
func (sn *Snapshot) Similarity(query []float32, id int64) (float32, error) {
	if _, ok := sn.live.Get(id); !ok {
		return 0, fmt.Errorf("chunk %d is not live", id)
	}
	v, err := sn.index.Reconstruct(id, nil)
	if err != nil {
		return 0, err
	}
	var dot float32
	for i, x := range v {
		dot += x * query[i]
	}
	return dot, nil
}

// LexicalQueryWeight is the keyword index's QueryWeight for query (0 when
// there is no keyword index or no query term occurs in it).
func (sn *Snapshot) LexicalQueryWeight(query string) float64 {
	if sn.lex == nil {
		return 0
	}
	return sn.lex.QueryWeight(query)
}

// LexicalQueryWeights is the keyword index's QueryWeights for query.
func (sn *Snapshot) LexicalQueryWeights(query string) (weight, rare float64) {
	if sn.lex == nil {
		return 0, 0
	}
	return sn.lex.QueryWeights(query)
}

// LexicalQueryCoverage is the keyword index's QueryCoverage for query (0
// when there is no keyword index).
func (sn *Snapshot) LexicalQueryCoverage(query string) float64 {
	if sn.lex == nil {
		return 0
	}
	return sn.lex.QueryCoverage(query)
}
