package main

import (
	"encoding/json"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/gofrs/flock"
	"github.com/jackc/pgx/v5"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
)

// statusKeys are the members status --json always prints (docs/command-line.md).
var statusKeys = []string{"changed_on_disk", "chunks", "damage", "data_folder", "excludes", "exts", "failed", "files",
	"index_bytes", "index_folder", "integrity", "last_reindex", "last_run_error", "links_outside", "model", "reindexing", "skipped", "store", "tombstones", "truncated", "vector_index"}

// statusJSON runs status --json and returns its exit code and members.
func statusJSON(t *testing.T, b backend, args ...string) (int, map[string]json.RawMessage, string) {
	t.Helper()
	code, stdout, stderr := b.run(t, append([]string{"status", "--json"}, args...)...)
	var m map[string]json.RawMessage
	if err := json.Unmarshal([]byte(stdout), &m); err != nil {
		t.Fatalf("status --json: exit %d, not JSON (%v):\n%s\n%s", code, err, stdout, stderr)
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	if !slices.Equal(keys, statusKeys) {
		t.Errorf("status --json members %v, want %v", keys, statusKeys)
	}
	return code, m, stderr
}

// statusValue is the value of a line "name: value" of status's table.
func statusValue(table, name string) string {
	for _, line := range strings.Split(table, "\n") {
		if v, ok := strings.CutPrefix(line, name+":"); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

// TestStatusFindsDamagedIndex: status loads the index with the checks a
// search makes. On a sound index it says so, with every JSON member
// present; on one with a flipped byte it exits 1 naming the damage and the
// command that rebuilds it, search exits 2 instead of "no match", and that
// command makes both well again. Local backend only: it damages the index
// files (TestSearchExitCodes gives PostgreSQL another model's index).
func TestStatusFindsDamagedIndex(t *testing.T) {
	data := copySample(t)
	code, m, stderr := statusJSON(t, backend{}, "--data-folder", data) // never indexed
	if code != 0 || string(m["failed"]) != "[]" || string(m["integrity"]) != `"ok"` {
		t.Errorf("status --json before indexing: exit %d, failed %s, integrity %s\n%s", code, m["failed"], m["integrity"], stderr)
	}
	if code, _, stderr := runBinary(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	code, m, stderr = statusJSON(t, backend{}, "--data-folder", data)
	var changed map[string]json.RawMessage
	json.Unmarshal(m["changed_on_disk"], &changed)
	if code != 0 || string(m["failed"]) != "[]" || string(changed["examples"]) != "[]" ||
		string(m["integrity"]) != `"ok"` || string(m["damage"]) != `""` {
		t.Errorf("status --json on a clean index: exit %d, failed %s, examples %s, integrity %s, damage %s\n%s",
			code, m["failed"], changed["examples"], m["integrity"], m["damage"], stderr)
	}
	if code, stdout, stderr := runBinary(t, "status", "--data-folder", data); code != 0 || !strings.HasPrefix(statusValue(stdout, "integrity"), "ok (") {
		t.Errorf("status on a clean index: exit %d\n%s\n%s", code, stdout, stderr)
	}

	// Damage that keeps the file's size, as index/localstore/integrity_test.go does.
	damage(t, filepath.Join(data, "index", "faiss.index"), "", "AAAA")

	fix := "micro-rag-mcp reindex --force --data-folder " + data
	code, stdout, stderr := runBinary(t, "status", "--data-folder", data)
	if code != 1 || !strings.HasPrefix(statusValue(stdout, "integrity"), "DAMAGED: index files disagree: faiss.index has checksum") ||
		!strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, "faiss.index has checksum") || !strings.Contains(stderr, fix) {
		t.Errorf("status on a damaged index: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	code, m, stderr = statusJSON(t, backend{}, "--data-folder", data)
	if code != 1 || string(m["integrity"]) != `"damaged"` || !strings.Contains(string(m["damage"]), "faiss.index has checksum") {
		t.Errorf("status --json on a damaged index: exit %d, integrity %s, damage %s\n%s", code, m["integrity"], m["damage"], stderr)
	}
	code, stdout, stderr = runBinary(t, "search", "--data-folder", data, "parental leave")
	if code != 2 || stdout != "" || !strings.Contains(stderr, "is damaged") || !strings.Contains(stderr, fix) {
		t.Errorf("search on a damaged index: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}

	if code, _, stderr := runBinary(t, "reindex", "--force", "--data-folder", data); code != 0 {
		t.Fatalf("the fix status named: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := runBinary(t, "status", "--data-folder", data); code != 0 || !strings.HasPrefix(statusValue(stdout, "integrity"), "ok (") {
		t.Errorf("status after the fix: exit %d\n%s\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runBinary(t, "search", "--data-folder", data, "parental leave"); code != 0 {
		t.Errorf("search after the fix: exit %d\n%s", code, stderr)
	}

	// A file list that no longer matches its checksum: status cannot even
	// count the files, and says why.
	damage(t, filepath.Join(data, "index", "files.json"), `"onboarding-guide.md"`, `"O`)
	code, stdout, stderr = runBinary(t, "status", "--data-folder", data)
	if code != 1 || !strings.HasPrefix(statusValue(stdout, "integrity"), "DAMAGED: ") || !strings.Contains(stderr, "files.json has checksum") {
		t.Errorf("status on a damaged file list: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
	}
	if code, _, stderr := runBinary(t, "search", "--data-folder", data, "parental leave"); code != 2 || !strings.Contains(stderr, "is damaged") {
		t.Errorf("search on a damaged file list: exit %d\n%s", code, stderr)
	}
}

// TestStatusSaysReindexRunning: while another process holds the index's
// lock (a reindex in another terminal, a server's initial indexing),
// status says a reindex runs, so "last reindex: never" and "N new" are not
// read as the index being abandoned, and search notes that its results may
// be incomplete. The lock is index.lock, or on PostgreSQL the writer's
// advisory lock.
func TestStatusSaysReindexRunning(t *testing.T) { eachBackend(t, testStatusSaysReindexRunning) }

func testStatusSaysReindexRunning(t *testing.T, b backend) {
	data := copySample(t)
	d := []string{"--data-folder", data}
	if code, _, stderr := b.run(t, append([]string{"reindex"}, d...)...); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	if _, m, _ := statusJSON(t, b, d...); string(m["reindexing"]) != "false" {
		t.Errorf("status --json with no reindex running: reindexing %s", m["reindexing"])
	}
	// Another holder of the lock, as a reindex in another process is.
	unlock := holdWriterLock(t, b, data)
	if _, m, _ := statusJSON(t, b, d...); string(m["reindexing"]) != "true" {
		t.Errorf("status --json while a reindex holds the lock: reindexing %s", m["reindexing"])
	}
	if code, stdout, stderr := b.run(t, append([]string{"status"}, d...)...); code != 0 ||
		!strings.HasPrefix(statusValue(stdout, "reindex running"), "yes, in another process") {
		t.Errorf("status while a reindex holds the lock: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// search answers from the last commit, and says it may be incomplete.
	if code, stdout, stderr := b.run(t, append([]string{"search"}, append(d, "parental leave")...)...); code != 0 ||
		!strings.Contains(stderr, "a reindex is running in another process") {
		t.Errorf("search while a reindex holds the lock: exit %d\n%s\n%s", code, stdout, stderr)
	}
	unlock()
	if _, _, stderr := b.run(t, append([]string{"search"}, append(d, "parental leave")...)...); strings.Contains(stderr, "reindex is running") {
		t.Errorf("search with no reindex running says one runs:\n%s", stderr)
	}
}

// TestSearchDuringFirstReindexElsewhere: while a reindex in another
// process builds the index and has committed nothing yet, search finding
// nothing says the index is being built, not that the folder probably
// does not answer the query.
func TestSearchDuringFirstReindexElsewhere(t *testing.T) {
	data := copySample(t)
	if err := os.Mkdir(filepath.Join(data, "index"), 0o755); err != nil {
		t.Fatal(err)
	}
	holdWriterLock(t, backend{}, data)
	code, _, stderr := runBinary(t, "search", "--data-folder", data, "parental leave")
	if code != 1 || strings.Contains(stderr, "does not answer") ||
		!strings.Contains(stderr, "no passages matched: the index holds no files yet; a reindex in another process is building it") {
		t.Errorf("search while the first reindex runs elsewhere: exit %d\n%s", code, stderr)
	}
}

// holdWriterLock takes the lock a reindex of data holds, as another
// process would: index.lock, or the schema's advisory lock on a session of
// its own. unlock gives it back.
func holdWriterLock(t *testing.T, b backend, data string) (unlock func()) {
	t.Helper()
	if !b.postgres() {
		lock := flock.New(filepath.Join(data, "index", "index.lock"))
		if ok, err := lock.TryLock(); !ok || err != nil {
			t.Fatalf("taking index.lock: %v %v", ok, err)
		}
		t.Cleanup(func() { lock.Unlock() })
		return func() { lock.Unlock() }
	}
	ctx, conn := b.connect(t)
	// The key pgstore's writer takes (pgstore.lockName).
	name := "micro-rag-mcp index " + index.Namespace(data)
	var ok bool
	if err := conn.QueryRow(ctx, "SELECT pg_try_advisory_lock(hashtextextended($1, 0))", name).Scan(&ok); !ok || err != nil {
		t.Fatalf("taking the advisory lock: %v %v", ok, err)
	}
	return func() {
		if _, err := conn.Exec(ctx, "SELECT pg_advisory_unlock(hashtextextended($1, 0))", name); err != nil {
			t.Fatal(err)
		}
	}
}

// TestSearchExitCodes: 0 when passages were found, 1 when none matched
// (and only then), 2 for every error; --help says so.
func TestSearchExitCodes(t *testing.T) { eachBackend(t, testSearchExitCodes) }

func testSearchExitCodes(t *testing.T, b backend) {
	data := copySample(t)
	// Never indexed: nothing matched, and the fix is named, not "the folder
	// probably does not answer this".
	if code, _, stderr := b.run(t, "search", "--data-folder", data, "parental leave"); code != 1 ||
		!strings.Contains(stderr, "the index holds no files yet; to build it, run: micro-rag-mcp reindex --data-folder "+data) {
		t.Errorf("search before any reindex: exit %d\n%s", code, stderr)
	}
	if code, stdout, stderr := b.run(t, "list", "--data-folder", data); code != 0 || !strings.Contains(stdout, "0 documents") ||
		!strings.Contains(stderr, "the index holds no files yet; to build it, run: micro-rag-mcp reindex --data-folder "+data) {
		t.Errorf("list before any reindex: exit %d\n%s\n%s", code, stdout, stderr)
	}
	// Indexed, holding no text (only code, not enabled): the note names the
	// flag; no call to build what is built.
	code := t.TempDir()
	os.WriteFile(filepath.Join(code, "retry.go"), []byte("// retry with exponential backoff\nfunc retry() {}\n"), 0o644)
	if c, _, stderr := b.run(t, "reindex", "--data-folder", code); c != 0 {
		t.Fatalf("reindex of code: exit %d\n%s", c, stderr)
	}
	if c, stdout, stderr := b.run(t, "search", "--data-folder", code, "exponential backoff"); c != 1 ||
		!strings.Contains(stdout, "--add-exts .go") || strings.Contains(stderr, "no files yet") {
		t.Errorf("search of a folder indexed without text: exit %d\n%s\n%s", c, stdout, stderr)
	}
	if code, _, stderr := b.run(t, "reindex", "--data-folder", data); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	cases := []struct {
		name string
		args []string
		code int
		says string
	}{
		{"found", []string{"parental leave"}, 0, ""},
		{"no match", []string{"--score-threshold", "1", "parental leave"}, 1, "no passages matched"},
		{"filtered out", []string{"--ext", "xyz", "parental leave"}, 1, "no indexed file passes the filters"},
		{"bad flag", []string{"--top-k", "many", "parental leave"}, 2, "invalid value"},
		{"bad top-k", []string{"--top-k", "99", "parental leave"}, 2, "top_k"},
		{"no query", nil, 2, "search needs a query"},
		{"missing model", []string{"--model-dir", filepath.Join(t.TempDir(), "none"), "parental leave"}, 2, "To fix"},
		{"missing data folder", []string{"--data-folder", filepath.Join(data, "gone"), "parental leave"}, 2, "does not exist"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			code, _, stderr := b.run(t, append([]string{"search", "--data-folder", data}, tc.args...)...)
			if code != tc.code || !strings.Contains(stderr, tc.says) {
				t.Errorf("exit %d, want %d with %q; stderr:\n%s", code, tc.code, tc.says, stderr)
			}
		})
	}
	// A file added since the reindex: a miss names it and the reindex to
	// run, not "the folder probably does not answer this".
	os.WriteFile(filepath.Join(data, "zebra.md"), []byte("Zebras migrate across the Serengeti."), 0o644)
	if code, _, stderr := b.run(t, "search", "--data-folder", data, "--score-threshold", "1", "parental leave"); code != 1 ||
		!strings.Contains(stderr, "1 file is new or changed since the last reindex, not searched yet (zebra.md); to index them, run: micro-rag-mcp reindex") {
		t.Errorf("search with a new file on disk: exit %d\n%s", code, stderr)
	}
	os.Remove(filepath.Join(data, "zebra.md"))
	// An index of another model is not "no match" either.
	recordModel := func(other string) {
		t.Helper()
		if b.postgres() {
			b.exec(t, `UPDATE `+pgx.Identifier{index.Namespace(data), "meta"}.Sanitize()+
				` SET version = jsonb_set(version::jsonb, '{model}', to_jsonb($1::text))::text`, other)
		} else {
			version := filepath.Join(data, "index", "version")
			raw, err := os.ReadFile(version)
			if err != nil {
				t.Fatal(err)
			}
			var v map[string]any
			if err := json.Unmarshal(raw, &v); err != nil {
				t.Fatal(err)
			}
			v["model"] = other
			raw, _ = json.Marshal(v)
			if err := os.WriteFile(version, raw, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	recordModel("some-other-model sha256:0000000000000000")
	if code, _, stderr := b.run(t, "search", "--data-folder", data, "parental leave"); code != 2 ||
		!strings.Contains(stderr, "was built by another model") || !strings.Contains(stderr, "reindex --force") {
		t.Errorf("search on another model's index: exit %d\n%s", code, stderr)
	}
	// A model the flags can name: the fix is the flag, not a rebuild.
	recordModel("all-MiniLM-L6-v2-int8 sha256:0000000000000000")
	if code, _, stderr := b.run(t, "search", "--data-folder", data, "parental leave"); code != 2 ||
		!strings.Contains(stderr, "built by the model all-MiniLM-L6-v2-int8") || !strings.Contains(stderr, "add --model all-MiniLM-L6-v2-int8") {
		t.Errorf("search on the int8 model's index: exit %d\n%s", code, stderr)
	}
	for _, cmd := range []string{"search", "status"} {
		if code, stdout, _ := b.run(t, cmd, "--help"); code != 0 || !strings.Contains(stdout, "Exit status: 0 when") {
			t.Errorf("%s --help does not give the exit statuses: exit %d\n%s", cmd, code, stdout)
		}
	}
}

// damage overwrites the start of the first occurrence of old in a file
// with bad, or its middle when old is "", keeping the file's size.
func damage(t *testing.T, path, old, bad string) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	at := len(raw) / 2
	if old != "" {
		if at = strings.Index(string(raw), old); at < 0 {
			t.Fatalf("%q not in %s", old, path)
		}
	}
	copy(raw[at:], bad)
	if err := os.WriteFile(path, raw, 0o644); err != nil {
		t.Fatal(err)
	}
}

// TestStatusShowsTruncated: a file over --max-file-chunks is indexed up to
// the cap, and status names it with the part that is searchable.
func TestStatusShowsTruncated(t *testing.T) { eachBackend(t, testStatusShowsTruncated) }

func testStatusShowsTruncated(t *testing.T, b backend) {
	data, idx := largeFolder(t, 8000)
	if code, _, errOut := b.run(t, "reindex", "--data-folder", data, "--index-folder", idx, "--max-file-chunks", "4"); code != 0 {
		t.Fatalf("reindex exit %d:\n%s", code, errOut)
	}
	code, out, errOut := b.run(t, "status", "--data-folder", data, "--index-folder", idx)
	if code != 0 || statusValue(out, "truncated files") != "1" ||
		!strings.Contains(out, "large.txt: only the first 4 chunks are indexed (characters 1-") {
		t.Errorf("status exit %d:\n%s%s", code, out, errOut)
	}
	_, m, _ := statusJSON(t, b, "--data-folder", data, "--index-folder", idx)
	if !strings.Contains(string(m["truncated"]), `"path": "large.txt"`) {
		t.Errorf("status --json truncated: %s", m["truncated"])
	}
}

// TestPrivateIndex: under umask 022 the index folder is made 0700 and every
// file in it 0600, since they hold the documents' text; an index made with
// wider modes is tightened by the next run. Local backend only: file modes.
func TestPrivateIndex(t *testing.T) {
	data := copySample(t)
	idx := filepath.Join(t.TempDir(), "idx")
	reindex := func() {
		t.Helper()
		cmd := exec.Command("sh", "-c", `umask 022 && exec "$0" "$@"`, binary, "reindex", "--data-folder", data, "--index-folder", idx)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("reindex: %v\n%s", err, out)
		}
	}
	check := func(when string) {
		t.Helper()
		entries, err := os.ReadDir(idx)
		if err != nil {
			t.Fatal(err)
		}
		fi, _ := os.Stat(idx)
		if perm := fi.Mode().Perm(); perm != 0o700 {
			t.Errorf("%s: index folder %v, want 0700", when, perm)
		}
		files := 0
		for _, e := range entries {
			fi, _ := e.Info()
			files++
			if perm := fi.Mode().Perm(); perm != 0o600 {
				t.Errorf("%s: %s is %v, want 0600", when, e.Name(), perm)
			}
		}
		if files < 6 { // faiss or vector segment, manifest, files, commit, version, lock, lexical, last-run
			t.Errorf("%s: only %d files in the index", when, files)
		}
	}
	reindex()
	check("new index")
	// As an older version left it.
	filepath.WalkDir(idx, func(p string, d fs.DirEntry, err error) error {
		if d.IsDir() {
			return os.Chmod(p, 0o755)
		}
		return os.Chmod(p, 0o644)
	})
	reindex() // nothing changed
	check("older index after a reindex")
}

// TestStatusCountsOutsideLinks: links that lead outside the data folder
// are never followed, and status counts them.
func TestStatusCountsOutsideLinks(t *testing.T) { eachBackend(t, testStatusCountsOutsideLinks) }

func testStatusCountsOutsideLinks(t *testing.T, b backend) {
	data := copySample(t)
	outside := filepath.Join(t.TempDir(), "secret.md")
	os.WriteFile(outside, []byte("private"), 0o644)
	os.Symlink(outside, filepath.Join(data, "escape.md"))
	idx := filepath.Join(t.TempDir(), "idx")
	code, out, errOut := b.run(t, "status", "--data-folder", data, "--index-folder", idx)
	if code != 0 || statusValue(out, "links leading outside") != "1 (not followed)" {
		t.Errorf("status exit %d:\n%s%s", code, out, errOut)
	}
	if _, m, _ := statusJSON(t, b, "--data-folder", data, "--index-folder", idx); string(m["links_outside"]) != "1" {
		t.Errorf("links_outside %s", m["links_outside"])
	}
}

// TestSmallIndexFileDamage: each small file of a local index truncated,
// emptied or holding null, [], {} or garbage. status and list name the
// file and print the command that mends it in full (list printed only the
// damage; a damaged version file made every command call the index
// someone else's folder), and nothing is removed from the index: a
// damaged run record is reported and rewritten by the next run; a damaged
// data folder record, which refuses a reindex, is shown by status too.
func TestSmallIndexFileDamage(t *testing.T) {
	data := copySample(t)
	built := filepath.Join(t.TempDir(), "built")
	if code, _, stderr := runBinary(t, "reindex", "--data-folder", data, "--index-folder", built); code != 0 {
		t.Fatalf("reindex: exit %d\n%s", code, stderr)
	}
	kinds := map[string]string{"empty": "", "null": "null", "[]": "[]", "{}": "{}", "garbage": "\x00\xffnot json{", "truncated": ""}
	for _, file := range []string{"version", "commit.json", "files.json", "last-run.json", "data-folder.json"} {
		for kind, content := range kinds {
			t.Run(file+"/"+kind, func(t *testing.T) {
				idx := filepath.Join(t.TempDir(), "idx")
				copyFlat(t, built, idx)
				path := filepath.Join(idx, file)
				if kind == "truncated" {
					b, err := os.ReadFile(path)
					if err != nil {
						t.Fatal(err)
					}
					content = string(b[:len(b)/2])
				}
				if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
					t.Fatal(err)
				}
				dirs := []string{"--data-folder", data, "--index-folder", idx}
				fix := "micro-rag-mcp reindex --force --data-folder " + engine.ShellQuote(data) + " --index-folder " + engine.ShellQuote(idx)
				code, stdout, stderr := runBinary(t, append([]string{"status"}, dirs...)...)
				switch {
				case file == "last-run.json":
					if code != 0 || !strings.Contains(statusValue(stdout, "last run record"), "DAMAGED: "+path) {
						t.Errorf("status: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
				case file == "data-folder.json":
					if code != 1 || !strings.HasPrefix(statusValue(stdout, "data folder record"), "REINDEX REFUSED: "+path+" is damaged") ||
						!strings.Contains(stderr, "rm "+engine.ShellQuote(path)) {
						t.Errorf("status: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
				case code != 1 || !strings.Contains(stderr, file) || !strings.Contains(stderr, fix):
					t.Errorf("status: exit %d, want 1 naming %s and %q\nstdout:\n%s\nstderr:\n%s", code, file, fix, stdout, stderr)
				}
				code, stdout, stderr = runBinary(t, append([]string{"list"}, dirs...)...)
				switch file {
				case "commit.json", "files.json":
					if code != 1 || !strings.Contains(stderr, file) || !strings.Contains(stderr, fix) {
						t.Errorf("list: exit %d, want 1 naming %s and %q\nstderr:\n%s", code, file, fix, stderr)
					}
				default: // the file list is sound: list shows it
					if code != 0 || !strings.Contains(stdout, "6 documents") {
						t.Errorf("list: exit %d\nstdout:\n%s\nstderr:\n%s", code, stdout, stderr)
					}
				}
			})
		}
	}
}

// copyFlat copies the files of the folder src into a new private folder dst.
func copyFlat(t *testing.T, src, dst string) {
	t.Helper()
	entries, err := os.ReadDir(src)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(dst, 0o700); err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		b, err := os.ReadFile(filepath.Join(src, e.Name()))
		if err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dst, e.Name()), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
}
