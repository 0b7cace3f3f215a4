package search

import "math"

// NullCosine describes a model's cosines between a query and passages
// unrelated to it: their mean and spread (standard deviation). Models
// differ widely (all-MiniLM-L6-v2 about 0.07 ± 0.09, bge-small-en-v1.5
// near 0.5), so a cosine means something only against its model's null.
type NullCosine struct {
	Mean   float64 `json:"mean"`
	Spread float64 `json:"spread"`
}

// ReferenceNull is all-MiniLM-L6-v2's null (bench/cmd/noise -bg measures
// every model's the same way), fp32's and the default q8 file's alike: the
// scale the fusion and the score cut-offs were tuned on. Other models'
// cosines are mapped onto it.
var ReferenceNull = NullCosine{Mean: 0.069, Spread: 0.092}

// reference says m is the reference model's null, or none measured.
func (m NullCosine) reference() bool { return m.Spread <= 0 || m == ReferenceNull }

// cosine maps a raw cosine of a model whose null is m onto the reference
// model's scale: as many spreads above the null mean as before. A zero
// null (a model nobody measured) is taken as the reference.
func (m NullCosine) cosine(c float64) float64 {
	if m.reference() {
		return unit(c)
	}
	return unit(ReferenceNull.Mean + (c-m.Mean)*ReferenceNull.Spread/m.Spread)
}

// noiseCut is, per mode, how a search's scores become calibrated ones.
// Every score of one query is multiplied by the same gates (see gates),
// so each step keeps the order of one query's results: dense mode stays
// in cosine order. Then the raw score at cut maps to
// DefaultScoreThreshold, linearly on either side. The constants were
// chosen on bench/cmd/noise (docs/search-fusion.md, "Calibration").
type noiseCut struct {
	cut float64
	// full and power weigh the keyword evidence, min(1,
	// coverage/full)^power; 0: none. Keyword mode has no other evidence.
	// In the modes that embed the query its meaning lifts it to 1: see
	// gates.
	full, power float64
	// floor and floorSpan: the meaning that overrides missing words, on
	// best + topic·background (0: none).
	floor, floorSpan float64
	// topic weighs the query's background (its mean cosine with the
	// folder) against its best cosine; in the topic gate their sum must
	// reach topicAt (0: no such gate).
	topic, topicAt float64
	// spare: a query whose first result holds every word of it the folder
	// knows, the folder knowing at least this share of its keyword weight,
	// is not discounted for its distance in meaning (an identifier); 0:
	// never spared.
	spare         float64
	support, lead float64 // 0: no such gate
}

var noiseCuts = map[Mode]noiseCut{
	Dense:   {cut: 0.21, full: 0.5, power: 1.5, floor: 0.8, floorSpan: 0.1, topic: 4, support: 0.3},
	Keyword: {full: 1, power: 3, cut: 0.015},
	Hybrid: {cut: 0.25, full: 0.5, power: 1.5, floor: 0.8, floorSpan: 0.1, topic: 4, topicAt: 0.45,
		spare: 0.5, support: 0.3, lead: 0.6},
}

// querySignals are what one query's calibration reads, the same for all
// its results.
type querySignals struct {
	// coverage is the share of the query's keyword weight the folder knows
	// at all (lexical.Query.Coverage).
	coverage float64
	// best is the best cosine of any chunk with the query, first's the
	// cosine of the chunk ranked first; both on the reference model's
	// scale, 0 in keyword mode.
	best, first float64
	// exact says the first result holds the words of the query the folder
	// knows (at least exactShare of their weight).
	exact bool
	// background is the query's mean cosine with the folder (background),
	// when backgroundKnown.
	background      float64
	backgroundKnown bool
	// shift is the folder's (folderShift): best and first include it, and
	// every raw score is read through shifted before it is gated.
	shift float64
}

// gates is the factor, in [0, 1], every raw score of a query with signals
// q is multiplied by in mode n:
//   - evidence, max(min(1, coverage/full)^power, meaning): a random string
//     or a question about what the folder never mentions is discounted, a
//     question in the folder's words is not; nor, in the modes that embed
//     the query, one whose meaning the folder holds: meaning is
//     min(1, (best + topic·background − floor)/floorSpan), so the words
//     the folder lacks never sink a query alone (a paraphrase shares none
//     with its answer; "can I accept a present from a vendor" against a
//     rule on gifts from suppliers). Keyboard mashes against the Go docs
//     (best 0.31–0.42, background 0.06–0.12) stay below the floor, a
//     handbook question sharing no word with the folder (best 0.35,
//     background 0.17) clears it. Without a background (another model)
//     the floor reads the best cosine alone;
//   - min(1, (best + topic·background)/topicAt): a query about nothing
//     the folder is about (its mean cosine with the folder near 0) needs
//     a closer passage than one on the folder's topic: "edit the Windows
//     registry to start a program at login" against the man pages, best
//     cosine 0.31 with a page on login programs, background −0.01, is
//     discounted; "stop people deleting each other's files in a shared
//     folder", best 0.42, background 0.04, is not. Its first result
//     holding every word of the query the folder knows, the folder
//     knowing most of them, spares a query (keyword evidence: an
//     identifier such as parse_http_header is far from everything in
//     meaning, and found by its words alone). Only with the reference
//     model (see ranker.readBackground);
//   - min(1, best/support): a question whose meaning nothing in the
//     folder is near is discounted, one with a close passage is not, nor
//     one spared as above. With every model, its cosines mapped onto the
//     reference's scale (NullCosine). Dense mode's one gate: it keeps the
//     cosines' order, and no word spares a query;
//   - min(1, first/best/lead): a query whose first result is far less
//     close in meaning than the closest chunk, without holding every word
//     of the query, was put first by some shared words (an off-topic
//     question matching a page's words) and is discounted; a first result
//     holding all its words (an identifier: see ranker.signals) or close
//     in meaning is not. Only with the reference model, on whose cosines
//     it was chosen.
func (n noiseCut) gates(q querySignals) float64 {
	g := 1.0
	if n.power > 0 {
		g = math.Pow(min(1, q.coverage/n.full), n.power)
		if n.floorSpan > 0 {
			m := q.best
			if q.backgroundKnown {
				m += n.topic * q.background
			}
			g = max(g, unit((m-n.floor)/n.floorSpan))
		}
	}
	spared := n.spare > 0 && q.exact && q.coverage >= n.spare
	if n.topicAt > 0 && q.backgroundKnown && !spared {
		g *= unit((q.best + n.topic*q.background) / n.topicAt)
	}
	if n.support > 0 && !spared {
		g *= unit(q.best / n.support)
	}
	if n.lead > 0 && q.best > 0 {
		g *= unit(q.first / q.best / n.lead)
	}
	return g
}

// minGate is the least gate, far below any threshold one would set.
const minGate = 1e-9

// calibrated is the score a result of raw score x gets in mode for a
// query with signals q.
func calibrated(mode Mode, x float64, q querySignals) float64 {
	n, ok := noiseCuts[mode]
	if !ok {
		return x
	}
	x = shifted(x, q.shift)
	// Never quite 0: a query gated to nothing keeps its order at threshold 0.
	x *= max(n.gates(q), minGate)
	if x < n.cut {
		return x * DefaultScoreThreshold / n.cut
	}
	return unit(DefaultScoreThreshold + (x-n.cut)*(1-DefaultScoreThreshold)/(1-n.cut))
}

// folderShift is how much higher a folder's cosines read, given its null
// (folderNull, on the reference model's scale): the gap between its noise
// level and referenceFolderNull's. A dozen short files leave an unrelated
// query further from everything than the Go docs' thousands of chunks do,
// so the same best cosine says more there. Never negative: the gates
// were chosen on the Go docs and the man pages, the busier folder, and
// hold for folders as busy or busier; only quieter ones are read up.
func folderShift(null float64) float64 { return max(0, referenceFolderNull-null) }

// shifted reads x, a score in [0, 1], by s higher (s > 0: 1-(1-x)(1-s))
// or lower (s < 0: x(1+s)). It never reorders and keeps every score above
// 0 above 0, so one query's order survives at threshold 0.
func shifted(x, s float64) float64 {
	switch {
	case s == 0:
		return x
	case s > 0:
		return 1 - (1-x)*(1-min(s, 1))
	}
	return x * (1 + max(s, -1))
}
