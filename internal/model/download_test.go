package model

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// hub is a tiny stand-in for the model hub: it serves files by resolve URL
// and lets each test decide how to misbehave.
type hub struct {
	files    map[string][]byte // remote path -> content
	requests atomic.Int64
	serve    func(w http.ResponseWriter, r *http.Request, body []byte, n int64) // n: 1-based request count
}

func newHub(t *testing.T, files map[string][]byte) (*hub, *httptest.Server) {
	h := &hub{files: files}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := h.requests.Add(1)
		remote, ok := strings.CutPrefix(r.URL.Path, "/org/model/resolve/rev/")
		body, found := h.files[remote]
		if !ok || !found {
			http.NotFound(w, r)
			return
		}
		if h.serve != nil {
			h.serve(w, r, body, n)
			return
		}
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return h, srv
}

// testONNX is a seeded stand-in for model.onnx, large enough for many reads.
var testONNX = sync.OnceValue(func() []byte {
	b := make([]byte, 3<<20)
	rand.NewChaCha8([32]byte{1}).Read(b)
	return b
})

func testFiles() map[string][]byte {
	onnx := testONNX()
	return map[string][]byte{
		"onnx/model.onnx": onnx,
		"tokenizer.json":  []byte(`{"model":{"type":"WordPiece"}}`),
	}
}

func testSource(url string) Source {
	return Source{BaseURL: url, Repo: "org/model", Revision: "rev", Files: []RemoteFile{
		{Remote: "onnx/model.onnx", Local: ONNXName},
		{Remote: "tokenizer.json", Local: TokenizerName},
	}}
}

func fastDownloader() *downloader {
	d := newDownloader()
	d.backoff = time.Millisecond
	d.stall = 10 * time.Second
	return d
}

func sum(b []byte) string { s := sha256.Sum256(b); return hex.EncodeToString(s[:]) }

// dirNames lists everything in dir, hidden temp files included.
func dirNames(t *testing.T, dir string) []string {
	t.Helper()
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names
}

func TestEnsureDownloadsThenReuses(t *testing.T) {
	files := testFiles()
	h, srv := newHub(t, files)
	src := testSource(srv.URL)
	src.Files[0].SHA256 = sum(files["onnx/model.onnx"]) // pinned: also rechecked on reuse
	dir := filepath.Join(t.TempDir(), "models", "m")

	got, err := fastDownloader().ensure(context.Background(), dir, src, nil)
	if err != nil {
		t.Fatal(err)
	}
	if got.ONNX != filepath.Join(dir, ONNXName) || got.Tokenizer != filepath.Join(dir, TokenizerName) {
		t.Fatalf("paths %+v", got)
	}
	for local, remote := range map[string]string{got.ONNX: "onnx/model.onnx", got.Tokenizer: "tokenizer.json"} {
		b, err := os.ReadFile(local)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(b, files[remote]) {
			t.Errorf("%s: content differs from the served file", local)
		}
	}
	if names := dirNames(t, dir); len(names) != 2 {
		t.Errorf("dir holds %v, want exactly the two model files", names)
	}
	if n := h.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2", n)
	}

	if _, err := fastDownloader().ensure(context.Background(), dir, src, nil); err != nil {
		t.Fatal(err)
	}
	if n := h.requests.Load(); n != 2 {
		t.Errorf("second Ensure made %d more requests, want none", n-2)
	}
}

func TestEnsureReplacesCorruptPinnedFile(t *testing.T) {
	files := testFiles()
	h, srv := newHub(t, files)
	src := testSource(srv.URL)
	src.Files[1].SHA256 = sum(files["tokenizer.json"])
	dir := t.TempDir()
	os.WriteFile(filepath.Join(dir, ONNXName), files["onnx/model.onnx"], 0o644) // unpinned: kept as is
	os.WriteFile(filepath.Join(dir, TokenizerName), []byte(`{"damaged":true}`), 0o644)

	if _, err := fastDownloader().ensure(context.Background(), dir, src, nil); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, TokenizerName)); !bytes.Equal(b, files["tokenizer.json"]) {
		t.Errorf("damaged tokenizer.json was not replaced: %q", b)
	}
	if n := h.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (only the damaged file)", n)
	}
}

// expectNothingLanded checks that a failed Ensure left no file at all.
func expectNothingLanded(t *testing.T, dir string) {
	t.Helper()
	for _, name := range dirNames(t, dir) {
		if name == TokenizerName {
			continue // fetched before the failing file in some tests; whole either way
		}
		t.Errorf("dir holds %q after a failed download", name)
	}
}

func TestEnsureTruncatedBody(t *testing.T) {
	for _, mode := range []string{"short-content-length", "hijack-close"} {
		t.Run(mode, func(t *testing.T) {
			files := testFiles()
			h, srv := newHub(t, files)
			h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				if len(body) < 1000 {
					w.Write(body)
					return
				}
				if mode == "short-content-length" {
					w.Write(body[:len(body)/2]) // the server then closes the connection
					return
				}
				w.WriteHeader(http.StatusOK)
				w.Write(body[:len(body)/3])
				w.(http.Flusher).Flush()
				conn, _, err := http.NewResponseController(w).Hijack()
				if err != nil {
					t.Error(err)
					return
				}
				conn.Close()
			}
			src := testSource(srv.URL)
			src.Files[0], src.Files[1] = src.Files[1], src.Files[0] // tokenizer first: a good file must survive
			dir := t.TempDir()
			_, err := fastDownloader().ensure(context.Background(), dir, src, nil)
			if err == nil {
				t.Fatal("Ensure succeeded on a truncated body")
			}
			t.Log(err)
			expectNothingLanded(t, dir)
			if n := h.requests.Load(); n != 1+3 {
				t.Errorf("%d requests, want 1 + 3 attempts", n)
			}
		})
	}
}

func TestEnsureChecksumMismatch(t *testing.T) {
	files := testFiles()
	for _, how := range []string{"pinned", "x-linked-etag", "etag"} {
		t.Run(how, func(t *testing.T) {
			h, srv := newHub(t, files)
			wrong := sum([]byte("something else"))
			src := testSource(srv.URL)
			if how == "pinned" {
				src.Files[0].SHA256 = wrong
			} else {
				h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
					if how == "x-linked-etag" {
						w.Header().Set("X-Linked-Etag", `"`+wrong+`"`)
					} else {
						w.Header().Set("ETag", `"`+wrong+`"`)
					}
					w.Write(body)
				}
			}
			dir := t.TempDir()
			_, err := fastDownloader().ensure(context.Background(), dir, src, nil)
			if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
				t.Fatalf("err = %v, want a checksum mismatch", err)
			}
			if names := dirNames(t, dir); len(names) != 0 {
				t.Errorf("dir holds %v after a checksum failure", names)
			}
		})
	}
}

// The hub sends the LFS sha256 on its redirect to the CDN; it must be
// honoured even though the CDN's own ETag says something else.
func TestEnsureVerifiesLinkedEtagAcrossRedirect(t *testing.T) {
	files := testFiles()
	for _, good := range []bool{true, false} {
		t.Run(fmt.Sprint("good=", good), func(t *testing.T) {
			cdn := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("ETag", `"cdn-opaque-tag"`)
				w.Write(files[strings.TrimPrefix(r.URL.Path, "/")])
			}))
			defer cdn.Close()
			h, srv := newHub(t, files)
			h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
				s := sum(body)
				if !good {
					s = sum(append(body, 'x'))
				}
				w.Header().Set("X-Linked-Etag", `"`+s+`"`)
				w.Header().Set("X-Linked-Size", strconv.Itoa(len(body)))
				http.Redirect(w, r, cdn.URL+"/"+strings.TrimPrefix(r.URL.Path, "/org/model/resolve/rev/"), http.StatusFound)
			}
			dir := t.TempDir()
			_, err := fastDownloader().ensure(context.Background(), dir, testSource(srv.URL), nil)
			if good && err != nil {
				t.Fatal(err)
			}
			if !good {
				if err == nil || !strings.Contains(err.Error(), "checksum mismatch") {
					t.Fatalf("err = %v, want a checksum mismatch", err)
				}
				if names := dirNames(t, dir); len(names) != 0 {
					t.Errorf("dir holds %v", names)
				}
			}
		})
	}
}

func TestEnsureRetriesServerErrors(t *testing.T) {
	files := testFiles()
	h, srv := newHub(t, files)
	var mu sync.Mutex
	failed := map[string]bool{}
	h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
		mu.Lock()
		first := !failed[r.URL.Path]
		failed[r.URL.Path] = true
		mu.Unlock()
		if first {
			http.Error(w, "try later", http.StatusInternalServerError)
			return
		}
		w.Write(body)
	}
	dir := t.TempDir()
	got, err := fastDownloader().ensure(context.Background(), dir, testSource(srv.URL), nil)
	if err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(got.ONNX); !bytes.Equal(b, files["onnx/model.onnx"]) {
		t.Error("model.onnx content differs after a retried download")
	}
	if n := h.requests.Load(); n != 4 {
		t.Errorf("%d requests, want 4 (one 500 and one success per file)", n)
	}
}

// EnsureOnce asks once: a server error fails it at once, leaving no file.
func TestEnsureOnceIsNotRetried(t *testing.T) {
	h, srv := newHub(t, testFiles())
	h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
		http.Error(w, "try later", http.StatusInternalServerError)
	}
	dir := t.TempDir()
	if _, err := EnsureOnce(context.Background(), dir, testSource(srv.URL), nil); err == nil {
		t.Fatal("EnsureOnce succeeded against a failing server")
	}
	if n := h.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if left, _ := os.ReadDir(dir); len(left) != 0 {
		t.Errorf("left %d files behind", len(left))
	}
}

func TestEnsureNotFoundIsNotRetried(t *testing.T) {
	h, srv := newHub(t, map[string][]byte{"tokenizer.json": []byte("{}")})
	src := testSource(srv.URL) // model.onnx is missing: 404
	dir := t.TempDir()
	_, err := fastDownloader().ensure(context.Background(), dir, src, nil)
	if err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("err = %v, want a 404", err)
	}
	if n := h.requests.Load(); n != 1 {
		t.Errorf("%d requests, want exactly 1 (no retry on 404)", n)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("dir holds %v", names)
	}
}

func TestEnsureCancelMidDownload(t *testing.T) {
	files := testFiles()
	h, srv := newHub(t, files)
	started := make(chan struct{})
	h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:len(body)/2])
		w.(http.Flusher).Flush()
		close(started)
		<-r.Context().Done() // hold the rest until the client goes away
	}
	ctx, cancel := context.WithCancel(context.Background())
	go func() { <-started; cancel() }()
	dir := t.TempDir()
	_, err := fastDownloader().ensure(ctx, dir, testSource(srv.URL), nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err = %v, want context.Canceled", err)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("dir holds %v after cancel", names)
	}
	if n := h.requests.Load(); n != 1 {
		t.Errorf("%d requests, want 1 (no retry after cancel)", n)
	}
}

func TestEnsureStalledBodyIsRetriedThenFails(t *testing.T) {
	files := testFiles()
	h, srv := newHub(t, files)
	h.serve = func(w http.ResponseWriter, r *http.Request, body []byte, n int64) {
		w.Header().Set("Content-Length", strconv.Itoa(len(body)))
		w.Write(body[:100])
		w.(http.Flusher).Flush()
		<-r.Context().Done()
	}
	d := fastDownloader()
	d.stall = 50 * time.Millisecond
	d.attempts = 2
	dir := t.TempDir()
	_, err := d.ensure(context.Background(), dir, testSource(srv.URL), nil)
	if !errors.Is(err, errStalled) {
		t.Fatalf("err = %v, want errStalled", err)
	}
	if n := h.requests.Load(); n != 2 {
		t.Errorf("%d requests, want 2 attempts", n)
	}
	if names := dirNames(t, dir); len(names) != 0 {
		t.Errorf("dir holds %v", names)
	}
}

func TestSha256ETag(t *testing.T) {
	s := sum(nil)
	for in, want := range map[string]string{
		`"` + s + `"`:                    s,
		`W/"` + strings.ToUpper(s) + `"`: s,
		`"` + s[:40] + `"`:               "", // git blob id
		`"` + s[:63] + `z"`:              "",
		"":                               "",
	} {
		if got := sha256ETag(in); got != want {
			t.Errorf("sha256ETag(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestHubSourceURL(t *testing.T) {
	got := HubSource.URL(HubSource.Files[0])
	want := "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/resolve/main/onnx/model.onnx"
	if got != want {
		t.Errorf("URL = %q, want %q", got, want)
	}
}

// recorder keeps the percent values of progress records.
type recorder struct {
	mu      sync.Mutex
	percent []int64
	ready   int
}

func (r *recorder) Enabled(context.Context, slog.Level) bool { return true }
func (r *recorder) WithAttrs([]slog.Attr) slog.Handler       { return r }
func (r *recorder) WithGroup(string) slog.Handler            { return r }
func (r *recorder) Handle(_ context.Context, rec slog.Record) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if rec.Message == "model file ready" {
		r.ready++
	}
	rec.Attrs(func(a slog.Attr) bool {
		if a.Key == "percent" {
			r.percent = append(r.percent, a.Value.Int64())
		}
		return true
	})
	return nil
}

func TestEnsureLogsProgress(t *testing.T) {
	_, srv := newHub(t, testFiles())
	d := fastDownloader()
	d.progressEvery = 0 // every read
	rec := &recorder{}
	if _, err := d.ensure(context.Background(), t.TempDir(), testSource(srv.URL), slog.New(rec)); err != nil {
		t.Fatal(err)
	}
	if len(rec.percent) < 2 || !slices.IsSorted(rec.percent) || rec.percent[len(rec.percent)-1] > 100 {
		t.Errorf("progress percentages %v: want several, rising, at most 100", rec.percent)
	}
	if rec.ready != 2 {
		t.Errorf("%d 'ready' records, want one per file", rec.ready)
	}
}

// TestEveryModelDownloads serves each model's own files (from the cache
// setup and `make models` fill) the way the hub does, at the URLs of the
// model's Source, and has them downloaded and verified against the
// published sha256 into an empty folder: the path an end user's first run
// takes.
func TestEveryModelDownloads(t *testing.T) {
	for _, m := range Models {
		if len(m.Hub.Files) == 0 {
			t.Errorf("%s has no files to download", m.Name)
			continue
		}
		t.Run(m.Name, func(t *testing.T) {
			have, err := m.Locate("")
			if err != nil {
				t.Fatalf("%v (run make setup and make models)", err)
			}
			local := map[string]string{ONNXName: have.ONNX, TokenizerName: have.Tokenizer}
			var served atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for _, f := range m.Hub.Files {
					if r.URL.Path == strings.TrimPrefix(m.Hub.URL(f), m.Hub.BaseURL) {
						s, err := FileSHA256(local[f.Local])
						if err != nil {
							t.Error(err)
						}
						if !m.Hub.Release { // a release has no such header: its pins are checked
							w.Header().Set("X-Linked-Etag", `"`+s+`"`)
						}
						served.Add(1)
						http.ServeFile(w, r, local[f.Local])
						return
					}
				}
				http.NotFound(w, r)
			}))
			defer srv.Close()
			src := m.Hub
			src.BaseURL = srv.URL
			dir := filepath.Join(t.TempDir(), m.Name)
			got, err := fastDownloader().ensure(context.Background(), dir, src, nil)
			if err != nil {
				t.Fatal(err)
			}
			for _, pair := range [][2]string{{got.ONNX, have.ONNX}, {got.Tokenizer, have.Tokenizer}} {
				a, errA := FileSHA256(pair[0])
				b, errB := FileSHA256(pair[1])
				if errA != nil || errB != nil || a != b {
					t.Errorf("%s differs from %s (%v %v)", pair[0], pair[1], errA, errB)
				}
			}
			if served.Load() != 2 {
				t.Errorf("%d files served, want 2", served.Load())
			}
		})
	}
	for name, want := range map[string]string{
		"bge-small-en-v1.5":      "https://huggingface.co/Xenova/bge-small-en-v1.5/resolve/main/onnx/model.onnx",
		"bge-small-en-v1.5-int8": "https://huggingface.co/Xenova/bge-small-en-v1.5/resolve/main/onnx/model_quantized.onnx",
		"bge-small-zh-v1.5-int8": "https://huggingface.co/Xenova/bge-small-zh-v1.5/resolve/main/onnx/model_quantized.onnx",
	} {
		m, err := Lookup(name)
		if err != nil {
			t.Fatal(err)
		}
		if got := m.Hub.URL(m.Hub.Files[0]); got != want {
			t.Errorf("%s: URL %q, want %q", name, got, want)
		}
	}
}

// TestQ8SourceURLs: the project's int8 model comes from one release of the
// project's repository, tagged with its file's hash, the same for every
// version; the hub sources keep their URLs.
func TestQ8SourceURLs(t *testing.T) {
	m, err := Lookup(Q8Name)
	if err != nil {
		t.Fatal(err)
	}
	const release = "https://github.com/micro-rag/micro-rag-mcp/releases/download/model-all-MiniLM-L6-v2-q8-cda294d983d8/"
	if len(m.Hub.Files) != 2 {
		t.Fatalf("%s downloads %d files, want 2", Q8Name, len(m.Hub.Files))
	}
	for i, want := range []string{release + ONNXName, release + TokenizerName} {
		f := m.Hub.Files[i]
		if got := m.Hub.URL(f); got != want {
			t.Errorf("URL %q, want %q", got, want)
		}
		if len(f.SHA256) != 64 || f.Size <= 0 {
			t.Errorf("%s is not pinned: sha256 %q, size %d", f.Remote, f.SHA256, f.Size)
		}
	}
	if got, want := m.Hub.Page(), "https://github.com/micro-rag/micro-rag-mcp/releases/tag/model-all-MiniLM-L6-v2-q8-cda294d983d8"; got != want {
		t.Errorf("Page %q, want %q", got, want)
	}
	if got, want := HubSource.Page(), "https://huggingface.co/sentence-transformers/all-MiniLM-L6-v2/tree/main"; got != want {
		t.Errorf("hub Page %q, want %q", got, want)
	}
}

// TestQ8PinsMatchVersionsEnv: the hashes a first run checks are the ones
// make models and make dist check, and the release's tag follows the
// model file's, so a quantiser change cannot ship a stale pin.
func TestQ8PinsMatchVersionsEnv(t *testing.T) {
	env := versionsEnv(t)
	for i, name := range []string{"MODEL_Q8_ONNX_SHA256", "MODEL_TOKENIZER_SHA256"} {
		if got := Q8Source.Files[i].SHA256; env[name] == "" || got != env[name] {
			t.Errorf("%s is pinned at %q in Go, scripts/versions.env's %s is %q", Q8Source.Files[i].Remote, got, name, env[name])
		}
	}
	if want := "model-" + Q8Name + "-" + env["MODEL_Q8_ONNX_SHA256"][:12]; Q8Source.Revision != want {
		t.Errorf("release tag %q, want %q", Q8Source.Revision, want)
	}
}

// versionsEnv is scripts/versions.env's assignments.
func versionsEnv(t *testing.T) map[string]string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join("..", "..", "scripts", "versions.env"))
	if err != nil {
		t.Fatal(err)
	}
	env := map[string]string{}
	for _, line := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(line, "="); ok && !strings.HasPrefix(k, "#") {
			env[k] = strings.Trim(v, `"`)
		}
	}
	return env
}

// TestORTAdvice: the release make setup installs is the one ORTAdvice
// takes as tested; another patch of its line passes, any other line (or
// a version it cannot read) gets a warning naming both versions.
func TestORTAdvice(t *testing.T) {
	if got := versionsEnv(t)["ORT_VERSION"]; got != ORTTested {
		t.Errorf("ORTTested is %q, scripts/versions.env's ORT_VERSION %q", ORTTested, got)
	}
	for _, v := range []string{ORTTested, "1.24.1", "1.24.0"} {
		if a := ORTAdvice(v); a != "" {
			t.Errorf("ORTAdvice(%q) = %q, want none", v, a)
		}
	}
	for _, v := range []string{"1.25.1", "1.31.1", "1.2.4", "2.24.3", ""} {
		if a := ORTAdvice(v); !strings.Contains(a, "ONNX Runtime "+v+" is not the "+ORTTested) || !strings.Contains(a, "1.8x slower") {
			t.Errorf("ORTAdvice(%q) = %q, want a warning naming both versions and the cost", v, a)
		}
	}
}

// TestReleaseSourceDownloads fetches a release's two pinned assets from a
// local server at GitHub's paths, and refuses a body of the right length
// with other bytes and one of another length, leaving nothing behind.
func TestReleaseSourceDownloads(t *testing.T) {
	onnx, tok := testONNX(), []byte(`{"model":{"type":"WordPiece"}}`)
	src := projectRelease("m",
		RemoteFile{Remote: ONNXName, Local: ONNXName, SHA256: sum(onnx), Size: int64(len(onnx))},
		RemoteFile{Remote: TokenizerName, Local: TokenizerName, SHA256: sum(tok), Size: int64(len(tok))})
	dir := "/micro-rag/micro-rag-mcp/releases/download/model-m-" + sum(onnx)[:12] + "/"
	for _, serve := range []string{"good", "corrupted", "short"} {
		t.Run(serve, func(t *testing.T) {
			var requests atomic.Int64
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				requests.Add(1)
				body, ok := map[string][]byte{dir + ONNXName: onnx, dir + TokenizerName: tok}[r.URL.Path]
				if !ok {
					http.NotFound(w, r)
					return
				}
				switch body = bytes.Clone(body); serve {
				case "corrupted":
					body[len(body)/2] ^= 1
				case "short":
					body = body[:len(body)-1]
				}
				w.Header().Set("Content-Length", strconv.Itoa(len(body)))
				w.Write(body)
			}))
			defer srv.Close()
			local := src
			local.BaseURL = srv.URL
			into := t.TempDir()
			got, err := fastDownloader().ensure(context.Background(), into, local, nil)
			if serve == "good" {
				if err != nil {
					t.Fatal(err)
				}
				for p, want := range map[string][]byte{got.ONNX: onnx, got.Tokenizer: tok} {
					if b, _ := os.ReadFile(p); !bytes.Equal(b, want) {
						t.Errorf("%s differs from the served file", p)
					}
				}
				return
			}
			want := map[string]string{"corrupted": "checksum mismatch", "short": "expected " + strconv.Itoa(len(onnx))}[serve]
			if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), srv.URL+dir+ONNXName) {
				t.Fatalf("err = %v, want %q naming the URL", err, want)
			}
			if n := requests.Load(); n != 1 {
				t.Errorf("%d requests, want 1: a wrong file is not fetched again", n)
			}
			if names := dirNames(t, into); len(names) != 0 {
				t.Errorf("dir holds %v after a refused download", names)
			}
		})
	}
}
