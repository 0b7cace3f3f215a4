package model

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/internal/durable"
)

// Source is where a model's files are downloaded from: a model repository
// on a Hugging Face style hub, serving a file at
// BaseURL/Repo/resolve/Revision/Remote, or with Release the assets of a
// GitHub release of Repo tagged Revision, at
// BaseURL/Repo/releases/download/Revision/Remote.
type Source struct {
	BaseURL, Repo, Revision string
	Release                 bool
	Files                   []RemoteFile
}

// RemoteFile is one file of a Source and where it lands in the model dir.
type RemoteFile struct {
	Remote, Local string
	// SHA256 (hex) pins the content. Empty: trust the sha256 the hub
	// publishes for LFS files in X-Linked-Etag/ETag, when it does.
	SHA256 string
	// Size pins the length in bytes; 0 means unknown.
	Size int64
}

// HubSource is what end users download on first run: sentence-transformers'
// own export, unpinned but checked against the hub's published sha256
// (X-Linked-Etag) and Content-Length. Why not a pin: docs/decisions.md.
var HubSource = hubRepo("sentence-transformers/all-MiniLM-L6-v2", "onnx/model.onnx")

// HubSourceInt8 is the file the int8 Maven jar (the one setup installs) names
// as its source in its README: the dynamically quantised export in
// Xenova/all-MiniLM-L6-v2. The jar's copy has the SHA-256 in
// scripts/versions.env. The tokenizer is the same file as the fp32 model's.
var HubSourceInt8 = xenova("all-MiniLM-L6-v2", "onnx/model_quantized.onnx")

// hubRepo is the files of a model repository on the hub, at its main
// revision: onnx as the model, and tokenizer.json.
func hubRepo(repo, onnx string) Source {
	return Source{
		BaseURL:  "https://huggingface.co",
		Repo:     repo,
		Revision: "main",
		Files: []RemoteFile{
			{Remote: onnx, Local: ONNXName},
			{Remote: "tokenizer.json", Local: TokenizerName},
		},
	}
}

// URL is where f is fetched from.
func (s Source) URL(f RemoteFile) string {
	route := "/resolve/"
	if s.Release {
		route = "/releases/download/"
	}
	return strings.TrimRight(s.BaseURL, "/") + "/" + s.Repo + route + s.Revision + "/" + f.Remote
}

// Page is the web page listing the files, for people to download by hand.
func (s Source) Page() string {
	route := "/tree/"
	if s.Release {
		route = "/releases/tag/"
	}
	return strings.TrimRight(s.BaseURL, "/") + "/" + s.Repo + route + s.Revision
}

// Ensure makes sure every file of src is in dir and returns the model's
// paths. Files already there are kept (after a hash check when SHA256 is
// pinned); missing ones are downloaded one by one with retries, progress
// logged to log (nil: silent). A download goes to a temporary file in dir
// and is renamed into place only once complete and verified, so a crash,
// an error or a cancelled ctx never leaves a partial file under the final
// name, and two processes fetching at once each land a whole file.
func Ensure(ctx context.Context, dir string, src Source, log *slog.Logger) (Files, error) {
	return newDownloader().ensure(ctx, dir, src, log)
}

// EnsureOnce is Ensure with one attempt a file, no retries: for a model
// that only improves on one already there (the default's query model), so
// that a machine without the network does not wait on retries at every
// start.
func EnsureOnce(ctx context.Context, dir string, src Source, log *slog.Logger) (Files, error) {
	d := newDownloader()
	d.attempts = 1
	return d.ensure(ctx, dir, src, log)
}

// downloader holds the knobs tests turn down.
type downloader struct {
	client        *http.Client
	attempts      int
	backoff       time.Duration // wait before the 2nd attempt; doubles after
	stall         time.Duration // give up an attempt after this long without a byte
	progressEvery time.Duration
}

func newDownloader() *downloader {
	tr := http.DefaultTransport.(*http.Transport).Clone() // keeps proxy settings from the environment
	tr.DialContext = (&net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second}).DialContext
	tr.TLSHandshakeTimeout = 15 * time.Second
	tr.ResponseHeaderTimeout = 60 * time.Second
	return &downloader{
		// No overall Timeout: 90 MB on a slow link may take minutes; the
		// stall watchdog and ctx bound it instead.
		client:        &http.Client{Transport: tr},
		attempts:      3,
		backoff:       time.Second,
		stall:         60 * time.Second,
		progressEvery: 3 * time.Second,
	}
}

func (d *downloader) ensure(ctx context.Context, dir string, src Source, log *slog.Logger) (Files, error) {
	log = cmp.Or(log, slog.New(slog.DiscardHandler))
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return Files{}, err
	}
	for _, f := range src.Files {
		if !filepath.IsLocal(f.Local) {
			return Files{}, fmt.Errorf("model: file name %q escapes the model dir", f.Local)
		}
		dst := filepath.Join(dir, f.Local)
		if present(dst, f, log) {
			continue
		}
		url := src.URL(f)
		log.Info("downloading model file", "url", url, "to", dst)
		if err := d.fetch(ctx, url, dst, f, log); err != nil {
			return Files{}, fmt.Errorf("model: download %s: %w", url, err)
		}
	}
	return Locate(dir)
}

// present reports whether dst already holds f (hash-checked when pinned).
func present(dst string, f RemoteFile, log *slog.Logger) bool {
	st, err := os.Stat(dst)
	if err != nil || !st.Mode().IsRegular() || st.Size() == 0 {
		return false
	}
	if f.Size > 0 && st.Size() != f.Size {
		log.Warn("model file has the wrong size, fetching it again", "path", dst, "size", st.Size(), "want", f.Size)
		return false
	}
	if f.SHA256 == "" {
		return true
	}
	sum, err := FileSHA256(dst)
	if err != nil || !strings.EqualFold(sum, f.SHA256) {
		log.Warn("model file fails its checksum, fetching it again", "path", dst)
		return false
	}
	return true
}

// FileSHA256 is the hex SHA-256 of the file at p.
func FileSHA256(p string) (string, error) {
	fh, err := os.Open(p)
	if err != nil {
		return "", err
	}
	defer fh.Close()
	h := sha256.New()
	if _, err := io.Copy(h, fh); err != nil {
		return "", err
	}
	return hex.EncodeToString(h.Sum(nil)), nil
}

// permanentError marks failures that another attempt would not fix.
type permanentError struct{ err error }

func (e *permanentError) Error() string { return e.err.Error() }
func (e *permanentError) Unwrap() error { return e.err }

var errStalled = errors.New("download stalled: no data received")

func (d *downloader) fetch(ctx context.Context, url, dst string, f RemoteFile, log *slog.Logger) error {
	wait := d.backoff
	for attempt := 1; ; attempt++ {
		err := d.once(ctx, url, dst, f, log)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return context.Cause(ctx)
		}
		var perm *permanentError
		if errors.As(err, &perm) || attempt >= d.attempts {
			return err
		}
		log.Warn("model download failed, retrying", "url", url, "attempt", attempt, "err", err, "retry_in", wait)
		t := time.NewTimer(wait)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return context.Cause(ctx)
		}
		wait *= 2
	}
}

// hubMeta is what the hub says about the file it serves.
type hubMeta struct {
	sha256 string // from X-Linked-Etag (LFS), else a sha256-shaped ETag
	size   int64  // from X-Linked-Size; -1 when absent
}

// observe takes the LFS headers from the first response that has them: the
// hub sends them on its redirect to the CDN, whose own ETag may be anything.
func (m *hubMeta) observe(h http.Header, final bool) {
	if m.sha256 == "" {
		if s := sha256ETag(h.Get("X-Linked-Etag")); s != "" {
			m.sha256 = s
		} else if final {
			m.sha256 = sha256ETag(h.Get("ETag"))
		}
	}
	if m.size < 0 {
		if n, err := strconv.ParseInt(h.Get("X-Linked-Size"), 10, 64); err == nil && n > 0 {
			m.size = n
		}
	}
}

// sha256ETag returns the ETag's value when it is 64 hex digits (an LFS
// sha256); git blob ids (40 hex) and opaque CDN tags give "".
func sha256ETag(v string) string {
	v = strings.TrimPrefix(strings.TrimSpace(v), "W/")
	v = strings.Trim(v, `"`)
	if len(v) != 64 {
		return ""
	}
	if _, err := hex.DecodeString(v); err != nil {
		return ""
	}
	return strings.ToLower(v)
}

// once makes one attempt: GET, stream to a temp file through sha256, verify,
// fsync, rename. The temp file is removed on every failure path.
func (d *downloader) once(ctx context.Context, url, dst string, f RemoteFile, log *slog.Logger) (err error) {
	actx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	resp, meta, err := d.get(actx, url)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	wantSum, total, err := expected(f, meta, resp.ContentLength)
	if err != nil {
		return err
	}

	tmp, err := os.CreateTemp(filepath.Dir(dst), "."+filepath.Base(dst)+".part-*")
	if err != nil {
		return &permanentError{err}
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()

	// The watchdog cancels the attempt when the body stops flowing.
	watchdog := time.AfterFunc(d.stall, func() { cancel(errStalled) })
	defer watchdog.Stop()
	n, got, err := d.copyBody(tmp, resp.Body, watchdog, f.Local, total, log)
	if err != nil {
		var re readError
		if !errors.As(err, &re) {
			return err
		}
		if cause := context.Cause(actx); cause != nil && ctx.Err() == nil {
			return cause // stalled
		}
		return re.error
	}
	if total > 0 && n != total {
		return fmt.Errorf("truncated body: got %d of %d bytes", n, total)
	}
	if wantSum != "" && got != wantSum {
		return &permanentError{fmt.Errorf("checksum mismatch: got sha256 %s, want %s", got, wantSum)}
	}
	if wantSum == "" {
		log.Debug("no sha256 published for this file; verified its length only", "file", f.Local)
	}
	if err = publish(tmp, dst); err != nil {
		return err
	}
	log.Info("model file ready", "path", dst, "bytes", n, "sha256", got)
	return durable.SyncDir(filepath.Dir(dst))
}

// get sends the GET and returns a 200 response with what the hub's headers
// said along the redirects; other answers are errors, permanent for a 4xx
// that a retry will not change.
func (d *downloader) get(ctx context.Context, url string) (*http.Response, hubMeta, error) {
	meta := hubMeta{size: -1}
	client := *d.client
	client.CheckRedirect = func(r *http.Request, via []*http.Request) error {
		if len(via) >= 10 {
			return errors.New("too many redirects")
		}
		if r.Response != nil {
			meta.observe(r.Response.Header, false)
		}
		return nil
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, meta, &permanentError{err}
	}
	req.Header.Set("User-Agent", "micro-rag-mcp")
	resp, err := client.Do(req)
	if err != nil {
		return nil, meta, err
	}
	if resp.StatusCode != http.StatusOK {
		io.Copy(io.Discard, io.LimitReader(resp.Body, 4<<10)) // let the connection be reused
		resp.Body.Close()
		err := fmt.Errorf("server answered %s", resp.Status)
		// 4xx will not change on retry, except timeouts and rate limits.
		if resp.StatusCode >= 400 && resp.StatusCode < 500 &&
			resp.StatusCode != http.StatusRequestTimeout && resp.StatusCode != http.StatusTooManyRequests {
			return nil, meta, &permanentError{err}
		}
		return nil, meta, err
	}
	meta.observe(resp.Header, true)
	return resp, meta, nil
}

// expected is the checksum to verify ("" for none) and the length to
// expect (-1 for unknown), from the table and the hub's headers; a body
// announced at another length is a permanent error.
func expected(f RemoteFile, meta hubMeta, contentLength int64) (string, int64, error) {
	wantSum := cmp.Or(strings.ToLower(f.SHA256), meta.sha256)
	total := contentLength // -1 when unknown or transparently decompressed
	for _, n := range []int64{f.Size, meta.size} {
		if n > 0 && total > 0 && n != total {
			return "", 0, &permanentError{fmt.Errorf("server sends %d bytes, expected %d", total, n)}
		}
		if n > 0 && total < 0 {
			total = n
		}
	}
	return wantSum, total, nil
}

// readError is a failed read of the body: the attempt may have stalled.
type readError struct{ error }

// copyBody streams body into w, resetting the watchdog on every read and
// logging progress, and returns the bytes copied and their sha256 in hex.
// A write error is permanent; a read error comes as a readError.
func (d *downloader) copyBody(w io.Writer, body io.Reader, watchdog *time.Timer, name string, total int64, log *slog.Logger) (int64, string, error) {
	h := sha256.New()
	buf := make([]byte, 256<<10)
	var n int64
	lastLog := time.Now()
	for {
		k, rerr := body.Read(buf)
		if k > 0 {
			watchdog.Reset(d.stall)
			if _, werr := w.Write(buf[:k]); werr != nil {
				return n, "", &permanentError{werr}
			}
			h.Write(buf[:k])
			n += int64(k)
			if now := time.Now(); now.Sub(lastLog) >= d.progressEvery {
				lastLog = now
				if total > 0 {
					log.Info("downloading model file", "file", name, "percent", n*100/total, "mb", n>>20, "of_mb", total>>20)
				} else {
					log.Info("downloading model file", "file", name, "mb", n>>20)
				}
			}
		}
		if rerr == io.EOF {
			return n, hex.EncodeToString(h.Sum(nil)), nil
		}
		if rerr != nil {
			return n, "", readError{rerr}
		}
	}
}

// publish makes the verified temp file dst: readable, on disk, renamed.
func publish(tmp *os.File, dst string) error {
	if err := tmp.Chmod(0o644); err != nil {
		return err
	}
	if err := tmp.Sync(); err != nil {
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), dst)
}
