package search

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// Calibration keeps each query's order and puts every mode's cut on the
// default threshold. Only keyword mode, which has nothing else to go on,
// gives a query the folder has no words of nothing: in dense and hybrid
// mode the words the folder lacks change no score of a query close in
// meaning (a paraphrase shares none with its answer).
func TestCalibrated(t *testing.T) {
	full := querySignals{coverage: 1, best: 1, first: 1}
	for mode, n := range noiseCuts {
		if got := calibrated(mode, n.cut, full); math.Abs(got-DefaultScoreThreshold) > 1e-12 {
			t.Errorf("%s: cut %v maps to %v, want %v", mode, n.cut, got, DefaultScoreThreshold)
		}
		if got := calibrated(mode, 1, full); got != 1 {
			t.Errorf("%s: 1 maps to %v", mode, got)
		}
		prev := -1.0
		for x := 0.0; x <= 1; x += 0.01 {
			got := calibrated(mode, x, querySignals{coverage: 0.4, best: 0.2, first: 0.1})
			if got < prev || got < 0 || got > 1 {
				t.Fatalf("%s: %v maps to %v after %v", mode, x, got, prev)
			}
			prev = got
		}
		unknown := calibrated(mode, 0.6, querySignals{best: 1, first: 1})
		low := calibrated(mode, 0.6, querySignals{coverage: 0.2, best: 1, first: 1})
		whole := calibrated(mode, 0.6, full)
		if mode == Keyword {
			if unknown > 1e-6 || low >= whole {
				t.Errorf("keyword: coverage 0 scores %v, 0.2 %v, 1 %v; want next to nothing, then lower than 1", unknown, low, whole)
			}
			continue
		}
		if unknown != whole || low != whole {
			t.Errorf("%s: coverage 0 scores %v, 0.2 %v, 1 %v; want the words the folder lacks to change nothing", mode, unknown, low, whole)
		}
	}
}

// The support gate discounts a query with no chunk near its meaning in
// proportion to its best cosine, the lead gate one whose first result is
// much less close than the closest chunk; a query with a close chunk
// ranked first is left alone, and only the modes that set them apply them.
func TestSupportAndLeadGates(t *testing.T) {
	n := noiseCuts[Hybrid]
	if n.support <= 0 || n.lead <= 0 {
		t.Fatal("hybrid mode has no support or lead gate")
	}
	x := 0.8
	at := func(best, first float64) float64 {
		return calibrated(Hybrid, x, querySignals{coverage: 1, best: best, first: first})
	}
	same := func(what string, got, want float64) {
		t.Helper()
		if math.Abs(got-want) > 1e-12 {
			t.Errorf("%s: %v, want %v", what, got, want)
		}
	}
	whole := calibrated(Hybrid, x, querySignals{coverage: 1, best: 1, first: 1})
	same("best at the support, first at the lead", at(n.support, n.lead*n.support), whole)
	same("close chunk first", at(0.95, 0.95), whole)
	same("half the support", at(n.support/2, n.support/2), calibrated(Hybrid, x/2, querySignals{coverage: 1, best: 1, first: 1}))
	same("first at half the lead", at(0.9, 0.9*n.lead/2), calibrated(Hybrid, x/2, querySignals{coverage: 1, best: 1, first: 1}))
	if got := at(0, 0); got > 1e-6 {
		t.Errorf("no chunk near the query: %v", got)
	}
	// Keyword mode reads no cosine; dense mode no lead.
	if a, b := calibrated(Keyword, x, querySignals{coverage: 1}), calibrated(Keyword, x, querySignals{coverage: 1, best: 1, first: 0.1}); a != b {
		t.Errorf("keyword: cosines change the score, %v against %v", a, b)
	}
	if a, b := calibrated(Dense, x, querySignals{best: 1, first: 1}), calibrated(Dense, x, querySignals{best: 1, first: 0.1}); a != b {
		t.Errorf("dense: the first result's cosine changes the score, %v against %v", a, b)
	}
}

// A model's cosine as many spreads above its null mean as the reference
// model's lands where the reference's would.
func TestNullCosine(t *testing.T) {
	bge := NullCosine{Mean: 0.5, Spread: 0.05}
	ref := ReferenceNull
	for _, z := range []float64{0, 1, 3} {
		if got, want := bge.cosine(bge.Mean+z*bge.Spread), ref.Mean+z*ref.Spread; math.Abs(got-want) > 1e-12 {
			t.Errorf("z %v: %v, want %v", z, got, want)
		}
	}
	if got := (NullCosine{}).cosine(0.42); got != 0.42 {
		t.Errorf("unmeasured model: %v", got)
	}
	if got := bge.cosine(bge.Mean + 20*bge.Spread); got != 1 {
		t.Errorf("far above: %v, want clamped to 1", got)
	}
	if got := bge.cosine(0); got != 0 {
		t.Errorf("far below: %v, want clamped to 0", got)
	}
}

// Every result of a search reports as its support the best cosine of any
// chunk with the query, whatever top_k asks, and keyword mode none; a
// hybrid score is its parts fused and gated by the first result's cosine.
func TestSupportIsBestCosine(t *testing.T) {
	snap := testSnapshot(t, 6)
	rng := rand.New(rand.NewPCG(7, 8))
	exact, whole := 0, 0
	for range 20 {
		vec := unitVec(rng)
		best, err := snap.Search(vec, 1)
		if err != nil {
			t.Fatal(err)
		}
		for _, mode := range []Mode{Hybrid, Dense, Keyword} {
			want := unit(float64(best[0].Score))
			if mode == Keyword {
				want = 0
			}
			for _, k := range []int{1, 10} {
				res, err := Search(snap, Request{Query: "zeta-2 passages", TopK: k, Explain: true}, vec, Options{Mode: mode})
				if err != nil {
					t.Fatal(err)
				}
				if len(res) == 0 {
					t.Fatalf("%s top_k %d: no results", mode, k)
				}
				for i := 1; i < len(res); i++ {
					if res[i].Score > res[i-1].Score {
						t.Errorf("%s top_k %d: scores rise down the list: %v after %v", mode, k, res[i].Score, res[i-1].Score)
					}
				}
				for _, r := range res {
					if math.Abs(r.Explain.Support-want) > 1e-6 {
						t.Errorf("%s top_k %d: support %v, want %v", mode, k, r.Explain.Support, want)
					}
					if mode != Hybrid {
						continue
					}
					// The score is the fused one gated by the first
					// result's cosine against the best, unless the first
					// holds every word of the query.
					x := r.Explain
					raw := 1 - (1-x.Cosine)*(1-min(x.Keyword*x.Share*x.Coverage*x.Coverage, 1))
					q := querySignals{coverage: x.Coverage, best: x.Support, first: res[0].Explain.Cosine,
						background: x.Background, backgroundKnown: true}
					if res[0].Explain.Share >= exactShare {
						q.first, q.exact, whole = x.Support, true, whole+1
					}
					// Search rounds scores to 1/1000.
					if got := calibrated(Hybrid, raw, q); math.Round(got*1e3)/1e3 != r.Score {
						t.Errorf("top_k %d: score %v, its parts give %v", k, r.Score, got)
					}
					if r.Score > 1e-6 {
						exact++
					}
				}
			}
		}
	}
	if exact == 0 || whole == 0 || whole == exact {
		t.Errorf("hybrid scores checked: %d above the least gate, %d with every word in the first result; want both kinds", exact, whole)
	}
}

// The first result's cosine counts for the lead gate only when it does
// not hold every word of the query and the model is the reference one.
func TestLeadSignal(t *testing.T) {
	other := NullCosine{Mean: 0.5, Spread: 0.05}
	for _, c := range []struct {
		null      NullCosine
		share     float64
		wantFirst float64 // 0: the best cosine
	}{
		{ReferenceNull, 0.5, 0.1},
		{NullCosine{}, 0.5, 0.1},
		{ReferenceNull, 1, 0},
		{other, 0.5, 0},
	} {
		r := &ranker{mode: Hybrid, null: c.null, coverage: 1, dense: []index.Match{{ID: 2, Score: 0.6}}}
		cands := []candidate{
			{rec: schema.Record{ID: 2}, score: 0.6, why: Explanation{Cosine: 0.6}},
			{rec: schema.Record{ID: 1}, score: 0.9, why: Explanation{Cosine: 0.1, Share: c.share}},
		}
		q := r.signals(cands)
		want := querySignals{coverage: 1, best: c.null.cosine(float64(float32(0.6))), first: c.null.cosine(c.wantFirst)}
		if c.wantFirst == 0 {
			want.first = want.best
		}
		want.exact = c.share == 1
		if q != want {
			t.Errorf("null %v, share %v: signals %+v, want %+v", c.null, c.share, q, want)
		}
	}
	if q := (&ranker{mode: Keyword, coverage: 0.5}).signals([]candidate{{score: 1}}); q != (querySignals{coverage: 0.5}) {
		t.Errorf("keyword mode: %+v", q)
	}
}

// A first result holding every word of a query the folder mostly knows is
// not discounted for its distance in meaning (an identifier); one holding
// the few words the folder knows of a longer question is, far in meaning
// and short of words both.
func TestSupportSparesExactMatches(t *testing.T) {
	n := noiseCuts[Hybrid]
	far := querySignals{coverage: 1, best: 0.1, first: 0.1}
	if g := n.gates(far); g >= 0.5 {
		t.Errorf("a far first result without every word: gate %v, want it discounted", g)
	}
	far.exact = true
	if g := n.gates(far); g != 1 {
		t.Errorf("a first result holding every word: gate %v, want 1", g)
	}
	far.coverage = n.spare
	if g := n.gates(far); g != 1 {
		t.Errorf("every word of a query the folder knows %v of: gate %v, want 1", far.coverage, g)
	}
	far.coverage = n.spare / 2
	if g, want := n.gates(far), math.Pow(far.coverage/n.full, n.power)*unit(far.best/n.support); math.Abs(g-want) > 1e-12 {
		t.Errorf("every known word, but the folder lacks most: gate %v, want the evidence and support gates' %v", g, want)
	}
}

// The words the folder lacks discount a query only when its meaning is
// far too: a close meaning on the folder's topic lifts the keyword
// evidence to 1, in dense and hybrid mode alike; keyword mode has no
// meaning to go on.
func TestMeaningOverridesMissingWords(t *testing.T) {
	// The staff handbook's "Where do we gather during an evacuation?"
	// shares no word with the folder (best 0.45, background 0.23); a
	// keyboard mash against the Go docs (best 0.42, background 0.10).
	close := querySignals{coverage: 0, best: 0.45, first: 0.45, background: 0.23, backgroundKnown: true}
	mash := querySignals{coverage: 0, best: 0.42, first: 0.42, background: 0.10, backgroundKnown: true}
	for _, mode := range []Mode{Dense, Hybrid} {
		n := noiseCuts[mode]
		if g := n.gates(close); g != 1 {
			t.Errorf("%s: a close question sharing no word: gate %v, want 1", mode, g)
		}
		if s := calibrated(mode, close.best, close); s < DefaultScoreThreshold {
			t.Errorf("%s: a close question sharing no word scores %v", mode, s)
		}
		if s := calibrated(mode, mash.best, mash); s >= DefaultScoreThreshold {
			t.Errorf("%s: a keyboard mash scores %v", mode, s)
		}
	}
	if g := noiseCuts[Keyword].gates(close); g != 0 {
		t.Errorf("keyword: a query sharing no word: gate %v, want 0", g)
	}
}

// The topic gate discounts a query whose best passage is only fairly close
// when nothing in the folder shares its topic, and leaves alone the same
// passage for a query on the folder's topic, a query its first result
// matches word for word, and a search whose background was not read.
func TestTopicGate(t *testing.T) {
	n := noiseCuts[Hybrid]
	if n.topic <= 0 || n.topicAt <= 0 {
		t.Fatal("hybrid mode has no topic gate")
	}
	// The man pages' figures: "edit the Windows registry to start a
	// program at login" (best 0.314, background -0.007) and "stop people
	// from deleting each other's files in a shared folder" (best 0.42,
	// background 0.04), each first result its closest chunk.
	offTopic := querySignals{coverage: 1, best: 0.314, first: 0.314, background: -0.007, backgroundKnown: true}
	onTopic := querySignals{coverage: 1, best: 0.42, first: 0.42, background: 0.04, backgroundKnown: true}
	if g := n.gates(onTopic); g != 1 {
		t.Errorf("a question on the folder's topic: gate %v, want 1", g)
	}
	want := unit((offTopic.best + n.topic*offTopic.background) / n.topicAt)
	if g := n.gates(offTopic); math.Abs(g-want) > 1e-12 || g > 0.7 {
		t.Errorf("an off-topic question: gate %v, want %v (under 0.7)", g, want)
	}
	// Its raw score 0.366 was above the cut; now it is below the threshold.
	if s := calibrated(Hybrid, 0.366, offTopic); s >= DefaultScoreThreshold {
		t.Errorf("the off-topic question scores %v, at or above the threshold", s)
	}
	if s := calibrated(Hybrid, 0.366, onTopic); s < DefaultScoreThreshold {
		t.Errorf("the on-topic question scores %v, below the threshold", s)
	}
	unread := offTopic
	unread.backgroundKnown = false
	if g := n.gates(unread); g != 1 {
		t.Errorf("no background read: gate %v, want 1", g)
	}
	exact := offTopic
	exact.exact = true
	if g := n.gates(exact); g != 1 {
		t.Errorf("a first result holding every word: gate %v, want 1", g)
	}
	// "what does parse_http_header mean?": the folder lacks "mean", the
	// first result holds the rest: spared.
	exact.coverage, exact.best, exact.first, exact.background = 0.83, 0.15, 0.15, -0.003
	if g := n.gates(exact); g != 1 {
		t.Errorf("an identifier in a question the folder lacks a word of: gate %v, want 1", g)
	}
	// Dense mode's one gate is its support, every result of a query by
	// the same factor (its order stays the cosines'), with no word sparing
	// it; neither it nor keyword mode reads a background.
	d := noiseCuts[Dense]
	if g, want := d.gates(exact), unit(exact.best/d.support); math.Abs(g-want) > 1e-12 || g >= 1 {
		t.Errorf("dense: gate %v, want the support gate's %v", g, want)
	}
	for _, mode := range []Mode{Dense, Keyword} {
		if a, b := calibrated(mode, 0.5, unread), calibrated(mode, 0.5, offTopic); a != b {
			t.Errorf("%s: the background changes the score, %v against %v", mode, a, b)
		}
	}
}
