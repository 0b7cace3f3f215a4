package index

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

const secret = "s3cr3t-Pw"

func TestParseStoreURL(t *testing.T) {
	for _, tc := range []struct {
		in, want, ns string
	}{
		{"postgres://rag:" + secret + "@db.example:5432/docs?sslmode=verify-full", "postgres://rag:xxxxx@db.example:5432/docs?sslmode=verify-full", ""},
		{"postgresql://rag:" + secret + "@localhost/docs", "postgresql://rag:xxxxx@localhost/docs", ""},
		{"POSTGRES://rag@localhost/docs?password=" + secret, "postgres://rag@localhost/docs?password=xxxxx", ""},
		{"postgres://rag@localhost/docs?sslpassword=" + secret + "&sslmode=require", "postgres://rag@localhost/docs?sslpassword=xxxxx&sslmode=require", ""},
		// A password with characters a URL reserves, percent-encoded.
		{"postgres://rag:" + "a%2Fb%40c" + secret + "@localhost/docs", "postgres://rag:xxxxx@localhost/docs", ""},
		// The schema parameter is the seam's: taken out of the URL.
		{"postgres://rag:" + secret + "@localhost/docs?schema=team_docs&sslmode=disable", "postgres://rag:xxxxx@localhost/docs?sslmode=disable&schema=team_docs", "team_docs"},
	} {
		u, err := ParseStoreURL(tc.in)
		if err != nil {
			t.Fatalf("%s: %v", tc.in, err)
		}
		if u.Local() || u.Backend() != "postgres" {
			t.Errorf("%s: local %v, backend %q", tc.in, u.Local(), u.Backend())
		}
		if got := u.String(); got != tc.want {
			t.Errorf("%s: String %q, want %q", tc.in, got, tc.want)
		}
		if got := fmt.Sprintf("%v %s %+v", u, u, u); strings.Contains(got, secret) {
			t.Errorf("%s: formatting the URL shows the password: %s", tc.in, got)
		}
		if u.Namespace() != tc.ns {
			t.Errorf("%s: namespace %q, want %q", tc.in, u.Namespace(), tc.ns)
		}
		if strings.Contains(u.raw, SchemaParam+"=") {
			t.Errorf("%s: the backend would get the schema parameter: %s", tc.in, u.String())
		}
	}
	if u, err := ParseStoreURL("  "); err != nil || !u.Local() || u.String() != "" {
		t.Errorf("empty store: %+v, %v; want the local folder", u, err)
	}
}

func TestParseStoreURLErrors(t *testing.T) {
	for _, tc := range []struct{ in, says string }{
		{"mysql://rag:" + secret + "@localhost/docs", `scheme "mysql" is not known`},
		{"sqlite://" + secret, `scheme "sqlite" is not known`},
		{"/var/lib/rag", "not a URL"},
		{"rag:" + secret + "@localhost", "not a URL"},
		// A / in the password, not encoded: url.Parse's own message would
		// quote part of it.
		{"postgres://rag:ab/" + secret + "@localhost/docs", "must be percent-encoded"},
		// A space in the password: the message must not show it either.
		{"postgres://rag:ab " + secret + "@localhost/docs", "must be percent-encoded"},
		// An @ before the /: url.Parse takes what precedes the / for the
		// host (which would be looked up in DNS) and the rest of the
		// password for the database name.
		{"postgres://rag:" + secret + "@t/x@localhost:5432/docs", "must be percent-encoded"},
		// A bad port or host is named as such, not as a password fault.
		{"postgres://rag:" + secret + "@localhost:54x2/docs", `invalid port ":54x2" after host`},
		{"postgres://rag:" + secret + "@local host:5432/docs", `invalid character " " in host name`},
		{"postgres://localhost:99999999999x/docs", `invalid port`},
		{"postgres://rag:ab " + secret + "@local host:5432/docs", `invalid character " " in host name`},
		{"postgres://rag:" + secret + "@localhost/docs?schema=Team-Docs", "not a schema name"},
		{"postgres://rag:" + secret + "@localhost/docs?schema=1x", "not a schema name"},
	} {
		_, err := ParseStoreURL(tc.in)
		if err == nil {
			t.Errorf("%s: no error", tc.in)
			continue
		}
		if !strings.Contains(err.Error(), tc.says) {
			t.Errorf("%s: error %q does not say %q", tc.in, err, tc.says)
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%s: error shows the password: %v", tc.in, err)
		}
	}
}

func TestRedactURL(t *testing.T) {
	for in, want := range map[string]string{
		"connect postgres://u:" + secret + "@h/db: refused":    "connect postgres://u:xxxxx@h/db: refused",
		"postgres://u:" + secret + "@h/db and mysql://v:w@x/y": "postgres://u:xxxxx@h/db and mysql://v:xxxxx@x/y",
		"host=h user=u password=" + secret + " dbname=d":       "host=h user=u password=xxxxx dbname=d",
		`host=h password='it\'s ` + secret + `' dbname=d`:      "host=h password=xxxxx dbname=d",
		"postgres://u@h:5432/db?sslmode=require":               "postgres://u@h:5432/db?sslmode=require",
		"no url here":                                          "no url here",
	} {
		if got := RedactURL(in); got != want {
			t.Errorf("RedactURL(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestStoreURLScrub(t *testing.T) {
	u, err := ParseStoreURL("postgres://rag:" + secret + "@localhost/docs")
	if err != nil {
		t.Fatal(err)
	}
	// A driver's message that quotes the password outside any URL.
	cause := fmt.Errorf("auth failed for password %q: %w", secret, ErrLocked)
	err = u.ScrubErr(cause)
	if strings.Contains(err.Error(), secret) || !strings.Contains(err.Error(), "xxxxx") {
		t.Errorf("scrubbed error %q", err)
	}
	if !errors.Is(err, ErrLocked) {
		t.Errorf("scrubbing hides the cause from errors.Is: %v", err)
	}
	if u.ScrubErr(nil) != nil {
		t.Error("ScrubErr(nil) is not nil")
	}
}

func TestNamespace(t *testing.T) {
	a, b := Namespace("/srv/team/Docs 2024"), Namespace("/home/me/Docs 2024")
	if a == b {
		t.Errorf("two folders of one name share namespace %q", a)
	}
	for _, ns := range []string{a, b, Namespace("/" + strings.Repeat("x", 200))} {
		if err := checkNamespace(ns); err != nil {
			t.Errorf("Namespace gave %q: %v", ns, err)
		}
	}
	if !strings.HasPrefix(a, "mrag_docs_2024_") {
		t.Errorf("namespace %q does not name the folder", a)
	}
}

func TestOpenBackendNotBuiltIn(t *testing.T) {
	u, err := ParseStoreURL("postgres://rag:" + secret + "@localhost/docs")
	if err != nil {
		t.Fatal(err)
	}
	// The index package itself registers no backend.
	_, err = OpenBackend(context.Background(), u, "mrag_x", schema.Version{Dim: 4}, Options{})
	if !errors.Is(err, ErrNotBuiltIn) || !strings.Contains(err.Error(), "postgres backend not built in") {
		t.Errorf("error %v; want the postgres backend not built in", err)
	}
	if strings.Contains(err.Error(), secret) {
		t.Errorf("error shows the password: %v", err)
	}
	// Nor the local folder's: index/localstore does.
	if err := CheckBackend(StoreURL{}); !errors.Is(err, ErrNotBuiltIn) || !strings.Contains(err.Error(), "local index folder") {
		t.Errorf("the local folder: error %v; want its backend not built in", err)
	}
}

func TestOpenBackendRegistered(t *testing.T) {
	var got BackendConfig
	RegisterBackend("postgres", Driver{Open: func(_ context.Context, cfg BackendConfig) (Backend, error) {
		got = cfg
		return nil, fmt.Errorf("cannot connect to %s with password %s: %w", cfg.URL, secret, ErrLocked)
	}})
	t.Cleanup(func() {
		driversMu.Lock()
		delete(drivers, "postgres")
		driversMu.Unlock()
	})
	u, err := ParseStoreURL("postgres://rag:" + secret + "@localhost/docs?schema=shared_docs")
	if err != nil {
		t.Fatal(err)
	}
	_, err = OpenBackend(context.Background(), u, "mrag_folder_1234", schema.Version{Dim: 4}, Options{ReadOnly: true})
	if err == nil || strings.Contains(err.Error(), secret) || !errors.Is(err, ErrLocked) {
		t.Errorf("error %v: want the opener's, scrubbed", err)
	}
	if got.URL != "postgres://rag:"+secret+"@localhost/docs" || got.Namespace != "shared_docs" || !got.Options.ReadOnly || got.Options.Logger == nil {
		t.Errorf("opener got URL %s, namespace %q, options %+v", RedactURL(got.URL), got.Namespace, got.Options)
	}
}

// What status prints names the schema the index uses: the URL's own, or
// the data folder's.
func TestStoreURLDescribe(t *testing.T) {
	u, err := ParseStoreURL("postgres://rag:" + secret + "@localhost/docs?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Describe("rag_docs_1234"); !strings.Contains(got, "schema=rag_docs_1234") || strings.Contains(got, secret) || !strings.Contains(got, "sslmode=disable") {
		t.Errorf("Describe: %q", got)
	}
	u, err = ParseStoreURL("postgres://rag@localhost/docs?schema=team")
	if err != nil {
		t.Fatal(err)
	}
	if got := u.Describe("rag_docs_1234"); !strings.Contains(got, "schema=team") || strings.Contains(got, "rag_docs_1234") {
		t.Errorf("Describe with the URL's schema: %q", got)
	}
	if got := (StoreURL{}).Describe("x"); got != "" {
		t.Errorf("local folder: %q", got)
	}
}
