// Package search answers queries over one index.Snapshot: it ranks chunks
// densely, by keywords or both fused, groups them into passages, explains
// scores, and reads documents back from their chunks. It embeds nothing and
// takes no snapshot itself: the engine hands it both.
package search

import (
	"cmp"
	"fmt"
	"math"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
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
	Fused       float64 `json:"fused"`
}

// Result is one passage: one chunk, or neighbouring chunks of one file
// whose text overlaps, merged. Path is relative to the data folder, with "/"
// separators.
type Result struct {
	Path  string  `json:"path"`
	Score float64 `json:"score"` // in [0, 1]; see Search
	// Snippet is the passage's whole text, runs of spaces collapsed and
	// lines trimmed.
	Snippet    string `json:"snippet"`
	ChunkIndex int    `json:"chunk_index"` // the best-ranked chunk of the passage
	Chunks     []int  `json:"chunks"`      // every chunk in the passage, ascending
	CharStart  int    `json:"char_start"`
	CharEnd    int    `json:"char_end"`
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

// Fusion names how hybrid search combines the two rankings. The default,
// FusionSpecific, is the one that ranked at least as well as dense and
// keyword search alone on all four evaluations, its constant chosen leave
// one set out (docs/search-fusion.md); the others stay so that the
// comparison can be rerun.
type Fusion string

const (
	// FusionShare is FusionCoverage with the keyword score k multiplied by
	// the share of the query's keyword weight the chunk holds at all: a
	// chunk matching a few words of a long question adds little to its
	// cosine, one holding every rare term of the query (an identifier)
	// keeps its whole k. Every candidate's k is computed exactly, found by
	// the keyword ranking or not, so the order does not depend on how deep
	// either ranking was read.
	FusionShare Fusion = "share"
	// FusionSpecific is FusionShare with a keyword score that does not
	// depend on the size of the index and counts as much as the query's
	// words are specific: k = ρ·s/(s + W/4), ρ = Wr/W (Wr weighting each
	// term's idf by idf/idfMax, so ρ is 1 for words that occur in one
	// chunk, as an identifier, and small for common words). A question of
	// ordinary words is ranked by its cosine; one naming rare terms, by
	// both. See docs/search-fusion.md.
	FusionSpecific Fusion = "specific"
	// FusionCoverage calibrates BM25 by the query's own keyword weight W
	// (Σ idf of its terms found in the index): k = s/(max(s, W) + 8), below
	// W the share of the query's keywords a passage holds, discounted when
	// those keywords are common. It combines k with the cosine c as a noisy OR,
	// 1 - (1-c)(1-k): a passage only one ranking finds keeps that ranking's
	// score, one both find scores above either.
	FusionCoverage Fusion = "coverage"
	// FusionCalibrated is the same noisy OR with k = s/(s + 8), which grows
	// with the length of the query.
	FusionCalibrated Fusion = "calibrated"
	// FusionRRF is reciprocal rank fusion (k = 60), scaled so that first in
	// both rankings is 1.
	FusionRRF Fusion = "rrf"
)

// bm25Half sets the keyword calibration: k = s/(max(s, W) + bm25Half). A
// query whose keywords are rare (an identifier: W of 20 and more) can reach
// k near 0.7; one of common words stays low. 4 and 8 tied on the
// evaluation, 12 and 16 did worse.
const bm25Half = 8.0

// rrfK is the usual reciprocal rank fusion constant.
const rrfK = 60

// PoolSize is how many chunks each ranking contributes per search: enough
// to fill topK passages when neighbouring chunks merge, and deep enough for
// the two rankings to meet. In hybrid mode it is the same for every top_k
// up to 20, so that asking for more results does not reorder the first
// ones; a single ranking's order does not depend on it, and reading half
// as many records keeps dense and keyword searches as fast as before.
func PoolSize(mode Mode, topK int) int {
	if mode == Dense || mode == Keyword {
		return max(3*topK, 30)
	}
	return max(3*topK, 60)
}

// Options say how a search ranks.
type Options struct {
	Mode Mode // "" = DefaultMode
	// Fusion is how Hybrid combines the rankings, with its constants after
	// its name ("share:a=1,g=1"); "" = DefaultFusion.
	Fusion Fusion
	// Diversity is "free=N,step=X" (see diversity); "" = none.
	Diversity string
	// PassageCap, when positive, is the most characters of a passage a
	// result carries, centred on its best-matching sentence; 0 = whole
	// passages (see centre.go for why that is the default).
	PassageCap int
}

// Search ranks snap's chunks for req. vec is the query's embedding (unused
// in Keyword mode).
//
// Results are passages, best first, at most req.TopK, none scoring below
// req.ScoreThreshold. The score is in [0, 1] and never rises down the list:
// the cosine similarity c in dense mode, the calibrated keyword score k in
// keyword mode, and in hybrid mode (the default) 1 - (1-c)(1-k·share) (see
// FusionSpecific for k).
func Search(snap *index.Snapshot, req Request, vec []float32, opt Options) ([]Result, error) {
	r := ranker{snap: snap, mode: cmp.Or(opt.Mode, DefaultMode), query: req.Query, vec: vec}
	var err error
	if r.fusion, r.params, err = parseFusion(cmp.Or(opt.Fusion, DefaultFusion)); err != nil {
		return nil, err
	}
	div, err := parseDiversity(opt.Diversity)
	if err != nil {
		return nil, err
	}
	if r.mode != Dense {
		r.weight, r.rareWeight = snap.LexicalQueryWeights(req.Query)
	}
	if r.narrow(req.Filter) == 0 {
		return []Result{}, nil
	}
	// Merging neighbours, or a filter, can leave fewer than TopK passages:
	// widen the pool while more chunks could still pass the threshold.
	for pool := PoolSize(r.mode, req.TopK); ; pool *= 4 {
		cands, full, err := r.rank(pool)
		if err != nil {
			return nil, err
		}
		res := diversePassages(cands, req.TopK, req.ScoreThreshold, div, req.Explain)
		if len(res) >= req.TopK || !full || pool >= snap.Chunks() || lowest(cands) < req.ScoreThreshold {
			centre(res, req.Query, opt.PassageCap)
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

// ranker scores one query's candidates against one snapshot.
type ranker struct {
	snap   *index.Snapshot
	mode   Mode
	fusion Fusion
	params fusionParams
	query  string
	vec    []float32
	// keyword weight of the query and its rare-weighted form
	// (Snapshot.LexicalQueryWeights)
	weight, rareWeight float64
	filter             *Filter // nil: none
	exact              bool    // rank the chunks in within only (rankWithin)
	within             []int64
}

// rank returns up to pool chunks from each ranking the mode uses, scored.
// full says a ranking returned its whole pool, so a larger pool may find
// more.
func (r *ranker) rank(pool int) (cands []candidate, full bool, err error) {
	var dense, keyword []index.Hit
	var denseEvidence []lexical.Evidence // keyword evidence of the dense hits
	if r.exact {
		if dense, keyword, denseEvidence, full, err = r.rankWithin(pool); err != nil {
			return nil, false, err
		}
	} else {
		var fullD, fullK bool
		if r.mode != Keyword {
			if dense, fullD, err = r.passingTop(pool, func(k int) ([]index.Hit, error) { return r.snap.Search(r.vec, k) }); err != nil {
				return nil, false, err
			}
		}
		if r.mode != Dense {
			also := make([]int64, len(dense)) // none in keyword mode
			for i, h := range dense {
				also[i] = h.Record.ID
			}
			if keyword, fullK, err = r.passingTop(pool, func(k int) (hits []index.Hit, err error) {
				hits, denseEvidence, err = r.snap.SearchLexicalWith(r.query, k, also)
				return hits, err
			}); err != nil {
				return nil, false, fmt.Errorf("keyword search: %w", err)
			}
		}
		full = fullD || fullK
	}
	if err := checkCosines(dense); err != nil {
		return nil, false, err
	}
	switch r.mode {
	case Dense:
		for _, h := range dense {
			c := unit(float64(h.Score))
			cands = append(cands, candidate{rec: h.Record, score: c, why: Explanation{Cosine: c}})
		}
		return cands, full, nil
	case Keyword:
		for _, h := range keyword {
			k := r.calibrate(float64(h.Score))
			cands = append(cands, candidate{rec: h.Record, score: k,
				why: Explanation{BM25: float64(h.Score), Keyword: k, Share: h.Share, Specificity: r.specificity()}})
		}
		return cands, full, nil
	}
	cands, err = r.fuse(dense, keyword, denseEvidence)
	return cands, full, err
}

// fuse combines the dense and lexical hits of a hybrid search;
// denseEvidence is the keyword evidence of each dense hit.
func (r *ranker) fuse(dense, keyword []index.Hit, denseEvidence []lexical.Evidence) ([]candidate, error) {
	type both struct {
		rec               schema.Record
		cos, bm25, share  float64
		denseRank, lexRnk int // from 1; 0 = not in that ranking
	}
	byID := make(map[int64]*both, len(dense)+len(keyword))
	order := make([]*both, 0, len(dense)+len(keyword))
	for i, h := range dense {
		b := &both{rec: h.Record, cos: float64(h.Score), denseRank: i + 1}
		// Found by the embedding: its keyword evidence counts too, whether
		// or not the keyword list reached it.
		b.bm25, b.share = denseEvidence[i].Score, denseEvidence[i].Coverage
		byID[h.Record.ID] = b
		order = append(order, b)
	}
	for i, h := range keyword {
		if b, ok := byID[h.Record.ID]; ok {
			b.lexRnk = i + 1
			continue
		}
		// Found by keywords only: its cosine still counts.
		cos, err := r.snap.Similarity(r.vec, h.Record.ID)
		if err != nil {
			return nil, err
		}
		if err := checkCosines([]index.Hit{{Record: h.Record, Score: cos}}); err != nil {
			return nil, err
		}
		b := &both{rec: h.Record, cos: float64(cos), bm25: float64(h.Score), share: h.Share, lexRnk: i + 1}
		byID[h.Record.ID] = b
		order = append(order, b)
	}
	out := make([]candidate, 0, len(order))
	for _, b := range order {
		var s float64
		k := r.calibrate(b.bm25)
		switch r.fusion {
		case FusionRRF:
			if b.denseRank > 0 {
				s += 1.0 / float64(rrfK+b.denseRank)
			}
			if b.lexRnk > 0 {
				s += 1.0 / float64(rrfK+b.lexRnk)
			}
			s /= 2.0 / float64(rrfK+1)
		case FusionShare, FusionSpecific:
			p := r.params
			lift := p.get("a", 1) * k * math.Pow(b.share, p.get("g", 1))
			s = 1 - (1-unit(b.cos))*(1-min(lift, 1))
		default:
			s = 1 - (1-unit(b.cos))*(1-k)
		}
		out = append(out, candidate{rec: b.rec, score: unit(s), why: Explanation{Cosine: unit(b.cos), BM25: b.bm25,
			Keyword: k, Share: b.share, Specificity: r.specificity()}})
	}
	return out, nil
}

// calibrate maps a raw BM25 score onto [0, 1).
func (r *ranker) calibrate(s float64) float64 {
	if s <= 0 {
		return 0
	}
	if r.fusion == FusionCalibrated {
		return s / (s + bm25Half)
	}
	if r.fusion == FusionSpecific || r.params.get("cal", 0) == 1 {
		// Scale-free: s/(s + h·W) is the share of the query's keyword
		// evidence the chunk holds, 1/(1+h) at s = W whatever the size of
		// the index; times the query's specificity Wr/W (1 for words that
		// occur once, as an identifier; small for common words).
		spec := math.Pow(min(r.rareWeight/r.weight, 1), r.params.get("p", 1))
		return spec * s / (s + r.params.get("h", 0.25)*r.weight)
	}
	// s/(W + 8) up to s = W, then s/(s + 8): continuous and rising, so
	// passages stronger than the weight keep their order.
	return s / (max(s, r.weight) + bm25Half)
}

// specificity is ρ = Wr/W, in [0, 1]: 1 when each of the query's
// indexed words occurs in one chunk, small when they are common.
func (r *ranker) specificity() float64 {
	if r.weight <= 0 {
		return 0
	}
	return min(r.rareWeight/r.weight, 1)
}

// unit clamps x into [0, 1].
func unit(x float64) float64 { return min(max(x, 0), 1) }

// maxCosine allows for float32 rounding above the cosine of two unit
// vectors. A higher score means a stored vector is not unit length: the
// index is damaged, and serving it would rank garbage first.
const maxCosine = 1 + 1e-3

func checkCosines(hits []index.Hit) error {
	for _, h := range hits {
		if s := float64(h.Score); s > maxCosine || math.IsNaN(s) {
			return fmt.Errorf("index damaged: chunk %d of %s scores %.4g, above the cosine maximum of 1; run reindex with force to rebuild it",
				h.Record.ChunkIndex, h.Record.Path, s)
		}
	}
	return nil
}
