package main

import (
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index"
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
