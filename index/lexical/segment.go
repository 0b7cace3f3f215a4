package lexical

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"
	"maps"
	"math"
	"slices"
	"strings"
)

// Fields of a chunk, scored separately (BM25F).
const (
	FieldBody    = iota // the chunk's text
	FieldHeading        // the headings in scope at the chunk
	FieldName           // the file's base name without extension
	numFields
)

// Doc is one chunk as the lexical index sees it.
type Doc struct {
	ID      int64 // the chunk id; a segment's docs are added in increasing id order
	Heading string
	Name    string
	Body    string
}

// segment is one immutable file of postings: the docs added by one commit,
// or several such merged. Docs are numbered by ordinal 0..len(ids)-1 in
// increasing chunk id order; postings refer to ordinals.
//
// File layout (integers are unsigned varints unless said otherwise):
//
//	"MRLEX1\n\x00"
//	docs terms sumLen[body] sumLen[heading] sumLen[name]
//	ids: first id, then differences
//	lengths: body heading name per doc (saturated at 65535)
//	per term in byte order: len bytes df postingBytes
//	postings: per doc ordinal difference, then tf code (see appendPosting)
//	CRC-32C of everything before, 4 bytes little endian
type segment struct {
	ids     []int64
	lens    []uint16 // numFields per doc
	sumLen  [numFields]int64
	terms   []byte
	termEnd []uint32 // term i is terms[termEnd[i-1]:termEnd[i]]
	df      []uint32
	post    []byte
	postEnd []uint32
	size    int64
	crc     uint32
}

var segMagic = []byte("MRLEX1\n\x00")

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

func (s *segment) docs() int     { return len(s.ids) }
func (s *segment) numTerms() int { return len(s.termEnd) }

func (s *segment) term(i int) []byte     { return span(s.terms, s.termEnd, i) }
func (s *segment) postings(i int) []byte { return span(s.post, s.postEnd, i) }

// span is item i of data, whose items end at ends.
func span(data []byte, ends []uint32, i int) []byte {
	var from uint32
	if i > 0 {
		from = ends[i-1]
	}
	return data[from:ends[i]]
}

// find returns the index of term t, or -1.
func (s *segment) find(t string) int {
	lo, hi := 0, len(s.termEnd)
	for lo < hi {
		m := int(uint(lo+hi) >> 1)
		if string(s.term(m)) < t { // no allocation: the compiler compares in place
			lo = m + 1
		} else {
			hi = m
		}
	}
	if lo < len(s.termEnd) && string(s.term(lo)) == t {
		return lo
	}
	return -1
}

// posting is one doc's term frequencies in each field.
type posting struct {
	ord uint32
	tf  [numFields]uint32
}

// appendPosting encodes p after a posting for ordinal prev (or the first,
// with prev = -1): the ordinal difference, then body tf << 2 | has heading
// << 1 | has name, then the heading and name tf when present. Most postings
// are body-only and take two bytes.
func appendPosting(b []byte, prev int64, p posting) []byte {
	b = binary.AppendUvarint(b, uint64(int64(p.ord)-prev))
	code := uint64(p.tf[FieldBody]) << 2
	if p.tf[FieldHeading] > 0 {
		code |= 2
	}
	if p.tf[FieldName] > 0 {
		code |= 1
	}
	b = binary.AppendUvarint(b, code)
	if p.tf[FieldHeading] > 0 {
		b = binary.AppendUvarint(b, uint64(p.tf[FieldHeading]))
	}
	if p.tf[FieldName] > 0 {
		b = binary.AppendUvarint(b, uint64(p.tf[FieldName]))
	}
	return b
}

// postingReader walks one term's postings.
type postingReader struct {
	b    []byte
	prev int64
}

func (r *postingReader) next(p *posting) bool {
	if len(r.b) == 0 {
		return false
	}
	d, n := binary.Uvarint(r.b)
	code, m := binary.Uvarint(r.b[n:])
	r.b = r.b[n+m:]
	r.prev += int64(d)
	p.ord = uint32(r.prev)
	p.tf[FieldBody] = uint32(code >> 2)
	p.tf[FieldHeading], p.tf[FieldName] = 0, 0
	if code&2 != 0 {
		v, k := binary.Uvarint(r.b)
		p.tf[FieldHeading], r.b = uint32(v), r.b[k:]
	}
	if code&1 != 0 {
		v, k := binary.Uvarint(r.b)
		p.tf[FieldName], r.b = uint32(v), r.b[k:]
	}
	return true
}

// segmentBuilder collects terms in byte order with their encoded postings.
type segmentBuilder struct {
	seg segment
}

func (sb *segmentBuilder) addDoc(id int64, lens [numFields]int) {
	sb.seg.ids = append(sb.seg.ids, id)
	for f, n := range lens {
		sb.seg.lens = append(sb.seg.lens, uint16(min(n, math.MaxUint16)))
		sb.seg.sumLen[f] += int64(n)
	}
}

func (sb *segmentBuilder) addTerm(t []byte, df int, postings []byte) {
	sb.seg.terms = append(sb.seg.terms, t...)
	sb.seg.termEnd = append(sb.seg.termEnd, uint32(len(sb.seg.terms)))
	sb.seg.df = append(sb.seg.df, uint32(df))
	sb.seg.post = append(sb.seg.post, postings...)
	sb.seg.postEnd = append(sb.seg.postEnd, uint32(len(sb.seg.post)))
}

// buildSegment indexes docs (sorted by id) into a new segment.
func buildSegment(docs []Doc) *segment {
	type termPostings struct {
		b    []byte
		last int64
		df   int
	}
	byTerm := map[string]*termPostings{}
	var sb segmentBuilder
	var toks []string
	tfs := map[string][numFields]uint32{}
	for ord, d := range docs {
		var lens [numFields]int
		clear(tfs)
		for f, text := range [numFields]string{d.Body, d.Heading, d.Name} {
			toks = AppendTokens(toks[:0], text)
			lens[f] = len(toks)
			for _, t := range toks {
				tf := tfs[t]
				tf[f]++
				tfs[t] = tf
			}
		}
		sb.addDoc(d.ID, lens)
		for t, tf := range tfs {
			tp := byTerm[t]
			if tp == nil {
				tp = &termPostings{last: -1}
				byTerm[t] = tp
			}
			tp.b = appendPosting(tp.b, tp.last, posting{ord: uint32(ord), tf: tf})
			tp.last = int64(ord)
			tp.df++
		}
	}
	for _, t := range slices.Sorted(maps.Keys(byTerm)) {
		tp := byTerm[t]
		sb.addTerm([]byte(t), tp.df, tp.b)
	}
	return &sb.seg
}

// encode returns the segment file's bytes and records size and checksum.
func (s *segment) encode() []byte {
	b := append([]byte(nil), segMagic...)
	b = binary.AppendUvarint(b, uint64(len(s.ids)))
	b = binary.AppendUvarint(b, uint64(len(s.termEnd)))
	for _, n := range s.sumLen {
		b = binary.AppendUvarint(b, uint64(n))
	}
	var prev int64 // the first id is its difference from 0
	for _, id := range s.ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	for _, n := range s.lens {
		b = binary.AppendUvarint(b, uint64(n))
	}
	for i := range s.termEnd {
		t := s.term(i)
		b = binary.AppendUvarint(b, uint64(len(t)))
		b = append(b, t...)
		b = binary.AppendUvarint(b, uint64(s.df[i]))
		b = binary.AppendUvarint(b, uint64(len(s.postings(i))))
	}
	b = append(b, s.post...)
	s.crc = crc32.Checksum(b, castagnoli)
	b = binary.LittleEndian.AppendUint32(b, s.crc)
	s.size = int64(len(b))
	return b
}

var errCorrupt = errors.New("lexical segment is damaged")

// decodeSegment parses a segment file's bytes, checking the checksum.
func decodeSegment(b []byte) (*segment, error) {
	if len(b) < len(segMagic)+4 || !bytes.Equal(b[:len(segMagic)], segMagic) {
		return nil, errCorrupt
	}
	body := b[:len(b)-4]
	crc := binary.LittleEndian.Uint32(b[len(b)-4:])
	if crc32.Checksum(body, castagnoli) != crc {
		return nil, fmt.Errorf("%w: checksum mismatch", errCorrupt)
	}
	r := varintReader{b: body[len(segMagic):]}
	s := &segment{size: int64(len(b)), crc: crc}
	nDocs, nTerms := r.int(), r.int()
	for f := range s.sumLen {
		s.sumLen[f] = int64(r.uint())
	}
	if r.err || nDocs > len(r.b) || nTerms > len(r.b) {
		return nil, errCorrupt
	}
	s.ids = make([]int64, nDocs)
	var id int64
	for i := range s.ids {
		id += int64(r.uint())
		s.ids[i] = id
	}
	s.lens = make([]uint16, nDocs*numFields)
	for i := range s.lens {
		s.lens[i] = uint16(r.uint())
	}
	s.termEnd = make([]uint32, nTerms)
	s.df = make([]uint32, nTerms)
	s.postEnd = make([]uint32, nTerms)
	var terms []byte
	var postLen uint64
	for i := range nTerms {
		n := r.int()
		if r.err || n > len(r.b) {
			return nil, errCorrupt
		}
		terms = append(terms, r.b[:n]...)
		r.b = r.b[n:]
		s.termEnd[i] = uint32(len(terms))
		s.df[i] = uint32(r.uint())
		postLen += r.uint()
		s.postEnd[i] = uint32(postLen)
	}
	if r.err || postLen != uint64(len(r.b)) {
		return nil, errCorrupt
	}
	s.terms, s.post = terms, r.b
	return s, nil
}

type varintReader struct {
	b   []byte
	err bool
}

func (r *varintReader) uint() uint64 {
	v, n := binary.Uvarint(r.b)
	if n <= 0 {
		r.err, r.b = true, nil
		return 0
	}
	r.b = r.b[n:]
	return v
}

func (r *varintReader) int() int {
	v := r.uint()
	if v > math.MaxInt32 {
		r.err = true
		return 0
	}
	return int(v)
}

// mergeSegments writes the live docs of several segments, in order, into
// one. dead[i] is segment i's deletion bitmap (nil for none).
func mergeSegments(segs []*segment, dead [][]uint64) *segment {
	var sb segmentBuilder
	remap := make([][]int32, len(segs))
	for i, s := range segs {
		remap[i] = make([]int32, s.docs())
		for o := range s.docs() {
			if isDead(dead[i], o) {
				remap[i][o] = -1
				continue
			}
			remap[i][o] = int32(len(sb.seg.ids))
			var lens [numFields]int
			for f := range lens {
				lens[f] = int(s.lens[o*numFields+f])
			}
			sb.addDoc(s.ids[o], lens)
		}
	}
	// Merge the sorted term lists.
	next := make([]int, len(segs))
	var buf []byte
	for {
		var low []byte
		for i, s := range segs {
			if next[i] < s.numTerms() {
				if t := s.term(next[i]); low == nil || bytes.Compare(t, low) < 0 {
					low = t
				}
			}
		}
		if low == nil {
			break
		}
		low = slices.Clone(low)
		buf = buf[:0]
		last, df := int64(-1), 0
		var p posting
		for i, s := range segs {
			if next[i] >= s.numTerms() || !bytes.Equal(s.term(next[i]), low) {
				continue
			}
			r := postingReader{b: s.postings(next[i]), prev: -1}
			for r.next(&p) {
				if o := remap[i][p.ord]; o >= 0 {
					p.ord = uint32(o)
					buf = appendPosting(buf, last, p)
					last = int64(o)
					df++
				}
			}
			next[i]++
		}
		if df > 0 {
			sb.addTerm(low, df, buf)
		}
	}
	return &sb.seg
}

func isDead(bits []uint64, ord int) bool {
	return bits != nil && bits[ord>>6]&(1<<(ord&63)) != 0
}

// IsSegmentFile reports whether a file name in the index folder is a
// lexical segment, so the owner can remove ones no commit refers to.
func IsSegmentFile(name string) bool {
	return strings.HasPrefix(name, "lexical-") && strings.HasSuffix(name, ".seg")
}

// SegmentName is the file name of the segment written by commit generation.
func SegmentName(generation int64) string {
	return fmt.Sprintf("lexical-%08d.seg", generation)
}
