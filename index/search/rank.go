package search

import (
	"cmp"
	"fmt"
	"math"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/lexical"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// ranker scores one query's candidates against one snapshot. It keeps what
// a ranking found between widenings of the pool: a ranking that returned
// fewer chunks than asked holds every chunk it can find and is not run
// again.
type ranker struct {
	snap index.View
	mode Mode
	lex  index.KeywordQuery // the query's keyword terms, looked up once
	vec  []float32
	// keyword weight of the query and its rare-weighted form
	// (lexical.Query.Weights)
	weight, rareWeight float64

	dense         []index.Match
	keyword       []lexical.Result
	denseEvidence []lexical.Evidence // keyword evidence of the dense hits
	denseAll      bool               // dense holds every chunk it can find
	keywordAll    bool               // keyword holds every chunk that matches
	cos           map[int64]float32  // cosines of keyword-only hits
	// share of the query's keyword weight the index knows at all
	// (lexical.Query.Coverage)
	coverage float64
	null     NullCosine
	// a filter passing at most this many chunks is ranked exactly (narrow)
	exactFilter int
	// the query's mean cosine with the folder (background), read once
	bg     float64
	bgRead bool
	// nullQueries are the null queries' vectors (Options.NullQueries);
	// shift how much higher the folder's cosines read (folderShift), set
	// once nullRead
	nullQueries [][]float32
	shift       float64
	nullRead    bool

	// A filter (see narrow): a broad one's passing chunks, or a selective
	// one's chunks, ranked alone. Both nil without a filter.
	passing map[int64]bool
	within  *within
}

// newRanker is a ranker of query (embedded as vec) under opt's mode.
func newRanker(snap index.View, query string, vec []float32, opt Options) *ranker {
	r := &ranker{snap: snap, mode: cmp.Or(opt.Mode, DefaultMode), vec: vec, null: opt.Null, nullQueries: opt.NullQueries,
		exactFilter: cmp.Or(opt.ExactFilter, exactFilterChunks)}
	// Tokenised once: the coverage weighs the keyword side's evidence
	// (and gates keyword mode); weights and search serve the keyword side.
	r.lex = snap.LexicalQuery(query)
	r.coverage = r.lex.Coverage()
	if r.mode != Dense {
		r.weight, r.rareWeight = r.lex.Weights()
	}
	return r
}

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

// rank returns up to pool chunks from each ranking the mode uses, scored.
// full says a ranking returned its whole pool, so a larger pool may find
// more.
func (r *ranker) rank(pool int) (cands []candidate, full bool, err error) {
	cands, full, err = r.rankRaw(pool)
	if err != nil {
		return nil, false, err
	}
	if err := r.readBackground(); err != nil {
		return nil, false, err
	}
	if err := r.readFolderNull(); err != nil {
		return nil, false, err
	}
	q := r.signals(cands)
	for i := range cands {
		cands[i].score = calibrated(r.mode, cands[i].score, q)
		cands[i].why.Coverage, cands[i].why.Support, cands[i].why.Background = q.coverage, q.best, q.background
		cands[i].why.FolderShift = q.shift
	}
	return cands, full, nil
}

// readBackground reads the query's mean cosine with the folder once, in
// the modes that embed the query, with the reference model (on whose
// cosines its gates were chosen).
func (r *ranker) readBackground() error {
	if r.bgRead || r.mode == Keyword || !r.null.reference() {
		return nil
	}
	bg, err := background(r.snap, r.vec)
	if err != nil {
		return err
	}
	r.bg, r.bgRead = bg, true
	return nil
}

// readFolderNull sets the folder's shift once, in the modes that embed the
// query, when the engine gave the null queries.
func (r *ranker) readFolderNull() error {
	if r.nullRead || r.mode == Keyword {
		return nil
	}
	median, ok, err := folderNull(r.snap, r.nullQueries)
	if err != nil {
		return err
	}
	if ok {
		r.shift = folderShift(r.null.cosine(median))
	}
	r.nullRead = true
	return nil
}

// exactShare is the share of the query's known keyword weight a first
// result must hold to count as holding the query's words (querySignals.exact).
// Not all of it: with stems, the "mean" of "what does parse_http_header
// mean?" finds "means" in another file, and the identifier alone is most
// of the weight (0.86 of it). 0.8 changed no figure of bench/cmd/noise.
const exactShare = 0.8

// signals are what calibrates the query's raw candidates cands. The best
// cosine is the dense ranking's first, the same at every pool depth; the
// first candidate's cosine is read from its explanation, mapped like the
// best, unless it holds all the query's words. Keyword mode embeds
// nothing: no cosines.
func (r *ranker) signals(cands []candidate) querySignals {
	q := querySignals{coverage: r.coverage}
	if r.mode == Keyword || len(r.dense) == 0 {
		return q
	}
	q.shift = r.shift
	q.best = shifted(r.null.cosine(unit(float64(r.dense[0].Score))), q.shift)
	q.background, q.backgroundKnown = r.bg, r.bgRead
	first := -1
	for i, c := range cands {
		if first < 0 || c.score > cands[first].score {
			first = i
		}
	}
	q.exact = first >= 0 && cands[first].why.Share >= exactShare
	switch {
	case first < 0:
	case !r.null.reference():
		// Chosen on the reference model's cosines; another model's, mapped
		// onto its scale, bunch near 0 below its null mean, where a ratio
		// says little (it cut a Go-docs answer of bge-small-en-v1.5).
		q.first = q.best
	case q.exact:
		// The first result holds the query's words the folder knows (an
		// identifier, an exact phrase): words did not lift it past its
		// meaning, whatever the embedding makes of them.
		q.first = q.best
	default:
		q.first = shifted(r.null.cosine(cands[first].why.Cosine), q.shift)
	}
	return q
}

// rankRaw is rank before the scores are calibrated.
func (r *ranker) rankRaw(pool int) (cands []candidate, full bool, err error) {
	if err := r.read(pool); err != nil {
		return nil, false, err
	}
	full = len(r.dense) == pool || len(r.keyword) == pool
	switch r.mode {
	case Dense:
		for _, h := range r.dense {
			c := unit(float64(h.Score))
			cands = append(cands, candidate{rec: schema.Record{ID: h.ID}, score: r.null.cosine(c), why: Explanation{Cosine: c}})
		}
		return cands, full, nil
	case Keyword:
		for _, h := range r.keyword {
			bm25 := float64(float32(h.Score)) // as precise as a Hit's score
			k := r.calibrate(bm25)
			cands = append(cands, candidate{rec: schema.Record{ID: h.ID}, score: k,
				why: Explanation{BM25: bm25, Keyword: k, Share: h.Coverage, Specificity: r.specificity()}})
		}
		return cands, full, nil
	}
	cands, err = r.fuse()
	return cands, full, err
}

// read runs the rankings the mode uses to depth pool, each unless it holds
// all it can find already, and the keyword evidence of the dense hits.
func (r *ranker) read(pool int) error {
	if r.within != nil {
		return r.readWithin(pool)
	}
	denseRan := false
	if r.mode != Keyword && !r.denseAll {
		near, all, err := r.nearest(pool)
		if err != nil {
			return err
		}
		if err := r.checkCosines(near); err != nil {
			return err
		}
		r.dense, r.denseAll, denseRan = near, all, true
	}
	if r.mode == Dense {
		return nil
	}
	also := make([]int64, len(r.dense)) // none in keyword mode
	for i, h := range r.dense {
		also[i] = h.ID
	}
	switch {
	case !r.keywordAll:
		r.keyword, r.denseEvidence, r.keywordAll = r.keywordTop(pool, also)
	case denseRan:
		// Every chunk holding a query term is in the keyword list, so it
		// says the evidence of each dense hit without another pass.
		r.denseEvidence = evidenceOf(r.keyword, also)
	}
	return nil
}

// evidenceOf is the keyword evidence of ids taken from a keyword list that
// holds every matching chunk (zeros for the chunks not in it).
func evidenceOf(keyword []lexical.Result, ids []int64) []lexical.Evidence {
	at := make(map[int64]lexical.Result, len(keyword))
	for _, h := range keyword {
		at[h.ID] = h
	}
	ev := make([]lexical.Evidence, len(ids))
	for i, id := range ids {
		if h, ok := at[id]; ok {
			ev[i] = lexical.Evidence{Score: h.Score, Coverage: h.Coverage, Terms: h.Terms}
		}
	}
	return ev
}

// both is what the two rankings say of one chunk.
type both struct {
	id               int64
	cos, bm25, share float64
}

// fuse combines the dense and keyword hits of a hybrid search.
func (r *ranker) fuse() ([]candidate, error) {
	byID := make(map[int64]*both, len(r.dense)+len(r.keyword))
	order := make([]*both, 0, len(r.dense)+len(r.keyword))
	for i, h := range r.dense {
		// Found by the embedding: its keyword evidence counts too, whether
		// or not the keyword list reached it.
		b := &both{id: h.ID, cos: float64(h.Score), bm25: r.denseEvidence[i].Score, share: r.denseEvidence[i].Coverage}
		byID[h.ID] = b
		order = append(order, b)
	}
	var only []*both // found by keywords only: their cosines still count
	for _, h := range r.keyword {
		if _, ok := byID[h.ID]; ok {
			continue
		}
		b := &both{id: h.ID, bm25: float64(float32(h.Score)), share: h.Coverage}
		byID[h.ID] = b
		order = append(order, b)
		only = append(only, b)
	}
	if err := r.cosines(only); err != nil {
		return nil, err
	}
	out := make([]candidate, 0, len(order))
	for _, b := range order {
		out = append(out, r.fused(b))
	}
	return out, nil
}

// cosines sets the cosine of chunks found by keywords only, reading the
// vectors not read in an earlier widening in one call.
func (r *ranker) cosines(only []*both) error {
	if r.cos == nil {
		r.cos = map[int64]float32{}
	}
	var ids []int64
	for _, b := range only {
		if _, ok := r.cos[b.id]; !ok {
			ids = append(ids, b.id)
		}
	}
	if len(ids) > 0 {
		cos, err := r.snap.Similarities(r.vec, ids)
		if err != nil {
			return err
		}
		for i, id := range ids {
			r.cos[id] = cos[i]
		}
	}
	for _, b := range only {
		c := r.cos[b.id]
		if err := r.checkCosines([]index.Match{{ID: b.id, Score: c}}); err != nil {
			return err
		}
		b.cos = float64(c)
	}
	return nil
}

// fused is one chunk's candidate in hybrid mode: the cosine c and the
// keyword score k combined as a noisy OR, 1 - (1-c)(1-k·share·coverage²).
// share is the part of the query's keyword weight the chunk holds and
// coverage the part the folder knows at all, so a chunk matching a few
// words of a long question adds little to its cosine, one holding every
// rare term of the query (an identifier) keeps its whole k, and a
// paraphrase whose few words the folder knows are incidental ones (work,
// team) is ranked by its meaning. Every candidate's k is computed
// exactly, found by the keyword ranking or not, so the order does not
// depend on how deep either ranking was read. This fusion ranked at least
// as well as dense and keyword search alone on all four evaluations; the
// ones that lost (reciprocal rank fusion, BM25 calibrated by a constant
// or by the query's weight, no specificity) are recorded with their
// figures in docs/search-fusion.md.
func (r *ranker) fused(b *both) candidate {
	k := r.calibrate(b.bm25)
	lift := k * b.share * math.Pow(r.coverage, 2)
	s := 1 - (1-r.null.cosine(b.cos))*(1-min(lift, 1))
	return candidate{rec: schema.Record{ID: b.id}, score: unit(s), why: Explanation{Cosine: unit(b.cos), BM25: b.bm25,
		Keyword: k, Share: b.share, Specificity: r.specificity()}}
}

// keywordHalf sets the keyword calibration: k reaches half its ceiling
// where the chunk's BM25 score is a quarter of the query's keyword weight
// (chosen leave one set out, docs/search-fusion.md).
const keywordHalf = 0.25

// calibrate maps a raw BM25 score s onto [0, 1): s/(s + W/4), which does
// not depend on the size of the index (1/(1+1/4) at s = W, the query's
// keyword weight), times the query's specificity Wr/W (1 for words that
// occur in one chunk, as an identifier; small for common words), so a
// question of ordinary words is ranked by its cosine and one naming rare
// terms by both.
func (r *ranker) calibrate(s float64) float64 {
	if s <= 0 {
		return 0
	}
	return r.specificity() * s / (s + keywordHalf*r.weight)
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

// checkCosines reports the first hit scoring above any cosine, naming its
// chunk.
func (r *ranker) checkCosines(hits []index.Match) error {
	for _, h := range hits {
		if s := float64(h.Score); s > maxCosine || math.IsNaN(s) {
			rec, err := r.snap.Head(h.ID)
			if err != nil {
				return err
			}
			return fmt.Errorf("index damaged: chunk %d of %s scores %.4g, above the cosine maximum of 1; run reindex with force to rebuild it",
				rec.ChunkIndex, rec.Path, s)
		}
	}
	return nil
}
