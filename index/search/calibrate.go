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

// ReferenceNull is all-MiniLM-L6-v2's null (stages/model measures every
// model's the same way): the scale the fusion and the score cut-offs were
// tuned on. Other models' cosines are mapped onto it.
var ReferenceNull = NullCosine{Mean: 0.069, Spread: 0.092}

// cosine maps a raw cosine of a model whose null is m onto the reference
// model's scale: as many spreads above the null mean as before. A zero
// null (a model nobody measured) is taken as the reference.
func (m NullCosine) cosine(c float64) float64 {
	if m.Spread <= 0 || m == ReferenceNull {
		return unit(c)
	}
	return unit(ReferenceNull.Mean + (c-m.Mean)*ReferenceNull.Spread/m.Spread)
}

// noiseCut is, per mode, how a search's scores become calibrated ones.
// Every score of one query is multiplied by the same gate,
// min(1, coverage/full)^power, where coverage is the share of the query's
// keyword weight the folder knows at all (lexical.Index.QueryCoverage): a
// random string or a question about what the folder never mentions is
// discounted, a question in the folder's words is not. Where support is
// set, the scores are also multiplied by min(1, top/support), top being
// the best cosine of any chunk with the query (on the reference model's
// scale): a query whose words the folder uses but whose meaning nothing in
// it is near (an off-topic question lifted by shared words) is discounted,
// one with a close passage is not. Then the raw score at cut maps to
// DefaultScoreThreshold, linearly on either side. Each step keeps the order
// of one query's results. The constants were chosen on bench/cmd/noise
// (docs/search-fusion.md, "Calibration"): cut sits just below the weakest
// answer each mode found in a top 5 at the old threshold; support was
// chosen on the Go docs and man pages alone, inside the largest value
// that lost none of their answers, and checked on the other three sets.
type noiseCut struct {
	full, power, cut float64
	support          float64 // 0: no support gate
}

var noiseCuts = map[Mode]noiseCut{
	Dense:   {full: 0.8, power: 0.5, cut: 0.21},
	Keyword: {full: 1, power: 3, cut: 0.015},
	Hybrid:  {full: 0.5, power: 1.5, cut: 0.305, support: 0.3},
}

// calibrated is the score a result of raw score x gets in mode for a
// query whose keyword coverage is coverage and whose best cosine with any
// chunk is top.
func calibrated(mode Mode, x, coverage, top float64) float64 {
	n, ok := noiseCuts[mode]
	if !ok {
		return x
	}
	x *= math.Pow(min(1, coverage/n.full), n.power)
	if n.support > 0 {
		x *= unit(top / n.support)
	}
	if x < n.cut {
		return x * DefaultScoreThreshold / n.cut
	}
	return unit(DefaultScoreThreshold + (x-n.cut)*(1-DefaultScoreThreshold)/(1-n.cut))
}
