package main

import (
	"encoding/json"
	"math"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/internal/pgtest"
)

const storeSecret = "Hunter2-pw"

// TestStoreFlagErrors: every command that opens an index takes --store
// and MICRO_RAG_STORE, refuses what it cannot open with a usage error that
// names the problem, and never prints the password.
func TestStoreFlagErrors(t *testing.T) {
	data := t.TempDir()
	commands := map[string][]string{
		"serve":   {"--data-folder", data, "--title", "t", "--inst", "i"},
		"search":  {"search", "--data-folder", data, "q"},
		"reindex": {"reindex", "--data-folder", data},
		"status":  {"status", "--data-folder", data},
		"list":    {"list", "--data-folder", data},
	}
	stores := []struct{ name, url, says string }{
		{"unknown scheme", "mysql://rag:" + storeSecret + "@db.example/docs", `scheme "mysql" is not known`},
		{"not a URL", "rag:" + storeSecret + "@db.example", "is not a URL"},
		{"password not encoded", "postgres://rag:a/" + storeSecret + "@db.example/docs", "must be percent-encoded"},
		{"bad port", "postgres://rag:" + storeSecret + "@db.example:54x2/docs", `invalid port ":54x2" after host`},
		{"bad schema", "postgres://rag:" + storeSecret + "@db.example/docs?schema=My-Docs", "not a schema name"},
	}
	if index.CheckBackend(mustStore(t, "postgres://x@y/z")) != nil {
		stores = append(stores, struct{ name, url, says string }{"postgres not built in",
			"postgresql://rag:" + storeSecret + "@db.example/docs", "postgres backend not built in"})
	}
	for cmdName, args := range commands {
		for _, st := range stores {
			t.Run(cmdName+"/"+st.name, func(t *testing.T) {
				for _, how := range []struct {
					env  []string
					args []string
					from string
				}{
					{nil, append(append([]string{}, args...), "--store", st.url), "--store: "},
					{[]string{index.EnvStore + "=" + st.url}, args, "$" + index.EnvStore + ": "},
				} {
					code, stdout, stderr := runBinaryEnv(t, how.env, how.args...)
					if code != 2 || !strings.Contains(stderr, how.from+"store") || !strings.Contains(stderr, st.says) {
						t.Errorf("%s: exit %d, stderr:\n%s\nwant exit 2 and %q after %q", how.from, code, stderr, st.says, how.from)
					}
					if strings.Contains(stdout+stderr, storeSecret) {
						t.Errorf("%s: the password is printed:\n%s%s", how.from, stdout, stderr)
					}
				}
			})
		}
	}
}

// TestStoreHelpHidesEnv: --help does not show MICRO_RAG_STORE's value as
// the default of --store.
func TestStoreHelpHidesEnv(t *testing.T) {
	env := []string{index.EnvStore + "=postgres://rag:" + storeSecret + "@db.example/docs"}
	for _, args := range [][]string{{"--help"}, {"search", "--help"}, {"status", "--help"}} {
		code, stdout, stderr := runBinaryEnv(t, env, args...)
		if code != 0 || !strings.Contains(stdout, "-store") || strings.Contains(stdout+stderr, storeSecret) {
			t.Errorf("%v: exit %d, --store listed %v, password shown %v", args, code,
				strings.Contains(stdout, "-store"), strings.Contains(stdout+stderr, storeSecret))
		}
	}
}

func mustStore(t *testing.T, s string) index.StoreURL {
	t.Helper()
	u, err := index.ParseStoreURL(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestStoreOnPostgres: the commands run on a real PostgreSQL server given
// by --store or MICRO_RAG_STORE: reindex, search, status and list see one
// index, status names the store without its password, and nothing printed
// (debug logs included) shows the password; a server that cannot be
// reached is an error that does not show it either.
func TestStoreOnPostgres(t *testing.T) {
	srv := pgtest.Shared(t)
	dsn := pgtest.Database(t)
	db := strings.TrimPrefix(mustURL(t, dsn).Path, "/")
	data := copySample(t)
	noSecret := func(step, out string) {
		t.Helper()
		if strings.Contains(out, srv.Password) {
			t.Errorf("%s prints the password:\n%s", step, out)
		}
	}
	code, stdout, stderr := runBinary(t, "reindex", "--data-folder", data, "--store", dsn, "--log-level", "debug")
	noSecret("reindex", stdout+stderr)
	if code != 0 || !strings.Contains(stdout, "files added:") {
		t.Fatalf("reindex: exit %d\n%s%s", code, stdout, stderr)
	}
	env := []string{index.EnvStore + "=" + dsn}
	code, stdout, stderr = runBinaryEnv(t, env, "search", "--data-folder", data, "--log-level", "debug", "how many weeks of paid parental leave do parents get")
	noSecret("search", stdout+stderr)
	if code != 0 || !strings.Contains(stdout, "employee-handbook-leave.docx") {
		t.Errorf("search: exit %d\n%s%s", code, stdout, stderr)
	}
	code, m, stderr := statusJSON(t, backend{dsn: dsn}, "--data-folder", data)
	noSecret("status", stderr+string(m["store"])+string(m["last_run_error"]))
	var store string
	json.Unmarshal(m["store"], &store)
	if code != 0 || string(m["integrity"]) != `"ok"` || string(m["files"]) == "0" ||
		!strings.HasPrefix(store, strings.Split(index.RedactURL(dsn), "?")[0]+"?") || !strings.Contains(store, "xxxxx") ||
		!strings.Contains(store, "schema="+index.Namespace(data)) {
		t.Errorf("status: exit %d, integrity %s, files %s, store %s\n%s", code, m["integrity"], m["files"], m["store"], stderr)
	}
	code, stdout, stderr = runBinaryEnv(t, env, "list", "--data-folder", data)
	noSecret("list", stdout+stderr)
	if code != 0 || !strings.Contains(stdout, "employee-handbook-leave.docx") {
		t.Errorf("list: exit %d\n%s%s", code, stdout, stderr)
	}
	// Nothing listens on port 1; the password is wrong too.
	dead := "postgres://postgres:" + storeSecret + "@127.0.0.1:1/" + db + "?sslmode=disable&connect_timeout=5"
	code, stdout, stderr = runBinary(t, "search", "--data-folder", data, "--store", dead, "--log-level", "debug", "leave")
	noSecret("search on an unreachable store", stdout+stderr)
	// The store's fault is not called the model's.
	if code != 2 || strings.Contains(stdout+stderr, storeSecret) || !strings.Contains(stderr, "127.0.0.1:1") ||
		strings.Contains(stderr, "loading the model") || !strings.Contains(stderr, "open index") {
		t.Errorf("search on an unreachable store: exit %d\n%s%s", code, stdout, stderr)
	}
}

func mustURL(t *testing.T, s string) *url.URL {
	t.Helper()
	u, err := url.Parse(s)
	if err != nil {
		t.Fatal(err)
	}
	return u
}

// TestCommandsAgreeAcrossBackends: reindex, search, status and list print
// the same JSON for one folder on either backend, but for what says where
// the index lives and when (index_folder, store, index_bytes, times), and
// search scores, which may differ in the last digits.
func TestCommandsAgreeAcrossBackends(t *testing.T) {
	data := copySample(t)
	commands := [][]string{{"reindex"}, {"search", "--top-k", "5", "--score-threshold", "0", sampleQueries[3].query}, {"status"}, {"list"}}
	where := map[string]bool{"index_folder": true, "store": true, "index_bytes": true, "last_reindex": true, "elapsed_ms": true, "waited_ms": true, "vector_index": true}
	outs := map[bool][]any{}
	eachBackend(t, func(t *testing.T, b backend) {
		idx := filepath.Join(t.TempDir(), "idx")
		for _, args := range commands {
			code, stdout, stderr := b.run(t, append(args, "--data-folder", data, "--index-folder", idx, "--json")...)
			var v any
			if err := json.Unmarshal([]byte(stdout), &v); code != 0 || err != nil {
				t.Fatalf("%s: exit %d, %v\n%s\n%s", args[0], code, err, stdout, stderr)
			}
			outs[b.postgres()] = append(outs[b.postgres()], normalize(v, where))
		}
	})
	if len(outs[false]) != len(commands) || len(outs[true]) != len(commands) {
		t.Fatal("a backend did not run every command")
	}
	for i, args := range commands {
		local, _ := json.MarshalIndent(outs[false][i], "", " ")
		pg, _ := json.MarshalIndent(outs[true][i], "", " ")
		if string(local) != string(pg) {
			t.Errorf("%s prints differently:\nlocal:\n%s\npostgres:\n%s", args[0], local, pg)
		}
	}
}

// normalize blanks the members named in where and rounds numbers to four
// decimals, recursively.
func normalize(v any, where map[string]bool) any {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if where[k] {
				v[k] = "(where)"
			} else {
				v[k] = normalize(x, where)
			}
		}
	case []any:
		for i, x := range v {
			v[i] = normalize(x, where)
		}
	case float64:
		return math.Round(v*1e4) / 1e4
	}
	return v
}

// TestUnreachableStoreOneLine: status and list with a database that
// cannot be reached exit 1 with the cause on one line (the driver's line
// per address tried, joined: a terminal showed them as \x0a\x09), the
// fix search gives, and no password.
func TestUnreachableStoreOneLine(t *testing.T) {
	data := copySample(t)
	for _, cmd := range []string{"status", "list"} {
		code, stdout, stderr := runBinary(t, cmd, "--data-folder", data, "--store", "postgres://reader:s3cret-pw@127.0.0.1:1/docs")
		if code != 1 || stdout != "" || strings.Contains(stderr, `\x0a`) || strings.Count(strings.TrimSpace(stderr), "\n") != 0 ||
			!strings.Contains(stderr, "connection refused") || !strings.Contains(stderr, "To fix: check that the database of --store") ||
			strings.Contains(stderr, "s3cret-pw") {
			t.Errorf("%s with the database unreachable: exit %d\nstdout %q\nstderr %q", cmd, code, stdout, stderr)
		}
	}
}
