package localstore

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// FileChunk returns chunk number i (from 0) of a file. ok is false when the
// file is not indexed; a chunk number out of range is an error.
func (sn *Snapshot) FileChunk(path string, i int) (schema.Record, bool, error) {
	f, ok := sn.files.Get(path)
	if !ok {
		return schema.Record{}, false, nil
	}
	if i < 0 || i >= len(f.ChunkIDs) {
		return schema.Record{}, true, fmt.Errorf("%s has chunks 0 to %d; there is no chunk %d", path, len(f.ChunkIDs)-1, i)
	}
	// Chunk ids are kept in chunk order (the chunker numbers chunks by
	// position, PutFile hands ids out in that order): another order is damage.
	rec, err := sn.Record(f.ChunkIDs[i])
	if err == nil && rec.ChunkIndex != i {
		err = fmt.Errorf("%s: chunk %d holds chunk index %d", path, f.ChunkIDs[i], rec.ChunkIndex)
	}
	return rec, true, err
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

// headBytes is how much of a manifest line Head reads first: the fields
// before the text fit in it unless the path is long.
const headBytes = 512

// textKey starts the text field of a manifest line. The fields before it
// are the record's head; a quote inside a JSON string is always escaped,
// so these bytes cannot occur inside the path.
var textKey = []byte(`,"text":`)

// Head returns the manifest record of one live chunk without its text,
// headings and the fields after them: what ranking passages needs, read and
// decoded from the start of its line only.
func (sn *Snapshot) Head(id int64) (schema.Record, error) {
	rec, _, err := sn.head(id, nil)
	return rec, err
}

// Heads is Head for many chunks in one call, in the order of ids.
func (sn *Snapshot) Heads(ids []int64) ([]schema.Record, error) {
	out := make([]schema.Record, len(ids))
	buf := make([]byte, 0, headBytes+1)
	for i, id := range ids {
		var err error
		if out[i], buf, err = sn.head(id, buf); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// head is Head reading into buf, returned for the next read.
func (sn *Snapshot) head(id int64, buf []byte) (schema.Record, []byte, error) {
	c, ok := sn.live.Get(id)
	if !ok || sn.manifest == nil {
		return schema.Record{}, buf, fmt.Errorf("chunk %d is not in the snapshot's manifest", id)
	}
	for n := min(int(c.Length), headBytes); ; n = min(int(c.Length), 4*n) {
		if cap(buf) < n+1 {
			buf = make([]byte, 0, n+1)
		}
		line := buf[:n]
		if _, err := sn.manifest.ReadAt(line, c.Offset); err != nil {
			return schema.Record{}, buf, fmt.Errorf("read manifest record %d: %w", id, err)
		}
		if i := bytes.Index(line, textKey); i >= 0 {
			var rec schema.Record
			if err := json.Unmarshal(append(line[:i], '}'), &rec); err != nil || rec.ID != id {
				return schema.Record{}, buf, fmt.Errorf("manifest record %d unreadable at byte %d", id, c.Offset)
			}
			return rec, buf, nil
		}
		if n == int(c.Length) {
			rec, err := sn.Record(id) // a line without text: the whole record
			return rec, buf, err
		}
	}
}

// Similarities are the cosine similarities of a normalised query vector
// and the stored vectors of chunks ids (found by other means than FAISS),
// in the order of ids.
func (sn *Snapshot) Similarities(query []float32, ids []int64) ([]float32, error) {
	out := make([]float32, len(ids))
	vec := make([]float32, sn.index.D())
	for j, id := range ids {
		v, err := sn.liveVector(id, vec)
		if err != nil {
			return nil, err
		}
		out[j] = dot(v, query)
	}
	return out, nil
}

// liveVector is the stored vector of live chunk id, in buf when it has
// room.
func (sn *Snapshot) liveVector(id int64, buf []float32) ([]float32, error) {
	if _, ok := sn.live.Get(id); !ok {
		return nil, fmt.Errorf("chunk %d is not live", id)
	}
	return sn.index.Reconstruct(id, buf)
}

// Vectors are the stored vectors of live chunks ids, in the order of ids.
func (sn *Snapshot) Vectors(ids []int64) ([][]float32, error) {
	out := make([][]float32, len(ids))
	for j, id := range ids {
		v, err := sn.liveVector(id, nil)
		if err != nil {
			return nil, err
		}
		out[j] = v
	}
	return out, nil
}

// LexicalQuery tokenises query once for the keyword index, to be weighed
// and searched (an empty index's query when there is no keyword index).
func (sn *Snapshot) LexicalQuery(query string) index.KeywordQuery {
	if sn.lex == nil {
		return lexical.Empty().Query(query)
	}
	return sn.lex.Query(query)
}
