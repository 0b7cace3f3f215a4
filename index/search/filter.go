package search

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
)

// Filter narrows a search to some files. It is applied inside the ranking,
// before the top_k passages are cut, so a selective filter still returns
// top_k passages when that many match. The zero value passes every file.
type Filter struct {
	// Path matches a slash-separated path relative to the data folder (a
	// path_glob's Match); nil passes every path.
	Path func(rel string) bool
	// Exts are extensions as the index records them (".md", lower case;
	// "" for files without one); empty passes every extension.
	Exts []string
	// ModifiedAfter and ModifiedBefore bound a file's modification time,
	// both exclusive; zero leaves that side open.
	ModifiedAfter, ModifiedBefore time.Time
}

// active reports whether f leaves out anything.
func (f *Filter) active() bool {
	return f != nil && (f.Path != nil || len(f.Exts) > 0 || !f.ModifiedAfter.IsZero() || !f.ModifiedBefore.IsZero())
}

// pass reports whether a file with this path, extension and mtime (Unix
// seconds) passes.
func (f *Filter) pass(path, ext string, mtime float64) bool {
	if len(f.Exts) > 0 && !slices.Contains(f.Exts, strings.ToLower(ext)) {
		return false
	}
	t := time.Unix(0, int64(mtime*1e9))
	if !f.ModifiedAfter.IsZero() && !t.After(f.ModifiedAfter) {
		return false
	}
	if !f.ModifiedBefore.IsZero() && !t.Before(f.ModifiedBefore) {
		return false
	}
	return f.Path == nil || f.Path(path)
}

// chunkIDs lists the live chunks of the files snap holds that pass f.
func (f *Filter) chunkIDs(snap *index.Snapshot) []int64 {
	var ids []int64
	for _, p := range snap.Paths() {
		if e, ok := snap.File(p); ok && f.pass(e.Path, e.Ext, e.Mtime) {
			ids = append(ids, e.ChunkIDs...)
		}
	}
	return ids
}

// ExactFilterChunks: a filter passing at most this many chunks, or a
// twentieth of the index, is ranked by scoring each passing chunk (one
// vector read and dot product each); a broader one by reading the
// unfiltered rankings deeper until enough passing chunks come up. A
// variable so that tests can take either path.
var ExactFilterChunks = 20000

// narrow prepares r for f over its snapshot: a selective filter gives the
// chunks to score exactly; a broad one is checked chunk by chunk as the
// rankings are read. It returns how many chunks can match at most.
func (r *ranker) narrow(f *Filter) int {
	if !f.active() {
		return r.snap.Chunks()
	}
	r.filter = f
	ids := f.chunkIDs(r.snap)
	if len(ids) <= ExactFilterChunks || len(ids) <= r.snap.Chunks()/20 {
		r.within, r.exact = ids, true
	}
	return len(ids)
}

// passingTop returns the best pool hits of a ranking that pass r.filter,
// reading it deeper (top(k) returns its best k) until pool pass or it runs
// out: the hits a search of only the passing files would rank. full says
// the ranking may hold more.
func (r *ranker) passingTop(pool int, top func(k int) ([]index.Hit, error)) ([]index.Hit, bool, error) {
	for k := pool; ; k *= 4 {
		hits, err := top(k)
		if err != nil {
			return nil, false, err
		}
		full := len(hits) == k
		if r.filter != nil {
			hits = slices.DeleteFunc(hits, func(h index.Hit) bool {
				return !r.filter.pass(h.Record.Path, h.Record.Ext, h.Record.Mtime)
			})
		}
		if len(hits) >= pool || !full {
			return hits[:min(pool, len(hits))], full || len(hits) > pool, nil
		}
	}
}

// rankWithin is rank over the chunks of r.within only: every one is scored
// by its cosine and its keyword evidence, and each ranking keeps its best
// pool.
func (r *ranker) rankWithin(pool int) (dense, keyword []index.Hit, denseEvidence []lexical.Evidence, full bool, err error) {
	ids := r.within
	var ev []lexical.Evidence
	if r.mode != Dense {
		if _, ev, err = r.snap.SearchLexicalWith(r.query, 1, ids); err != nil {
			return nil, nil, nil, false, fmt.Errorf("keyword search: %w", err)
		}
	}
	type scored struct {
		at    int // index into ids
		score float32
	}
	top := func(list []scored) ([]index.Hit, error) {
		slices.SortFunc(list, func(a, b scored) int {
			return cmp.Or(cmp.Compare(b.score, a.score), cmp.Compare(ids[a.at], ids[b.at]))
		})
		full = full || len(list) > pool
		list = list[:min(pool, len(list))]
		hits := make([]index.Hit, len(list))
		for i, s := range list {
			rec, err := r.snap.Record(ids[s.at])
			if err != nil {
				return nil, err
			}
			hits[i] = index.Hit{Record: rec, Score: s.score}
			if ev != nil {
				hits[i].Share = ev[s.at].Coverage
			}
		}
		return hits, nil
	}
	if r.mode != Keyword {
		list := make([]scored, len(ids))
		for i, id := range ids {
			c, err := r.snap.Similarity(r.vec, id)
			if err != nil {
				return nil, nil, nil, false, err
			}
			list[i] = scored{i, c}
		}
		if dense, err = top(list); err != nil {
			return nil, nil, nil, false, err
		}
		if ev != nil {
			at := make(map[int64]int, len(ids))
			for i, id := range ids {
				at[id] = i
			}
			denseEvidence = make([]lexical.Evidence, len(dense))
			for i, h := range dense {
				denseEvidence[i] = ev[at[h.Record.ID]]
			}
		}
	}
	if r.mode != Dense {
		var list []scored
		for i, e := range ev {
			if e.Score > 0 {
				list = append(list, scored{i, float32(e.Score)})
			}
		}
		if keyword, err = top(list); err != nil {
			return nil, nil, nil, false, err
		}
	}
	return dense, keyword, denseEvidence, full, nil
}
