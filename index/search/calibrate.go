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
// discounted, a question in the folder's words is not. Then the raw score
// at cut maps to DefaultScoreThreshold, linearly on either side. Both steps
// keep the order of one query's results. The constants were chosen on
// bench/cmd/noise (60 no-answer queries over the five evaluation sets):
// cut sits just below the weakest answer each mode found in a top 5 at
// the old threshold.
type noiseCut struct {
	full, power, cut float64
}

var noiseCuts = map[Mode]noiseCut{
	Dense:   {full: 0.8, power: 0.5, cut: 0.21},
	Keyword: {full: 1, power: 3, cut: 0.015},
	Hybrid:  {full: 0.5, power: 1.5, cut: 0.305},
}

// calibrated is the score a result of raw score x gets in mode for a
// query whose keyword coverage is coverage.
func calibrated(mode Mode, x, coverage float64) float64 {
	n, ok := noiseCuts[mode]
	if !ok {
		return x
	}
	x *= math.Pow(min(1, coverage/n.full), n.power)
	if x < n.cut {
		return x * DefaultScoreThreshold / n.cut
	}
	return unit(DefaultScoreThreshold + (x-n.cut)*(1-DefaultScoreThreshold)/(1-n.cut))
}
