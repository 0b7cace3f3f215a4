package embed

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	ort "github.com/yalue/onnxruntime_go"
)

// errClientGone stands for why a reindex is stopped (stdin closed, a signal).
var errClientGone = errors.New("the client went away")

// longTexts is n passages of the full 256 ids: one Embed of 32 of them
// takes two Runs of 16.
func longTexts(n int) []string {
	long := strings.Repeat("The harbour cranes unload containers from ships all night long. ", 24)
	return slices.Repeat([]string{long}, n)
}

// TestEmbedContextStops: a call whose context ends during its first Run
// starts no other Run, returns the context's cause and leaves dst as it
// came; the same embedder then embeds as before, also after a Release
// (no terminate flag outlives the call).
func TestEmbedContextStops(t *testing.T) {
	e := testEmbedder(t)
	ts := longTexts(32)
	want, err := e.Embed(nil, ts)
	if err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancelCause(context.Background())
	runs := 0
	stopFirst := func() {
		runs++
		if runs == 1 {
			cancel(errClientGone)
		}
	}
	e.beforeRun.Store(&stopFirst)
	prefix := []float32{1, 2, 3}
	got, err := e.EmbedContext(ctx, prefix, ts)
	e.beforeRun.Store(nil)
	if !errors.Is(err, errClientGone) {
		t.Fatalf("stopped call: err %v, want one wrapping %v", err, errClientGone)
	}
	if runs != 1 {
		t.Errorf("%d Runs started, want only the one under way when the context ended", runs)
	}
	if !slices.Equal(got, prefix) {
		t.Errorf("stopped call returned %d floats, want dst as it came (%d)", len(got), len(prefix))
	}

	check := func(when string, got []float32, err error) {
		t.Helper()
		if err != nil {
			t.Fatalf("%s: %v", when, err)
		}
		if len(got) != len(want) {
			t.Fatalf("%s: %d floats, want %d", when, len(got), len(want))
		}
		for i := range len(got) / Dim {
			if c := cosine(got[i*Dim:(i+1)*Dim], want[i*Dim:(i+1)*Dim]); c < 0.99999 {
				t.Fatalf("%s: text %d has cosine %v with the vector of an uninterrupted call", when, i, c)
			}
		}
	}
	live, stop := context.WithCancel(context.Background())
	defer stop()
	got, err = e.EmbedContext(live, nil, ts)
	check("the next call", got, err)
	if err := e.Release(); err != nil {
		t.Fatal(err)
	}
	got, err = e.EmbedContext(live, nil, ts[:16])
	want = want[:16*Dim]
	check("after a Release", got, err)
}

// TestEmbedContextEndedBefore: a context that ended before the call runs
// nothing.
func TestEmbedContextEndedBefore(t *testing.T) {
	e := testEmbedder(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	runs := 0
	count := func() { runs++ }
	e.beforeRun.Store(&count)
	defer e.beforeRun.Store(nil)
	if _, err := e.EmbedContext(ctx, nil, []string{"a short text"}); !errors.Is(err, context.Canceled) || runs != 0 {
		t.Errorf("err %v after %d Runs, want context.Canceled and none", err, runs)
	}
}

// TestTerminatedRunFails: ONNX Runtime ends a Run whose options carry the
// terminate flag with an error, and the session runs the next call as
// usual: what EmbedContext relies on to stop inside a Run.
func TestTerminatedRunFails(t *testing.T) {
	e := testEmbedder(t)
	if err := e.readLock(); err != nil {
		t.Fatal(err)
	}
	defer e.mu.RUnlock()
	opts, err := ort.NewRunOptions()
	if err != nil {
		t.Fatal(err)
	}
	defer opts.Destroy()
	if err := opts.Terminate(); err != nil {
		t.Fatal(err)
	}
	seqs := [][]int32{e.tok.Encode(nil, longTexts(1)[0], e.spec.MaxLength)}
	out := make([]float32, Dim)
	if err := e.run(opts, &scratch{}, seqs, []int{0}, out); err == nil {
		t.Fatal("a Run with the terminate flag set succeeded")
	}
	if err := e.run(nil, &scratch{}, seqs, []int{0}, out); err != nil {
		t.Fatalf("the Run after a terminated one: %v", err)
	}
}
