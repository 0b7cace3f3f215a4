package search

import (
	"fmt"
	"strconv"
	"strings"
)

// fusionParams are a fusion's constants, written after its name:
// "share:a=1,g=1" is FusionShare with a = 1 and g = 1. A fusion named
// alone uses its defaults. The evaluation (bench/cmd/fusion) tries
// variants this way without a rebuild.
type fusionParams map[string]float64

func (p fusionParams) get(name string, def float64) float64 {
	if v, ok := p[name]; ok {
		return v
	}
	return def
}

// parseFusion splits "name:k=v,k=v" into the fusion and its constants.
func parseFusion(f Fusion) (Fusion, fusionParams, error) {
	name, params, err := parseSpec(string(f))
	if err != nil {
		return "", nil, fmt.Errorf("fusion %q: %w", f, err)
	}
	switch Fusion(name) {
	case FusionSpecific, FusionShare, FusionCoverage, FusionCalibrated, FusionRRF:
		return Fusion(name), params, nil
	}
	return "", nil, fmt.Errorf("fusion %q is not one of specific, share, coverage, calibrated, rrf", name)
}

func parseSpec(s string) (string, fusionParams, error) {
	name, rest, _ := strings.Cut(s, ":")
	p := fusionParams{}
	for kv := range strings.SplitSeq(rest, ",") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		x, err := strconv.ParseFloat(v, 64)
		if !ok || err != nil {
			return "", nil, fmt.Errorf("%q is not name=number", kv)
		}
		p[k] = x
	}
	return name, p, nil
}

// diversity says how many passages of one file may lead the results
// before the file's further passages give way to other files.
type diversity struct {
	free int     // passages of a file ranked on their score alone; 0 = no limit
	step float64 // score handicap of each passage of a file past the free ones
}

func parseDiversity(s string) (diversity, error) {
	_, p, err := parseSpec(":" + s)
	if err != nil {
		return diversity{}, fmt.Errorf("diversity %q: %w", s, err)
	}
	return diversity{free: int(p.get("free", 0)), step: p.get("step", 1)}, nil
}
