// Package search answers queries over one index.View (a read view of any backend): it parses a
// search's arguments, ranks chunks densely, by keywords or both fused,
// groups them into passages, explains scores, and reads documents back
// from their chunks. It takes no snapshot and loads no model itself: the
// engine hands it a Source that reads both.
package search

import (
	"cmp"
	"fmt"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Mode chooses the ranking a search uses.
type Mode string

// Search modes. Hybrid is the default: dense alone misses exact identifiers,
// keyword alone misses paraphrases.
const (
	Hybrid  Mode = "hybrid"
	Dense   Mode = "dense"
	Keyword Mode = "keyword"
)

// ParseMode accepts "dense", "keyword" or "hybrid"; "" means hybrid.
func ParseMode(s string) (Mode, error) {
	switch m := Mode(s); m {
	case "":
		return Hybrid, nil
	case Hybrid, Dense, Keyword:
		return m, nil
	}
	return "", fmt.Errorf("search mode %q is not one of dense, keyword, hybrid", s)
}

// Request is one query. The caller applies defaults and validation.
type Request struct {
	Query          string
	TopK           int
	ScoreThreshold float64
	Explain        bool // set each Result's Explain
	// Filter, when set, limits the search to the files it passes.
	Filter *Filter
}

// Explanation is what a result's score was made of: its best chunk's
// cosine with the query, raw BM25F score, calibrated keyword score and
// share of the query's keyword weight it holds, how specific the query's
// words are (the same for every result), and the fused score. The parts a
// mode does not use are 0.
type Explanation struct {
	Cosine      float64 `json:"cosine"`
	BM25        float64 `json:"bm25"`
	Keyword     float64 `json:"keyword"`
	Share       float64 `json:"share"`
	Specificity float64 `json:"specificity"`
	// Coverage is the share of the query's keyword weight the index knows
	// at all (lexical.Query.Coverage); it weighs the keyword side in
	// hybrid mode (see ranker.fused) and is keyword evidence against noise
	// (see noiseCut), which a close meaning overrides.
	Coverage float64 `json:"coverage"`
	// Support is the best cosine of any chunk with the query, on the
	// reference model's scale; a low one discounts the score (see
	// noiseCut). 0 in keyword mode.
	Support float64 `json:"support"`
	// Background is the query's mean cosine with the folder's chunks
	// (a sample of them; dense and hybrid mode, default model): near 0
	// when nothing in the folder shares the query's topic (see noiseCut).
	Background float64 `json:"background,omitempty"`
	// FolderShift is how much higher this folder's cosines read than the
	// reference folder's (folderShift): positive in a folder whose
	// unrelated queries find nothing close. Support includes it.
	FolderShift float64 `json:"folder_shift,omitempty"`
	Fused       float64 `json:"fused"`
}

// Result is one passage: one chunk, or neighbouring chunks of one file
// whose text overlaps, merged. Path is relative to the data folder, with "/"
// separators.
type Result struct {
	Path  string  `json:"path"`
	Score float64 `json:"score"` // in [0, 1]; see Search
	// Snippet is the passage's text, runs of spaces collapsed and lines
	// trimmed, cut to PassageCap around its best-matching sentence.
	Snippet    string `json:"snippet"`
	ChunkIndex int    `json:"chunk_index"` // the best-ranked chunk of the passage
	Chunks     []int  `json:"chunks"`      // every chunk in the passage, ascending
	CharStart  int    `json:"char_start"`
	CharEnd    int    `json:"char_end"`
	// Paths lists every file holding this same passage text, Path first,
	// when copies of a document sit in several places; nil otherwise.
	Paths []string `json:"paths,omitempty"`
	// URI names the passage for MCP resources/read; set by the MCP server.
	URI       string  `json:"uri,omitempty"`
	Mtime     float64 `json:"mtime"`
	Ext       string  `json:"ext"`
	Page      int     `json:"page,omitempty"`
	LineStart int     `json:"line_start,omitempty"`
	LineEnd   int     `json:"line_end,omitempty"`
	// Explain is set when the request asks for it.
	Explain *Explanation `json:"explain,omitempty"`

	raw   string  // the passage's text before collapsing, for centre
	focus segment // its best chunk, in runes of raw
}

// Options say how a search ranks.
type Options struct {
	Mode Mode // "" = DefaultMode
	// Null is the embedding model's null cosine; its cosines are mapped
	// onto ReferenceNull's scale before they are scored. Zero: none.
	Null NullCosine
	// NullQueries are NullQueries embedded by the model, which place the
	// folder's noise level (folderNull); nil: no folder calibration.
	NullQueries [][]float32
	// ExactFilter is the most chunks a filter may pass and still be ranked
	// by scoring each of them (see exactFilterChunks); 0 =
	// exactFilterChunks, negative = only a filter passing a twentieth of
	// the index. Both paths rank alike: tests take either with it.
	ExactFilter int
	// Explain sets each result's Explain (the CLI's --explain; the search
	// tool has no such argument).
	Explain bool
}

// Source is what a search reads, as the engine holds it.
type Source struct {
	// View is the view to answer from, which the search releases; it sets
	// opt's calibration of the model's cosines (Null, NullQueries), known
	// once there is a view. nil (and no error) when there is nothing to
	// search: no results.
	View func(opt *Options) (index.View, error)
	// Embed is the query's embedding; keyword mode does not call it.
	Embed func(query string) ([]float32, error)
	// Unindexed is what the folder holds that the index leaves out for its
	// extension, for a weak answer's note (NotEnabledNote).
	Unindexed Unindexed
}

// Search searches src's view for req, embedding the query when opt's mode
// needs it: no results when there is no view.
func (src Source) Search(req Request, opt Options) ([]Result, error) {
	res, _, err := src.search(req, opt)
	return res, err
}

// search is Search, also returning the filter's missNote when no file
// passes req.Filter. That is looked at only on an empty answer, so that a
// filtered search that finds something lists the passing files once.
func (src Source) search(req Request, opt Options) ([]Result, string, error) {
	snap, err := src.View(&opt)
	if err != nil || snap == nil {
		return []Result{}, "", err
	}
	defer snap.Release()
	var vec []float32
	if cmp.Or(opt.Mode, DefaultMode) != Keyword {
		if vec, err = src.Embed(req.Query); err != nil {
			return nil, "", err
		}
	}
	res, err := Search(snap, req, vec, opt)
	if err != nil || len(res) > 0 {
		return res, "", err
	}
	return res, req.Filter.missNote(snap), nil
}

// Search ranks snap's chunks for req. vec is the query's embedding (unused
// in Keyword mode).
//
// Results are passages, best first, at most req.TopK, none scoring below
// req.ScoreThreshold; a passage whose text several files hold comes once,
// listing every path (so up to twice req.TopK passages are ranked and read).
// Scores and mtimes are rounded to 1/1000. The score is in [0, 1] and never rises down the list.
// It starts as the cosine similarity c (mapped onto the reference model's
// scale, see NullCosine) in dense mode, the calibrated keyword score k in
// keyword mode, and in hybrid mode (the default) 1 - (1-c)(1-k·share) (see
// ranker.fused for k); then it is calibrated per mode (see noiseCut) so
// that DefaultScoreThreshold separates answers from noise in every mode.
func Search(snap index.View, req Request, vec []float32, opt Options) ([]Result, error) {
	r := newRanker(snap, req.Query, vec, opt)
	first := PoolSize(r.mode, req.TopK)
	if r.narrow(req.Filter) == 0 {
		return []Result{}, nil
	}
	src := &chunks{snap: snap, heads: map[int64]schema.Record{}}
	// Copies merged away must still leave TopK results.
	want := min(MaxTopK, 2*req.TopK)
	// Merging neighbours, or a filter, can leave fewer than want passages:
	// widen the pool while more chunks could still pass the threshold. The
	// first pool follows TopK, not want, so that it is the same for every
	// top_k up to 20 and a larger top_k only appends (PoolSize).
	for pool := first; ; pool *= 4 {
		cands, full, err := r.rank(pool)
		if err != nil {
			return nil, err
		}
		ps, err := group(cands, req.ScoreThreshold, src)
		if err != nil {
			return nil, err
		}
		ps = ps[:min(want, len(ps))]
		if len(ps) >= want || !full || pool >= snap.Chunks() || lowest(cands) < req.ScoreThreshold {
			res, err := results(ps, req.Explain, src) // text read for these alone
			if err != nil {
				return nil, err
			}
			if err := centre(res, req.Query, PassageCap, src); err != nil {
				return nil, err
			}
			res = mergeCopies(res, req.TopK)
			roundScores(res)
			return res, nil
		}
	}
}

func lowest(cands []candidate) float64 {
	low := 1.0
	for _, c := range cands {
		low = min(low, c.score)
	}
	return low
}
