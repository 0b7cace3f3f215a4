package engine

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// indexed reports whether the current snapshot lists path.
func indexed(e *Engine, path string) bool {
	snap := e.store.Acquire()
	if snap == nil {
		return false
	}
	defer snap.Release()
	_, ok := snap.File(path)
	return ok
}

// eventually polls cond until it holds or a generous deadline passes (the
// CI machine is shared and slow).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within 60 s", what)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// With Watch on, the index follows the folder by itself: new files, editor
// saves (temp file renamed over the original), deleted and moved-in
// folders, and ignore rules that change.
func TestWatchKeepsIndexFresh(t *testing.T) {
	data := t.TempDir()
	writeCorpus(t, data, corpus)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: filepath.Join(t.TempDir(), "idx"), Watch: true, WatchSettle: 200 * time.Millisecond})
	reindex(t, e, ReindexRequest{})

	writeCorpus(t, data, map[string]string{"notes/glacier.md": "Glaciers calve icebergs where their tongues reach the sea."})
	eventually(t, "a new file is searchable", func() bool { return bestHit(t, e, "icebergs breaking off glaciers").Path == "notes/glacier.md" })

	// An editor's save: write a temporary file, rename it over the original.
	tmp := filepath.Join(data, ".alpaca.md.swp")
	if err := os.WriteFile(tmp, []byte("Llamas guard sheep flocks against foxes and coyotes."), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.Rename(tmp, filepath.Join(data, "alpaca.md")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a file saved by rename is updated", func() bool {
		r := bestHit(t, e, "animals that guard sheep from foxes")
		return r.Path == "alpaca.md" && strings.Contains(r.Snippet, "Llamas")
	})

	if err := os.RemoveAll(filepath.Join(data, "notes")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a deleted folder leaves the index", func() bool {
		return !indexed(e, "notes/sourdough.md") && !indexed(e, "notes/tides.txt") && !indexed(e, "notes/glacier.md")
	})

	outside := t.TempDir()
	writeCorpus(t, outside, map[string]string{"moved/deep/owls.md": "Owls swallow their prey whole and cough up pellets of bone and fur."})
	if err := os.Rename(filepath.Join(outside, "moved"), filepath.Join(data, "moved")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a folder moved in is indexed", func() bool { return indexed(e, "moved/deep/owls.md") })

	// A new ignore rule removes the file at the next run; dropping it adds
	// the file back.
	writeCorpus(t, data, map[string]string{".gitignore": "kernel.txt\n"})
	eventually(t, "a newly ignored file leaves the index", func() bool { return !indexed(e, "kernel.txt") })
	if err := os.Remove(filepath.Join(data, ".gitignore")); err != nil {
		t.Fatal(err)
	}
	eventually(t, "a file no longer ignored comes back", func() bool { return indexed(e, "kernel.txt") })
	if st := e.IndexState(); st.Indexing && st.Activity != activityWatch {
		t.Errorf("state after updates: %+v", st)
	}
}

// bestHit is the best hit, or none.
func bestHit(t *testing.T, e *Engine, q string) Result {
	if res := search(t, e, q); len(res) > 0 {
		return res[0]
	}
	return Result{}
}
