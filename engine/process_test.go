package engine

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/localstore"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

// Tests here run a second engine in a child process: the test binary
// re-executed with MICRO_RAG_TEST_CHILD set.
const childEnv = "MICRO_RAG_TEST_CHILD"

// childStoreEnv holds the child's store URL ("" for the index folder).
const childStoreEnv = "CHILD_STORE"

func TestMain(m *testing.M) {
	if mode := os.Getenv(childEnv); mode != "" {
		os.Exit(runChild(mode, os.Getenv("CHILD_DATA"), os.Getenv("CHILD_INDEX")))
	}
	// One PostgreSQL server for the tests that run on every backend.
	pgtest.Main(m)
}

func runChild(mode, data, indexDir string) int {
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	cfg := Config{DataFolder: data, IndexFolder: indexDir, NoInitialReindex: true, Logger: logger,
		Checkpoint: 15 * time.Millisecond, Index: index.Options{Compaction: index.Compaction{Min: 8, Ratio: 0.3}}}
	store, err := index.ParseStoreURL(os.Getenv(childStoreEnv))
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	cfg.Store = store
	// The crash test's loop also runs with every commit a merge (kills land
	// while faiss.index is rewritten), with merges only every 64 segments
	// (kills land amid segment writes), and with a background merge
	// started by every commit (kills land while a merge is written or
	// installed).
	background := mode == "reindex-loop-background"
	switch mode {
	case "reindex-loop-merging":
		mode, cfg.Index.MergeRatio = "reindex-loop", -1
	case "reindex-loop-segments":
		mode, cfg.Index.MergeRatio = "reindex-loop", 1e9
	case "reindex-loop-background":
		mode, cfg.Index.MergeRatio = "reindex-loop", 1e-9
	}
	e, err := New(cfg)
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	e.Start(context.Background())
	if err := e.WaitModel(context.Background()); err != nil {
		fmt.Fprintln(os.Stderr, err)
		return 1
	}
	switch mode {
	case "reindex-loop": // reindex with force until killed
		fmt.Println("looping")
		if background {
			go announceMerges(indexDir)
		}
		for {
			if _, err := e.Reindex(context.Background(), ReindexRequest{Force: true}, nil); err != nil {
				fmt.Fprintln(os.Stderr, err)
				return 1
			}
		}
	case "hold-lock": // hold index.lock until stdin closes
		w, err := e.store.Begin()
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Println("locked")
		bufio.NewReader(os.Stdin).ReadString('\n')
		w.Close()
		return 0
	case "reindex-once":
		res, err := e.Reindex(context.Background(), ReindexRequest{}, nil)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			return 1
		}
		fmt.Printf("added=%d\n", res.FilesAdded)
		return 0
	}
	return 2
}

// announceMerges prints "merging" whenever a new background merge's file
// appears in the index folder, so the crash test can kill during merges.
func announceMerges(indexDir string) {
	seen := ""
	for {
		if m, _ := filepath.Glob(filepath.Join(indexDir, localstore.FaissFile+".merge-*")); len(m) > 0 && m[0] != seen {
			seen = m[0]
			fmt.Println("merging")
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// startChild runs the test binary in mode and waits for its first stdout
// line; out reads the rest.
func startChild(t *testing.T, mode, data, indexDir string) (cmd *exec.Cmd, done func(), out *bufio.Reader) {
	t.Helper()
	return startChildOn(t, "", mode, data, indexDir)
}

// startChildOn is startChild with the child's index in store (a
// connection string; "" for indexDir).
func startChildOn(t *testing.T, store, mode, data, indexDir string) (cmd *exec.Cmd, done func(), out *bufio.Reader) {
	t.Helper()
	cmd = exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), childEnv+"="+mode, "CHILD_DATA="+data, "CHILD_INDEX="+indexDir, childStoreEnv+"="+store)
	cmd.Stderr = os.Stderr
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	out = bufio.NewReader(stdout)
	line, err := out.ReadString('\n')
	if err != nil {
		cmd.Process.Kill()
		cmd.Wait()
		t.Fatalf("child %s: %v", mode, err)
	}
	t.Logf("child %s: %s", mode, strings.TrimSpace(line))
	return cmd, func() { stdin.Close(); cmd.Wait() }, out
}

// topics gives each crash-test file a sentence no other file shares.
var topics = []string{
	"Honeybees communicate the direction of flowers with a waggle dance.",
	"A suspension bridge hangs its deck from cables draped over tall towers.",
	"Espresso is brewed by forcing hot water through finely ground coffee.",
	"Glaciers carve U-shaped valleys as they slowly grind downhill.",
	"The violin's sound comes from a bow drawn across four strings.",
	"Photosynthesis turns sunlight, water and carbon dioxide into sugar.",
	"A lighthouse keeper once trimmed the lamp's wick every night.",
	"Chess openings such as the Sicilian Defence fight for the centre.",
	"Volcanic ash can ground airplanes because it melts inside jet engines.",
	"Penguins huddle together to survive the Antarctic winter.",
	"Sourdough bread rises thanks to wild yeast in the starter.",
	"The Roman aqueducts carried water to cities over stone arches.",
	"Solar panels convert light into electricity with silicon cells.",
	"A marathon is exactly forty-two kilometres and a bit long.",
	"Origami folds a single square of paper into cranes and boats.",
	"Submarines dive by flooding ballast tanks with seawater.",
	"Tea leaves are withered, rolled and oxidised before drying.",
	"Hedgehogs roll into a spiny ball when they feel threatened.",
	"The printing press made books cheap enough for ordinary people.",
	"Wind turbines turn a generator through a gearbox in the nacelle.",
}

func crashCorpus(t *testing.T, dir string) {
	filler := strings.Repeat("This paragraph is filler text about nothing in particular, written so the file spans several chunks. ", 12)
	files := map[string]string{}
	for i, s := range topics {
		files[fmt.Sprintf("topic%02d.md", i)] = s + " " + crashKeyword(i) + "\n\n" + filler + "\n\n" + filler
	}
	writeCorpus(t, dir, files)
}

// crashKeyword is a word only topic i's first chunk holds.
func crashKeyword(i int) string { return fmt.Sprintf("zq%ckeyword", 'a'+i) }

// checkLexicalAgrees: the keyword index holds exactly the files the vectors
// hold. A file in the snapshot has all its vectors and its keyword found
// once, in it; a file not in the snapshot is found by neither.
func checkLexicalAgrees(t *testing.T, e *Engine, trial int) {
	t.Helper()
	snap := e.store.Acquire()
	defer snap.Release()
	for i := range topics {
		path := fmt.Sprintf("topic%02d.md", i)
		found, _ := snap.LexicalQuery(crashKeyword(i)).Search(5, nil)
		hits := make([]index.Hit, len(found))
		for j, f := range found {
			rec, err := snap.Record(f.ID)
			if err != nil {
				t.Fatalf("trial %d: keyword hit %d: %v", trial, f.ID, err)
			}
			hits[j].Record = rec
		}
		entry, indexed := snap.File(path)
		if !indexed {
			if len(hits) != 0 {
				t.Fatalf("trial %d: %s is not indexed, but its keyword is found in %+v", trial, path, hits[0].Record)
			}
			continue
		}
		if n := len(snap.ChunkVectors(path)); n != len(entry.ChunkIDs) {
			t.Fatalf("trial %d: %s has %d chunks but %d vectors", trial, path, len(entry.ChunkIDs), n)
		}
		if len(hits) != 1 || hits[0].Record.Path != path || hits[0].Record.ChunkIndex != 0 {
			t.Fatalf("trial %d: keyword of %s found %d times: %+v", trial, path, len(hits), hits)
		}
	}
}

// TestSIGKILLDuringReindex kills a real reindex at random moments (commits
// every 15 ms, compaction often) and checks after each kill that the index
// opens, reindexes, and finds every file's sentence in that file, with
// nothing lost and nothing duplicated; and that before and after the
// reindex the keyword index holds exactly the files the vectors hold.
func TestSIGKILLDuringReindex(t *testing.T) { eachBackendDSN(t, testSIGKILLDuringReindex) }

func testSIGKILLDuringReindex(t *testing.T, dsn string) {
	trials := 50
	if testing.Short() {
		trials = 5
	}
	store := storeURL(t, dsn)
	modes := []string{"reindex-loop", "reindex-loop-merging", "reindex-loop-segments", "reindex-loop-background"}
	if !store.Local() {
		modes = modes[:1] // the others vary the folder's merges
	}
	data, indexDir := t.TempDir(), t.TempDir()
	crashCorpus(t, data)
	ref := newEngine(t, Config{DataFolder: data, IndexFolder: t.TempDir()})
	want := reindex(t, ref, ReindexRequest{})
	ref.Close()
	rng := rand.New(rand.NewPCG(42, 7))
	for trial := range trials {
		mode := modes[trial%len(modes)]
		cmd, _, out := startChildOn(t, dsn, mode, data, indexDir)
		if mode == "reindex-loop-background" {
			// Kill within 5 ms of a merge file appearing: while the merge
			// writes it, waits, or is installed.
			if line, err := out.ReadString('\n'); err != nil || line != "merging\n" {
				t.Fatalf("trial %d: child said %q, %v", trial, line, err)
			}
			time.Sleep(time.Duration(rng.IntN(5000)) * time.Microsecond)
		} else {
			time.Sleep(time.Duration(rng.IntN(1500)) * time.Millisecond)
		}
		cmd.Process.Signal(syscall.SIGKILL)
		cmd.Wait()
		if ws, ok := cmd.ProcessState.Sys().(syscall.WaitStatus); !ok || !ws.Signaled() {
			t.Fatalf("trial %d: child %s ended before the kill: %v", trial, mode, cmd.ProcessState)
		}

		e := newEngine(t, Config{DataFolder: data, IndexFolder: indexDir, Store: store})
		// What a fresh process serves straight after the crash must be a
		// consistent committed state: every listed file fully present.
		if st := e.Status(); st.Files > len(topics) || st.Chunks > want.ChunksTotal {
			t.Fatalf("trial %d: after kill, snapshot holds %d files / %d chunks, more than exist", trial, st.Files, st.Chunks)
		}
		checkLexicalAgrees(t, e, trial)
		res := reindex(t, e, ReindexRequest{})
		if res.ChunksTotal != want.ChunksTotal || res.FilesFailed != 0 {
			t.Fatalf("trial %d: after kill and reindex: %+v, want %d chunks", trial, res, want.ChunksTotal)
		}
		st := e.Status()
		if st.Files != len(topics) || st.Chunks != want.ChunksTotal {
			t.Fatalf("trial %d: status %+v", trial, st)
		}
		for i, s := range topics {
			if r := top(t, e, s); r.Path != fmt.Sprintf("topic%02d.md", i) {
				t.Fatalf("trial %d: %q found %+v", trial, s, r)
			}
		}
		checkLexicalAgrees(t, e, trial)
		e.Close()
		// A merge the kill interrupted was deleted by the reindex's
		// recovery; one this engine ran was installed or removed at Close.
		if left, _ := filepath.Glob(filepath.Join(indexDir, localstore.FaissFile+".merge-*")); len(left) > 0 {
			t.Fatalf("trial %d: merge files left: %v", trial, left)
		}
	}
}

// TestTwoProcessesOneIndex: a child process holds the lock, so this
// process's reindex is busy; then a child commits, and this process's
// snapshot picks the new index up by itself.
func TestTwoProcessesOneIndex(t *testing.T) { eachBackendDSN(t, testTwoProcessesOneIndex) }

func testTwoProcessesOneIndex(t *testing.T, dsn string) {
	data, indexDir := t.TempDir(), t.TempDir()
	writeCorpus(t, data, corpus)
	store := storeURL(t, dsn)
	e := newEngine(t, Config{DataFolder: data, IndexFolder: indexDir, Store: store, RefreshEvery: 50 * time.Millisecond})

	_, release, _ := startChildOn(t, dsn, "hold-lock", data, indexDir)
	if _, err := e.Reindex(context.Background(), ReindexRequest{}, nil); !errors.Is(err, ErrBusy) {
		t.Fatalf("reindex while another process holds the lock: %v", err)
	}
	release()
	if _, err := os.Stat(filepath.Join(indexDir, localstore.LockFile)); store.Local() && err != nil {
		t.Fatalf("lock file: %v", err)
	}

	_, wait, _ := startChildOn(t, dsn, "reindex-once", data, indexDir)
	wait()
	deadline := time.Now().Add(30 * time.Second)
	for {
		res := search(t, e, "wild yeast culture")
		if len(res) > 0 && res[0].Path == "notes/sourdough.md" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("commit of the other process never became searchable here")
		}
		time.Sleep(50 * time.Millisecond)
	}
}
