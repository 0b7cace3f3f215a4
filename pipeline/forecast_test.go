package pipeline

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strings"
	"testing"
	"time"
)

type fileChunks struct {
	ext    string
	size   int64
	chunks int
}

func manpageChunks(t *testing.T) []fileChunks {
	t.Helper()
	f, err := os.Open("testdata/manpage-chunks.txt")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out []fileChunks
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if strings.HasPrefix(sc.Text(), "#") {
			continue
		}
		var c fileChunks
		if _, err := fmt.Sscan(sc.Text(), &c.ext, &c.size, &c.chunks); err != nil {
			t.Fatalf("%q: %v", sc.Text(), err)
		}
		out = append(out, c)
	}
	return out
}

// Replaying a real folder's files in eleven orders, the shown total never
// decreases while files remain, ends at the count, stays within 0.2 % above
// it throughout, and is already more than half of it after a tenth of the
// files; the likely total is never below it.
func TestForecastGrowsTowardTheCount(t *testing.T) {
	files := manpageChunks(t)
	truth := 0
	for _, f := range files {
		truth += f.chunks
	}
	orders := map[string][]fileChunks{"walk": files}
	orders["small first"] = slices.SortedFunc(slices.Values(files), func(a, b fileChunks) int { return int(a.size - b.size) })
	orders["large first"] = slices.SortedFunc(slices.Values(files), func(a, b fileChunks) int { return int(b.size - a.size) })
	for seed := range uint64(8) {
		o := slices.Clone(files)
		rand.New(rand.NewPCG(seed, 1)).Shuffle(len(o), func(i, j int) { o[i], o[j] = o[j], o[i] })
		orders[fmt.Sprintf("shuffle %d", seed)] = o
	}
	for name, o := range orders {
		f := newForecast()
		for _, c := range o {
			f.plan(c.ext, c.size)
		}
		last := 0
		for i, c := range o {
			exp, likely := f.totals()
			if exp < last {
				t.Errorf("%s: after %d files the total fell from %d to %d", name, i, last, exp)
			}
			if exp > truth+truth/500 {
				t.Errorf("%s: after %d files the total %d overshoots the count %d by more than 0.2 %%", name, i, exp, truth)
			}
			if likely < exp {
				t.Errorf("%s: likely %d below expected %d", name, likely, exp)
			}
			if i == len(o)/10 && exp < truth/2 {
				t.Errorf("%s: after a tenth of the files the total is %d, under half the count %d", name, exp, truth)
			}
			last = exp
			f.chunked(c.ext, c.size, c.chunks, true)
		}
		if exp, likely := f.totals(); exp != truth || likely != truth {
			t.Errorf("%s: final totals %d, %d, want the count %d", name, exp, likely, truth)
		}
	}
}

// At a steady average rate the ETA runs down: once the rate window has
// filled, a batch that moves nothing for three seconds does not make it
// rise by more than a second.
func TestETASteadyAndSmooth(t *testing.T) {
	var e ETA
	at := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	done := 0
	var etas []time.Duration
	for s := range 60 {
		if s%8 >= 5 { // every 8 s, a 3 s batch moves nothing...
			done += 0
		} else { // ...made up by the other 5: 40 chunks a second on average
			done += 64
		}
		_, eta, ok := e.Update(at.Add(time.Duration(s)*time.Second), Progress{ChunksDone: done, ChunksLikely: 4000})
		if ok {
			etas = append(etas, eta)
		}
	}
	if len(etas) < 55 {
		t.Fatalf("%d ETAs in 60 reports", len(etas))
	}
	for i := int(etaWindow / time.Second); i < len(etas); i++ {
		if etas[i] > etas[i-1]+time.Second {
			t.Errorf("ETA %d rose from %v to %v in one second: %v", i, etas[i-1], etas[i], etas)
		}
	}
	// 4000 - 2400 chunks done after 60 s at 40/s: 40 s left.
	if got := etas[len(etas)-1]; got < 30*time.Second || got > 50*time.Second {
		t.Errorf("final ETA %v, want about 40 s", got)
	}
}
