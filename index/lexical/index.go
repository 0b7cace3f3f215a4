package lexical

import (
	"cmp"
	"fmt"
	"math"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"sync"
)

// Params are the BM25F parameters. Each field's term frequency is
// normalised by its length (b) and weighted; the weighted sum is saturated
// once with K1 (Robertson & Zaragoza, "The Probabilistic Relevance
// Framework: BM25 and Beyond", 2009, section 3.5):
//
//	tf'(t,d) = Σ_f Weight_f · tf_f / (1 − B_f + B_f · len_f / avglen_f)
//	score(d) = Σ_t idf(t) · tf'·(K1+1) / (K1 + tf')
//	idf(t)   = ln(1 + (N − df + 0.5) / (df + 0.5))
type Params struct {
	K1     float64
	Weight [numFields]float64 // indexed by FieldBody, FieldHeading, FieldName
	B      [numFields]float64
}

// DefaultParams: the usual K1 and body B; a heading or file-name match
// counts three body matches, and those short fields are normalised less
// by their length.
var DefaultParams = Params{
	K1:     1.2,
	Weight: [numFields]float64{FieldBody: 1, FieldHeading: 3, FieldName: 3},
	B:      [numFields]float64{FieldBody: 0.75, FieldHeading: 0.5, FieldName: 0.3},
}

// MaxQueryTerms caps the distinct terms of one query that are scored: the
// rarest in the index are kept, so a 10,000-character query costs at most
// this many posting scans and keeps its most telling words.
const MaxQueryTerms = 256

// maxQueryCandidates bounds the distinct terms looked up at all.
const maxQueryCandidates = 4096

// queryTerm is one distinct term of a query that occurs in the index.
type queryTerm struct {
	text string
	qtf  float64 // occurrences in the query
	df   float64
	idf  float64
	at   []int // per segment: the term's index, or -1
}

// queryTermsAbsent returns the query's distinct terms found in the index
// with their idf, at most MaxQueryTerms of them (the lowest df first, then
// the first in the query), and the number of the query's term occurrences
// that are not in the index at all.
func (x *Index) queryTermsAbsent(query string) (terms []queryTerm, absent float64) {
	var n float64
	for _, v := range x.segs {
		n += float64(v.seg.docs())
	}
	seen := map[string]int{}
	for _, t := range Tokens(query) {
		if i, ok := seen[t]; ok {
			if i >= 0 {
				terms[i].qtf++
			} else {
				absent++
			}
			continue
		}
		if len(seen) == maxQueryCandidates {
			continue
		}
		qt := queryTerm{text: t, qtf: 1, at: make([]int, len(x.segs))}
		for s, v := range x.segs {
			qt.at[s] = v.seg.find(t)
			if qt.at[s] >= 0 {
				qt.df += float64(v.seg.df[qt.at[s]])
			}
		}
		if qt.df == 0 {
			seen[t] = -1
			absent++
			continue
		}
		qt.idf = math.Log(1 + (n-qt.df+0.5)/(qt.df+0.5))
		seen[t] = len(terms)
		terms = append(terms, qt)
	}
	if len(terms) > MaxQueryTerms {
		slices.SortStableFunc(terms, func(a, b queryTerm) int { return cmp.Compare(a.df, b.df) })
		terms = terms[:MaxQueryTerms]
	}
	return terms, absent
}

// SegmentRef names a committed segment file; the owner keeps the list in
// its commit record, so the segments in use change with that record.
type SegmentRef struct {
	Name  string `json:"name"`
	Bytes int64  `json:"bytes"`
	Docs  int    `json:"docs"`
	CRC   uint32 `json:"crc32c"`
}

// Index is an immutable set of segments with their deleted docs. Every
// change returns a new Index; searches on an old one are unaffected and
// take no lock.
type Index struct {
	segs   []*segView
	Params Params
}

type segView struct {
	seg   *segment
	name  string
	dead  []uint64 // deletion bitmap by ordinal, nil when none; copied on write
	nDead int
}

func (v *segView) live() int { return v.seg.docs() - v.nDead }

// Empty returns an index with no documents.
func Empty() *Index { return &Index{Params: DefaultParams} }

// Open loads committed segments from dir and marks deleted every doc whose
// id isLive rejects. A missing or damaged file is an error.
func Open(dir string, refs []SegmentRef, isLive func(id int64) bool) (*Index, error) {
	segs := make([]*Segment, len(refs))
	for i, ref := range refs {
		b, err := os.ReadFile(filepath.Join(dir, ref.Name))
		if err != nil {
			return nil, err
		}
		if segs[i], err = DecodeSegment(ref, b); err != nil {
			return nil, err
		}
	}
	return FromSegments(segs, isLive), nil
}

// NameField is what the keyword index knows of a file's name: the base
// name without extension (tokenized, so report_2024-q3 also gives report,
// 2024, q3). Every backend fills Doc.Name with it.
func NameField(p string) string {
	base := path.Base(p)
	return strings.TrimSuffix(base, path.Ext(base))
}

// Segment is one decoded segment, immutable, for an owner that keeps
// segments elsewhere than in files (a database) and shares the decoded
// ones between the Index values of successive commits.
type Segment struct {
	ref SegmentRef
	seg *segment
}

// DecodeSegment decodes a segment's bytes (Add's file) and checks them
// against the reference its commit recorded.
func DecodeSegment(ref SegmentRef, b []byte) (*Segment, error) {
	if int64(len(b)) != ref.Bytes {
		return nil, fmt.Errorf("%w: %s has %d bytes, want %d", errCorrupt, ref.Name, len(b), ref.Bytes)
	}
	seg, err := decodeSegment(b)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ref.Name, err)
	}
	if seg.crc != ref.CRC || seg.docs() != ref.Docs {
		return nil, fmt.Errorf("%w: %s is not the committed segment", errCorrupt, ref.Name)
	}
	return &Segment{ref: ref, seg: seg}, nil
}

// Ref is the segment's reference.
func (s *Segment) Ref() SegmentRef { return s.ref }

// FromSegments is the index of segs (in their committed order) with every
// doc whose id isLive rejects marked deleted.
func FromSegments(segs []*Segment, isLive func(id int64) bool) *Index {
	x := Empty()
	for _, s := range segs {
		seg := s.seg
		v := &segView{seg: seg, name: s.ref.Name}
		for o, id := range seg.ids {
			if !isLive(id) {
				if v.dead == nil {
					v.dead = make([]uint64, (seg.docs()+63)/64)
				}
				v.dead[o>>6] |= 1 << (o & 63)
				v.nDead++
			}
		}
		x.segs = append(x.segs, v)
	}
	return x
}

// Dead is the number of deleted docs the segments still hold (a merge
// with compaction drops them).
func (x *Index) Dead() int {
	n := 0
	for _, v := range x.segs {
		n += v.nDead
	}
	return n
}

// Live is the number of documents not deleted.
func (x *Index) Live() int {
	n := 0
	for _, v := range x.segs {
		n += v.live()
	}
	return n
}

// Segments lists the segment files this index is made of.
func (x *Index) Segments() []SegmentRef {
	refs := make([]SegmentRef, len(x.segs))
	for i, v := range x.segs {
		refs[i] = SegmentRef{Name: v.name, Bytes: v.seg.size, Docs: v.seg.docs(), CRC: v.seg.crc}
	}
	return refs
}

// locate finds the segment and ordinal holding chunk id. Segments hold
// increasing, disjoint id ranges because ids are handed out in order.
func (x *Index) locate(id int64) (*segView, int) {
	i, _ := slices.BinarySearchFunc(x.segs, id, func(v *segView, id int64) int {
		return cmp.Compare(v.seg.ids[len(v.seg.ids)-1], id)
	})
	if i == len(x.segs) {
		return nil, 0
	}
	v := x.segs[i]
	o, ok := slices.BinarySearch(v.seg.ids, id)
	if !ok {
		return nil, 0
	}
	return v, o
}

// Delete returns an index without the given chunk ids; unknown ids are
// ignored.
func (x *Index) Delete(ids []int64) *Index {
	if len(ids) == 0 {
		return x
	}
	next := &Index{segs: slices.Clone(x.segs), Params: x.Params}
	copied := map[*segView]*segView{}
	for _, id := range ids {
		v, o := x.locate(id)
		if v == nil || isDead(v.dead, o) {
			continue
		}
		nv := copied[v]
		if nv == nil {
			nv = &segView{seg: v.seg, name: v.name, nDead: v.nDead, dead: slices.Clone(v.dead)}
			if nv.dead == nil {
				nv.dead = make([]uint64, (v.seg.docs()+63)/64)
			}
			copied[v] = nv
			next.segs[slices.Index(x.segs, v)] = nv
		}
		if !isDead(nv.dead, o) {
			nv.dead[o>>6] |= 1 << (o & 63)
			nv.nDead++
		}
	}
	return next
}

// Add indexes docs (ids increasing, above every id already present) into a
// new segment called name and returns the next index and the bytes of that
// one new file, which the caller must write durably before committing.
// Trailing segments no larger than what is being written are merged into
// it, so an index of n docs has O(log n) segments and a doc is rewritten
// O(log n) times. compact merges every segment, dropping deleted docs. With
// no docs and no compaction there is no new file and x is returned. The
// caller commits by recording Segments(), and removes files no longer
// listed.
func (x *Index) Add(name string, docs []Doc, compact bool) (*Index, []byte, error) {
	if len(docs) == 0 && !compact {
		return x, nil, nil
	}
	for i := 1; i < len(docs); i++ {
		if docs[i].ID <= docs[i-1].ID {
			return nil, nil, fmt.Errorf("lexical: docs out of id order (%d after %d)", docs[i].ID, docs[i-1].ID)
		}
	}
	if len(docs) > 0 && len(x.segs) > 0 {
		last := x.segs[len(x.segs)-1].seg
		if docs[0].ID <= last.ids[len(last.ids)-1] {
			return nil, nil, fmt.Errorf("lexical: doc %d is not newer than the index", docs[0].ID)
		}
	}
	keep := slices.Clone(x.segs)
	var merge []*segView
	if len(docs) > 0 {
		merge = []*segView{{seg: buildSegment(docs)}}
	}
	size := len(docs)
	for len(keep) > 0 && (compact || keep[len(keep)-1].live() <= size) {
		v := keep[len(keep)-1]
		keep = keep[:len(keep)-1]
		merge = append([]*segView{v}, merge...)
		size += v.live()
	}
	if size == 0 {
		return &Index{segs: keep, Params: x.Params}, nil, nil
	}
	seg := merge[0].seg
	if len(merge) > 1 || merge[0].nDead > 0 {
		segs, dead := make([]*segment, len(merge)), make([][]uint64, len(merge))
		for i, v := range merge {
			segs[i], dead[i] = v.seg, v.dead
		}
		seg = mergeSegments(segs, dead)
	}
	file := seg.encode()
	return &Index{segs: append(keep, &segView{seg: seg, name: name}), Params: x.Params}, file, nil
}

// Result is one keyword hit: a chunk id and its BM25F score (unbounded,
// comparable only within one query).
type Result struct {
	ID    int64
	Score float64
	// Coverage is the share of the query's keyword weight whose terms the
	// document holds (see Evidence).
	Coverage float64
	Terms    uint64 // see Evidence
}

// Evidence is what the keyword index holds for one document and query
// (Query.Search).
type Evidence struct {
	Score float64 // BM25F, as Search scores it
	// Coverage is the share of the query's keyword weight (Query.Weights)
	// whose terms the document holds at all, in [0, 1].
	Coverage float64
	// Terms has bit i set when the document holds the query's term i
	// (Query.Terms), for the first 64 terms: which words matched, not only
	// how much they weigh. Only for a Query.TrackTerms.
	Terms uint64
}

var accPool = sync.Pool{New: func() any { return new([]float64) }}

var maskPool = sync.Pool{New: func() any { return new([]uint64) }}

// Query is one query's terms looked up in one Index: tokenised once, then
// weighed and searched as often as the caller needs.
type Query struct {
	x         *Index
	terms     []queryTerm
	absent    float64 // occurrences of query terms found nowhere in x
	withTerms bool    // Search sets Terms (TrackTerms)
}

// TrackTerms makes q's searches say which of its terms each document holds
// (Evidence.Terms, Result.Terms); without it they are 0.
func (q *Query) TrackTerms() { q.withTerms = true }

// at is mask[i], 0 without a mask.
func at(mask []uint64, i int) uint64 {
	if mask == nil {
		return 0
	}
	return mask[i]
}

// Query tokenises text and looks its terms up in x.
func (x *Index) Query(text string) *Query {
	if len(x.segs) == 0 {
		return &Query{x: x}
	}
	terms, absent := x.queryTermsAbsent(text)
	return &Query{x: x, terms: terms, absent: absent}
}

// Search returns up to k live documents matching q, best first (ties by
// lower id), and the Evidence of the documents in also, read in the same
// pass over the postings: a fused ranking can score the chunks the other
// ranking found exactly, however far down the keyword ranking they are.
// Results carry their Coverage too. A query with no terms (stop words,
// punctuation) matches nothing. Safe for concurrent use.
func (q *Query) Search(k int, also []int64) ([]Result, []Evidence) {
	x, terms := q.x, q.terms
	ev := make([]Evidence, len(also))
	if len(terms) == 0 {
		return nil, ev
	}
	weight, _ := q.Weights()
	// Wanted ordinals per segment, to their positions in also.
	type want struct {
		ord uint32
		at  int
	}
	wanted := make(map[*segView][]want)
	for i, id := range also {
		if v, o := x.locate(id); v != nil && !isDead(v.dead, o) {
			wanted[v] = append(wanted[v], want{uint32(o), i})
		}
	}
	invAvg := x.invAvgLens()
	top := topK{k: k}
	accp, covp := accPool.Get().(*[]float64), accPool.Get().(*[]float64)
	defer accPool.Put(accp)
	defer accPool.Put(covp)
	var maskp *[]uint64 // only when asked: it costs a store per posting
	if q.withTerms {
		maskp = maskPool.Get().(*[]uint64)
		defer maskPool.Put(maskp)
	}
	var touched []int32
	for s, v := range x.segs {
		seg := v.seg
		acc, cov := sized(accp, seg.docs()), sized(covp, seg.docs())
		var mask []uint64
		if maskp != nil {
			mask = sized(maskp, seg.docs())
		}
		touched = q.accumulate(s, v, acc, cov, mask, touched[:0], invAvg)
		for _, w := range wanted[v] {
			ev[w.at] = Evidence{Score: acc[w.ord], Coverage: min(cov[w.ord]/weight, 1), Terms: at(mask, int(w.ord))}
		}
		for _, o := range touched {
			if k > 0 {
				top.push(Result{ID: seg.ids[o], Score: acc[o], Coverage: min(cov[o]/weight, 1), Terms: at(mask, int(o))})
			}
			acc[o], cov[o] = 0, 0
			if mask != nil {
				mask[o] = 0
			}
		}
	}
	return top.sorted(), ev
}

// sized is *p resliced to n, grown first when it is shorter.
func sized[T any](p *[]T, n int) []T {
	if cap(*p) < n {
		*p = make([]T, n)
	}
	return (*p)[:n]
}

// accumulate adds the BM25F scores and the keyword weight of the query's
// terms in segment s (viewed as v) into acc and cov, and each term's bit
// into mask when it is set (the first 64 terms), for every live document;
// it appends each document it touches first to touched and returns it.
func (q *Query) accumulate(s int, v *segView, acc, cov []float64, mask []uint64, touched []int32, invAvg [numFields]float64) []int32 {
	seg, p := v.seg, &q.x.Params
	for i := range q.terms {
		t := &q.terms[i]
		if t.at[s] < 0 {
			continue
		}
		var bit uint64
		if mask != nil && i < 64 {
			bit = 1 << i
		}
		r := postingReader{b: seg.postings(t.at[s]), prev: -1}
		var pst posting
		for r.next(&pst) {
			o := int(pst.ord)
			if isDead(v.dead, o) {
				continue
			}
			if acc[o] == 0 {
				touched = append(touched, int32(o))
			}
			acc[o] += p.termScore(t, seg, o, &pst, &invAvg)
			cov[o] += t.qtf * t.idf
			if bit != 0 {
				mask[o] |= bit
			}
		}
	}
	return touched
}

// invAvgLens is N / Σ len per field. Collection statistics include deleted
// docs until a merge drops them, as in Lucene: cheap, and they change
// little.
func (x *Index) invAvgLens() [numFields]float64 {
	var n float64
	var sumLen [numFields]float64
	for _, v := range x.segs {
		n += float64(v.seg.docs())
		for f := range sumLen {
			sumLen[f] += float64(v.seg.sumLen[f])
		}
	}
	var invAvg [numFields]float64
	for f := range invAvg {
		if sumLen[f] > 0 {
			invAvg[f] = n / sumLen[f]
		}
	}
	return invAvg
}

// termScore is one query term's BM25F contribution to document o of seg.
func (p *Params) termScore(t *queryTerm, seg *segment, o int, pst *posting, invAvg *[numFields]float64) float64 {
	var tf float64
	for f := range numFields {
		if pst.tf[f] == 0 {
			continue
		}
		norm := 1 - p.B[f] + p.B[f]*float64(seg.lens[o*numFields+f])*invAvg[f]
		tf += p.Weight[f] * float64(pst.tf[f]) / norm
	}
	return t.qtf * t.idf * tf * (p.K1 + 1) / (p.K1 + tf)
}

// topK keeps the k best results in a min-heap.
type topK struct {
	k int
	h []Result
}

func worse(a, b Result) bool { return a.Score < b.Score || a.Score == b.Score && a.ID > b.ID }

func (t *topK) push(r Result) {
	if len(t.h) < t.k {
		t.h = append(t.h, r)
		for i := len(t.h) - 1; i > 0; {
			parent := (i - 1) / 2
			if !worse(t.h[i], t.h[parent]) {
				break
			}
			t.h[i], t.h[parent] = t.h[parent], t.h[i]
			i = parent
		}
		return
	}
	if !worse(t.h[0], r) {
		return
	}
	t.h[0] = r
	for i := 0; ; {
		l, m := 2*i+1, i
		if l < len(t.h) && worse(t.h[l], t.h[m]) {
			m = l
		}
		if l+1 < len(t.h) && worse(t.h[l+1], t.h[m]) {
			m = l + 1
		}
		if m == i {
			break
		}
		t.h[i], t.h[m] = t.h[m], t.h[i]
		i = m
	}
}

func (t *topK) sorted() []Result {
	slices.SortFunc(t.h, func(a, b Result) int {
		if worse(a, b) {
			return 1
		}
		if worse(b, a) {
			return -1
		}
		return 0
	})
	return t.h
}
