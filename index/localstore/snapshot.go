package localstore

import (
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/scan"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Snapshot is an immutable view of a committed index: its vectors (a FAISS
// index shared with earlier snapshots plus its own small delta), the live
// chunks and the files. Searches hold a reference (Store.Acquire) and
// Release it; the C memory is freed when the last reference goes.
type Snapshot struct {
	refs     atomic.Int64
	index    *layered
	live     *cowMap[int64, liveChunk] // shared with the writer, copy on write
	files    *cowMap[string, *schema.FileEntry]
	doc      commitRecord // header only; Files is nil
	manifest *os.File     // nil when the manifest is empty
	lex      *lexical.Index
	// For large indexes: 4-bit codes of the vectors, scanned first; the candidates are then scored exactly from FAISS.
	codes *scan.Codes
	// paths is the sorted list of files, built on first use (see Paths).
	pathsOnce sync.Once
	paths     []string
	index.ViewMemo
}

// scanWant is how many first-pass candidates are rescored exactly for k
// results: 4-bit codes need twice as many as int8 ones did
// (docs/decisions.md).
func scanWant(k int) int { return max(20*k, 400) }

// codeEdit is what a commit changed since prev, so the next snapshot's scan
// codes are prev's edited (sharing their bulk), not every vector quantised
// again.
type codeEdit struct {
	prev    *Snapshot
	removed []int64
	addIDs  []int64
	addVecs []float32
}

// codes returns the edited codes, or nil when prev has none.
func (e *codeEdit) codes() (*scan.Codes, error) {
	if e == nil || e.prev == nil || e.prev.codes == nil {
		return nil, nil
	}
	return e.prev.codes.Edit(e.removed, e.addIDs, e.addVecs)
}

func (sn *Snapshot) tryRef() bool {
	for {
		n := sn.refs.Load()
		if n <= 0 {
			return false
		}
		if sn.refs.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// Release drops a reference taken by Store.Acquire.
func (sn *Snapshot) Release() {
	if sn.refs.Add(-1) == 0 {
		sn.index.Close()
		if sn.manifest != nil {
			sn.manifest.Close()
		}
	}
}

// Files is the number of indexed files.
func (sn *Snapshot) Files() int { return sn.files.Len() }

// Chunks is the number of live (searchable) chunks.
func (sn *Snapshot) Chunks() int { return sn.live.Len() }

// Tombstones is the number of deleted chunks still recorded in the manifest.
func (sn *Snapshot) Tombstones() int { return sn.doc.Tombstones }

// LastReindex is the RFC 3339 time of the last completed reindex, or "".
func (sn *Snapshot) LastReindex() string { return sn.doc.LastReindex }

// File returns the entry for a path relative to the data folder.
func (sn *Snapshot) File(path string) (*schema.FileEntry, bool) {
	return sn.files.Get(path)
}

// Search returns up to k hits for a normalised query vector, best first.
func (sn *Snapshot) Search(query []float32, k int) ([]index.Hit, error) {
	near, err := sn.Nearest(query, k)
	if err != nil {
		return nil, err
	}
	hits := make([]index.Hit, 0, len(near))
	for _, m := range near {
		rec, err := sn.Record(m.ID)
		if err != nil {
			return nil, err
		}
		hits = append(hits, index.Hit{Record: rec, Score: m.Score})
	}
	return hits, nil
}

// Nearest is Search without reading the records: up to k chunk ids with
// their cosine with the query, best first.
func (sn *Snapshot) Nearest(query []float32, k int) ([]index.Match, error) {
	if k <= 0 || sn.live.Len() == 0 {
		return nil, nil
	}
	k = min(k, sn.live.Len())
	var dist []float32
	var labels []int64
	if sn.codes != nil {
		dist, labels = sn.rescored(query, k)
	} else {
		dist, labels = make([]float32, k), make([]int64, k)
		if err := sn.index.SearchInto(query, k, dist, labels); err != nil {
			return nil, err
		}
	}
	out := make([]index.Match, 0, k)
	for i, id := range labels {
		if id < 0 {
			break
		}
		out = append(out, index.Match{ID: id, Score: dist[i]})
	}
	return out, nil
}

// rescored takes the first pass's best candidates and scores them exactly
// against the stored fp32 vectors, returning the top k. (Two goroutines
// reading them back were no faster: BenchmarkScanSearch1M.)
func (sn *Snapshot) rescored(query []float32, k int) ([]float32, []int64) {
	ids := sn.codes.Candidates(query, scanWant(k), 0, nil)
	best := make([]idScore, 0, len(ids))
	vec := make([]float32, sn.index.D())
	for _, id := range ids {
		v, err := sn.index.Reconstruct(id, vec)
		if err != nil {
			continue
		}
		best = append(best, idScore{id, dot(v, query)})
	}
	slices.SortFunc(best, bestFirst)
	best = best[:min(k, len(best))]
	dist, labels := make([]float32, len(best)), make([]int64, len(best))
	for i, b := range best {
		dist[i], labels[i] = b.score, b.id
	}
	return dist, labels
}

// Record reads one live chunk's manifest line back.
func (sn *Snapshot) Record(id int64) (schema.Record, error) {
	c, ok := sn.live.Get(id)
	if !ok || sn.manifest == nil {
		return schema.Record{}, fmt.Errorf("chunk %d is not in the snapshot's manifest", id)
	}
	buf := make([]byte, c.Length)
	if _, err := sn.manifest.ReadAt(buf, c.Offset); err != nil {
		return schema.Record{}, fmt.Errorf("read manifest record %d: %w", id, err)
	}
	var rec schema.Record
	if err := json.Unmarshal(buf, &rec); err != nil || rec.ID != id {
		return schema.Record{}, fmt.Errorf("manifest record %d unreadable at byte %d", id, c.Offset)
	}
	return rec, nil
}

// ChunkVectors returns the stored vectors of a file's chunks keyed by chunk
// text hash, so a changed file re-embeds only chunks whose text changed.
// Safe to call concurrently with searches.
func (sn *Snapshot) ChunkVectors(path string) map[uint64][]float32 {
	f, ok := sn.files.Get(path)
	if !ok {
		return nil
	}
	out := make(map[uint64][]float32, len(f.ChunkIDs))
	for _, id := range f.ChunkIDs {
		c, ok := sn.live.Get(id)
		if !ok {
			continue
		}
		if v, err := sn.index.Reconstruct(id, nil); err == nil {
			out[c.TextHash] = v
		}
	}
	return out
}
