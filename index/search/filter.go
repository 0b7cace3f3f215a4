package search

import (
	"cmp"
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

	glob string // the path_glob Path matches, for missNote
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
func (f *Filter) chunkIDs(snap index.View) []int64 {
	var ids []int64
	for _, p := range snap.Paths() {
		if e, ok := snap.File(p); ok && f.pass(e.Path, e.Ext, e.Mtime) {
			ids = append(ids, e.ChunkIDs...)
		}
	}
	return ids
}

// exactFilterChunks: a filter passing at most this many chunks, or a
// twentieth of the index, is ranked by scoring each passing chunk (one
// vector read and dot product each); a broader one by reading the
// unfiltered rankings deeper until enough passing chunks come up
// (Options.ExactFilter changes it).
const exactFilterChunks = 20000

// narrow prepares r for f over its snapshot: a selective filter gives the
// chunks to score exactly; a broad one the chunks to keep as the rankings
// are read. It returns how many chunks can match at most.
func (r *ranker) narrow(f *Filter) int {
	if !f.active() {
		return r.snap.Chunks()
	}
	ids := f.chunkIDs(r.snap)
	if len(ids) <= r.exactFilter || len(ids) <= r.snap.Chunks()/20 {
		r.within = &within{ids: ids}
		return len(ids)
	}
	r.passing = make(map[int64]bool, len(ids))
	for _, id := range ids {
		r.passing[id] = true
	}
	return len(ids)
}

// passingTop returns the best pool items of a ranking that pass (nil:
// all do), reading it deeper (top(k) returns its best k) until pool pass or
// it runs out: the items a search of only the passing files would rank.
// all says they are every passing item the ranking holds.
func passingTop[T any](pool int, pass map[int64]bool, id func(T) int64, top func(k int) ([]T, error)) (items []T, all bool, err error) {
	for k := pool; ; k *= 4 {
		got, err := top(k)
		if err != nil {
			return nil, false, err
		}
		out := len(got) < k // the ranking holds no more
		if pass != nil {
			got = slices.DeleteFunc(got, func(x T) bool { return !pass[id(x)] })
		}
		if pass == nil || len(got) >= pool || out {
			return got[:min(pool, len(got))], out && len(got) <= pool, nil
		}
	}
}

// nearest is Snapshot.Nearest to depth pool over the chunks r passes.
func (r *ranker) nearest(pool int) ([]index.Match, bool, error) {
	return passingTop(pool, r.passing, func(m index.Match) int64 { return m.ID },
		func(k int) ([]index.Match, error) { return r.snap.Nearest(r.vec, k) })
}

// keywordTop is the keyword ranking to depth pool over the chunks r
// passes, with the keyword evidence of the chunks in also.
func (r *ranker) keywordTop(pool int, also []int64) (hits []lexical.Result, ev []lexical.Evidence, all bool) {
	hits, all, _ = passingTop(pool, r.passing, func(h lexical.Result) int64 { return h.ID },
		func(k int) ([]lexical.Result, error) {
			var found []lexical.Result
			found, ev = r.lex.Search(k, also)
			return found, nil
		})
	return hits, ev, all
}

// within is a selective filter's chunks, each scored once by its cosine
// and its keyword evidence: the rankings of a search over them alone.
type within struct {
	ids      []int64
	scored   bool
	dense    []index.Match              // best first
	keyword  []lexical.Result           // the chunks with keyword evidence, best first
	evidence map[int64]lexical.Evidence // of every chunk; nil in dense mode
}

// readWithin is read over the chunks of r.within only: each ranking is
// its best pool of them.
func (r *ranker) readWithin(pool int) error {
	w := r.within
	if !w.scored {
		if err := r.scoreWithin(w); err != nil {
			return err
		}
	}
	if r.mode != Keyword {
		r.dense, r.denseAll = w.dense[:min(pool, len(w.dense))], len(w.dense) <= pool
		if err := r.checkCosines(r.dense); err != nil {
			return err
		}
	}
	if r.mode == Dense {
		return nil
	}
	r.keyword, r.keywordAll = w.keyword[:min(pool, len(w.keyword))], len(w.keyword) <= pool
	r.denseEvidence = make([]lexical.Evidence, len(r.dense))
	for i, m := range r.dense {
		r.denseEvidence[i] = w.evidence[m.ID]
	}
	return nil
}

// scoreWithin scores every chunk of w for the rankings r's mode uses.
func (r *ranker) scoreWithin(w *within) error {
	if r.mode != Keyword {
		cos, err := r.snap.Similarities(r.vec, w.ids)
		if err != nil {
			return err
		}
		w.dense = make([]index.Match, len(w.ids))
		for i, id := range w.ids {
			w.dense[i] = index.Match{ID: id, Score: cos[i]}
		}
		slices.SortFunc(w.dense, func(a, b index.Match) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
		})
	}
	if r.mode != Dense {
		_, ev := r.lex.Search(1, w.ids) // the evidence of every chunk, in one pass
		w.evidence = make(map[int64]lexical.Evidence, len(w.ids))
		for i, id := range w.ids {
			w.evidence[id] = ev[i]
			if ev[i].Score > 0 {
				w.keyword = append(w.keyword, lexical.Result{ID: id, Score: ev[i].Score, Coverage: ev[i].Coverage, Terms: ev[i].Terms})
			}
		}
		slices.SortFunc(w.keyword, func(a, b lexical.Result) int {
			return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.ID, b.ID))
		})
	}
	w.scored = true
	return nil
}
