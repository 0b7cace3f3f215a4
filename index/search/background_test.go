package search

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
)

// With fewer chunks than the sample, the background is the exact mean
// cosine with every chunk, largest (|Σv|/N) for the query pointing at the
// folder's centroid.
func TestBackgroundIsMeanCosine(t *testing.T) {
	snap := testSnapshot(t, 6)
	var ids []int64
	for _, p := range snap.Paths() {
		f, _ := snap.File(p)
		ids = append(ids, f.ChunkIDs...)
	}
	if len(ids) != snap.Chunks() || len(ids) > backgroundSample {
		t.Fatalf("%d chunk ids of %d chunks", len(ids), snap.Chunks())
	}
	centroid := make([]float32, testDim)
	probe := unitVec(rand.New(rand.NewPCG(9, 9)))
	want := meanCosine(t, snap, probe)
	got, err := background(snap, probe)
	if err != nil || math.Abs(got-want) > 1e-6 {
		t.Fatalf("random query: background %v (%v), want the mean cosine %v", got, err, want)
	}
	// The folder's own direction: the mean of its files' mean vectors,
	// normalised; the probe along it gets that mean's length.
	files := snap.Paths()
	for _, p := range files {
		f, _ := snap.File(p)
		for i := range testDim {
			unitI := make([]float32, testDim)
			unitI[i] = 1
			c, err := snap.Similarities(unitI, f.ChunkIDs)
			if err != nil {
				t.Fatal(err)
			}
			for _, x := range c {
				centroid[i] += x / float32(len(c)*len(files))
			}
		}
	}
	var norm float64
	for _, x := range centroid {
		norm += float64(x * x)
	}
	for i := range centroid {
		centroid[i] /= float32(math.Sqrt(norm))
	}
	top := math.Sqrt(norm)
	if on, err := background(snap, centroid); err != nil || math.Abs(on-top) > 1e-5 || on <= got {
		t.Errorf("the folder's centroid: background %v (%v), want its length %v, above a random query's %v", on, err, top, got)
	}
}

// Each file weighs the same in the background, however long: a short
// page on the query's topic beside a long file on nothing near it (a log,
// a data dump) is half the folder, not one chunk in hundreds. Below and
// above the sample size.
func TestBackgroundWeighsFilesAlike(t *testing.T) {
	for _, long := range []int{300, 3 * backgroundSample} {
		text := strings.Repeat("2026-11-04 12:00:01 worker heartbeat ok, queue depth nominal.\n", long*16)
		snap := buildSnapshot(t, 2, func(f int) (string, string) {
			if f == 0 {
				return "gifts.md", "Gifts from suppliers must be declared."
			}
			return "server-log.txt", text
		}, func(f int) []float32 {
			vec := make([]float32, testDim)
			vec[f] = 1 // the page along e0, every log chunk along e1
			return vec
		})
		f, _ := snap.File("server-log.txt")
		if len(f.ChunkIDs) < long {
			t.Fatalf("the long file has %d chunks, want at least %d", len(f.ChunkIDs), long)
		}
		probe := make([]float32, testDim)
		probe[0] = 1
		if got, err := background(snap, probe); err != nil || math.Abs(got-0.5) > 1e-6 {
			t.Errorf("%d log chunks: background %v (%v), want 0.5: the page is one of two files", len(f.ChunkIDs), got, err)
		}
	}
}

// Above the sample size, the chunks read are distinct, live, spread over
// the files, and the same on every call.
func TestSampleChunksSpreadsOverFiles(t *testing.T) {
	snap := testSnapshot(t, 6)
	const n = 5
	groups := sampleChunks(snap, n)
	var ids []int64
	for _, g := range groups {
		if len(g) == 0 {
			t.Errorf("an empty group in %v", groups)
		}
		ids = append(ids, g...)
	}
	if len(ids) == 0 || len(ids) > n {
		t.Fatalf("%d ids, want 1 to %d", len(ids), n)
	}
	files := map[string]bool{}
	seen := map[int64]bool{}
	for _, id := range ids {
		if seen[id] {
			t.Errorf("chunk %d picked twice", id)
		}
		seen[id] = true
		rec, err := snap.Head(id)
		if err != nil {
			t.Fatalf("chunk %d: %v", id, err)
		}
		files[rec.Path] = true
	}
	if len(files) < n {
		t.Errorf("%d picks from %d files of %d", len(ids), len(files), len(snap.Paths()))
	}
	var again []int64
	for _, g := range sampleChunks(snap, n) {
		again = append(again, g...)
	}
	if len(again) != len(ids) {
		t.Fatalf("second sample %v, first %v", again, ids)
	}
	for i := range ids {
		if again[i] != ids[i] {
			t.Fatalf("second sample %v, first %v", again, ids)
		}
	}
}

// topicSnapshot is a folder of files, each one chunk, whose vectors have
// cosine best with the query direction e0 for the first file and others
// for the rest. Every chunk holds two of the query's words, too common to
// lift any; "tides", its third, is in every other file but the first, so
// that no result holds all of them (an exact match is spared the gates).
func topicSnapshot(t *testing.T, files int, best, others float32) index.View {
	t.Helper()
	return buildSnapshot(t, files, func(f int) (string, string) {
		text := fmt.Sprintf("Harbour ledger page %d, kept for the archive.", f)
		if f%2 == 1 {
			text += " Tides noted."
		}
		return fmt.Sprintf("page-%02d.txt", f), text
	}, func(f int) []float32 {
		// cosine c with e0, the rest on an axis of its own (1 + f%7), so
		// the pages differ from each other.
		c := others
		if f == 0 {
			c = best
		}
		vec := make([]float32, testDim)
		vec[0], vec[1+f%(testDim-1)] = c, float32(math.Sqrt(float64(1-c*c)))
		return vec
	})
}

// The same closest passage (cosine 0.30, first: "edit the Windows
// registry to start a program at login" against the man pages) is found in a folder whose other pages share the
// query's topic (cosine 0.12 each) and is nothing at the default threshold
// in a folder where nothing else is near the query: there the best match
// is a stray, not the folder's subject.
func TestTopicGateCutsAStrayMatch(t *testing.T) {
	query := make([]float32, testDim)
	query[0] = 1
	ask := func(snap index.View) []Result {
		t.Helper()
		res, err := Search(snap, Request{Query: "harbour ledger tides", TopK: 5, ScoreThreshold: DefaultScoreThreshold, Explain: true}, query, Options{Mode: Hybrid})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	onTopic := ask(topicSnapshot(t, 40, 0.30, 0.12))
	if len(onTopic) == 0 || onTopic[0].Path != "page-00.txt" {
		t.Fatalf("on the folder's topic: %+v, want page-00.txt first", onTopic)
	}
	if x := onTopic[0].Explain; x.Background < 0.1 || math.Abs(x.Support-0.30) > 1e-3 {
		t.Errorf("on the folder's topic: background %v, support %v", x.Background, x.Support)
	}
	if stray := ask(topicSnapshot(t, 40, 0.30, 0)); len(stray) > 0 {
		t.Errorf("a stray match in an unrelated folder: %s at %.3f (%+v), want nothing", stray[0].Path, stray[0].Score, *stray[0].Explain)
	}
	// Dense mode has no topic gate: the stray match stays there.
	res, err := Search(topicSnapshot(t, 40, 0.30, 0), Request{Query: "harbour ledger tides", TopK: 5, ScoreThreshold: DefaultScoreThreshold}, query, Options{Mode: Dense})
	if err != nil || len(res) == 0 {
		t.Errorf("dense mode: %v, %v; want the stray match", res, err)
	}
}

// The sample's centroid is kept per view: a search on another view (the
// next commit) reads that view's folder, and going back reads the first's
// again.
func TestBackgroundFollowsTheView(t *testing.T) {
	big, small := testSnapshot(t, 6), testSnapshot(t, 2)
	probe := unitVec(rand.New(rand.NewPCG(4, 2)))
	wantBig, wantSmall := meanCosine(t, big, probe), meanCosine(t, small, probe)
	if math.Abs(wantBig-wantSmall) < 1e-3 {
		t.Fatalf("the two folders give the probe the same mean cosine %v: the test could not tell them apart", wantBig)
	}
	for i, c := range []struct {
		snap index.View
		want float64
	}{{big, wantBig}, {small, wantSmall}, {big, wantBig}} {
		if got, err := background(c.snap, probe); err != nil || math.Abs(got-c.want) > 1e-6 {
			t.Errorf("search %d: background %v (%v), want the view's mean cosine %v", i, got, err, c.want)
		}
	}
}

// meanCosine is the probe's cosine with each file's chunks, averaged
// within each file and then over the files.
func meanCosine(t *testing.T, snap index.View, probe []float32) float64 {
	t.Helper()
	var sum float64
	for _, p := range snap.Paths() {
		f, _ := snap.File(p)
		cos, err := snap.Similarities(probe, f.ChunkIDs)
		if err != nil {
			t.Fatal(err)
		}
		var file float64
		for _, c := range cos {
			file += float64(c)
		}
		sum += file / float64(len(cos))
	}
	return sum / float64(len(snap.Paths()))
}
