package localstore

import (
	"maps"
	"math/rand/v2"
	"testing"
)

// TestCowMapViewsKeepTheirContents: after random changes, every view taken
// by Share still holds exactly what the map held when it was taken, and
// the map holds what a plain map given the same changes holds.
func TestCowMapViewsKeepTheirContents(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	c := newChunkMap()
	plain := map[int64]liveChunk{}
	type view struct {
		shared *cowMap[int64, liveChunk]
		want   map[int64]liveChunk
	}
	var views []view
	for step := range 20000 {
		id := rng.Int64N(50000)
		if rng.IntN(3) == 0 {
			c.Delete(id)
			delete(plain, id)
		} else {
			v := liveChunk{Offset: int64(step)}
			c.Set(id, v)
			plain[id] = v
		}
		if step%1000 == 0 {
			views = append(views, view{c.Share(), maps.Clone(plain)})
		}
	}
	views = append(views, view{c, plain})
	for i, v := range views {
		got := maps.Collect(v.shared.All())
		if v.shared.Len() != len(v.want) || !maps.Equal(got, v.want) {
			t.Fatalf("view %d: %d entries (Len %d), want %d", i, len(got), v.shared.Len(), len(v.want))
		}
		for id, want := range v.want {
			if got, ok := v.shared.Get(id); !ok || got != want {
				t.Fatalf("view %d: Get(%d) = %v, %v", i, id, got, ok)
			}
		}
	}
}
