package index

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/url"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"

	"github.com/micro-rag/micro-rag-mcp/index/schema"
)

// EnvStore names the environment variable that sets --store.
const EnvStore = "MICRO_RAG_STORE"

// SchemaParam is the query parameter of a store URL that names the index's
// schema (Namespace) in place of the one derived from the data folder. It
// is the seam's own: backends never see it.
const SchemaParam = "schema"

// FolderBackend is the name the local index folder's backend
// (index/localstore) registers under: it serves the StoreURL of no --store.
const FolderBackend = "folder"

// backendSchemes maps URL schemes to the backend that serves them.
var backendSchemes = map[string]string{"postgres": "postgres", "postgresql": "postgres"}

// StoreURL is where an index lives: the local index folder (the zero
// value, from an empty --store) or a database named by URL. Its String is
// redacted; the URL with its password goes only to the backend.
type StoreURL struct {
	raw       string // without SchemaParam; holds the password
	backend   string // "" for the local folder
	namespace string // from SchemaParam, else ""
	secrets   []string
	folder    string // the local index folder (InFolder)
}

// ParseStoreURL reads --store (or MICRO_RAG_STORE). "" is the local
// folder. Errors never hold the password.
func ParseStoreURL(s string) (StoreURL, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return StoreURL{}, nil
	}
	scheme, _, ok := strings.Cut(s, "://")
	if !ok || !schemeName.MatchString(scheme) {
		// Not echoed: it may be a password pasted without the rest.
		return StoreURL{}, errors.New("store is not a URL: give a database URL such as postgres://user@host:5432/db (the local index folder is set with --index-folder)")
	}
	backend, ok := backendSchemes[strings.ToLower(scheme)]
	if !ok {
		return StoreURL{}, fmt.Errorf("store URL scheme %q is not known: the stores are postgres:// (or postgresql://) and, with no --store, the local index folder", scheme)
	}
	u, err := url.Parse(s)
	if err != nil {
		return StoreURL{}, badURL(scheme, s)
	}
	if u.User != nil && strings.Contains(u.EscapedPath(), "@") {
		// An unencoded / in the password: url.Parse read the host from the
		// password (a name that would go to DNS) and the database from its
		// rest. A database name holding @ is written %40.
		return StoreURL{}, badURL(scheme, s)
	}
	out := StoreURL{backend: backend}
	if pw, set := u.User.Password(); set && pw != "" {
		out.secrets = append(out.secrets, pw, url.QueryEscape(pw), url.PathEscape(pw))
	}
	q := u.Query()
	for k, vs := range q {
		if isPasswordParam(k) {
			for _, v := range vs {
				if v != "" {
					out.secrets = append(out.secrets, v, url.QueryEscape(v))
				}
			}
		}
	}
	if q.Has(SchemaParam) {
		out.namespace = q.Get(SchemaParam)
		if err := checkNamespace(out.namespace); err != nil {
			return StoreURL{}, fmt.Errorf("store URL %s: %w", RedactURL(s), err)
		}
		q.Del(SchemaParam)
		u.RawQuery = q.Encode()
	}
	out.raw = u.String()
	// Longest first, so a secret is not left half replaced by a shorter one.
	slices.SortFunc(out.secrets, func(a, b string) int { return len(b) - len(a) })
	out.secrets = slices.Compact(out.secrets)
	return out, nil
}

// badURL says why url.Parse refused s without quoting its password: a fault
// in the host or port (read after the last @, where no password can be),
// else the user name or password.
func badURL(scheme, s string) error {
	rest := s[len(scheme)+len("://"):]
	if at := strings.LastIndex(rest, "@"); at >= 0 {
		rest = rest[at+1:]
	}
	var uerr *url.Error
	if _, err := url.Parse("x://" + rest); errors.As(err, &uerr) {
		return fmt.Errorf("store URL %s is not valid: %v (the host and port read %q)", redactUserinfo(scheme, s), uerr.Err, hostPort(rest))
	}
	return fmt.Errorf("store URL %s is not valid: a user name or password holding / ? # @ : or %% (or a database name holding @) must be percent-encoded", redactUserinfo(scheme, s))
}

// redactUserinfo is s with all of its user info after the user name, up to
// the last @, replaced by xxxxx: a password that broke the parse may hold
// spaces or a /, where RedactURL would stop.
func redactUserinfo(scheme, s string) string {
	rest := s[len(scheme)+len("://"):]
	at := strings.LastIndex(rest, "@")
	if at < 0 {
		return RedactURL(s)
	}
	user, _, _ := strings.Cut(rest[:at], ":")
	return scheme + "://" + user + ":" + redacted + "@" + rest[at+1:]
}

// hostPort is the authority part of what follows a URL's user info.
func hostPort(rest string) string {
	if i := strings.IndexAny(rest, "/?#"); i >= 0 {
		return rest[:i]
	}
	return rest
}

// Local reports whether the index lives in the local index folder.
func (u StoreURL) Local() bool { return u.backend == "" }

// Backend names the backend that serves u ("" for the local folder).
func (u StoreURL) Backend() string { return u.backend }

// InFolder is the local folder's u with its index folder, dir, which the
// folder backend opens; a database URL is returned as it is.
func (u StoreURL) InFolder(dir string) StoreURL {
	if u.Local() {
		u.folder = dir
	}
	return u
}

// Namespace is the schema the URL names with SchemaParam, or "".
func (u StoreURL) Namespace() string { return u.namespace }

// Describe is String with the schema the index uses: the URL's own, else
// namespace (the data folder's, Namespace). "" for the local folder.
func (u StoreURL) Describe(namespace string) string {
	if u.Local() {
		return ""
	}
	raw, err := url.Parse(u.raw)
	if err != nil {
		return u.String()
	}
	q := raw.Query()
	q.Set(SchemaParam, cmp.Or(u.namespace, namespace))
	raw.RawQuery = q.Encode()
	return RedactURL(raw.String())
}

// String is the URL with its password replaced by xxxxx: safe to log and
// show. "" for the local folder.
// The schema the URL named is shown too: it says which index this is.
func (u StoreURL) String() string {
	if u.namespace == "" {
		return RedactURL(u.raw)
	}
	sep := "?"
	if strings.Contains(u.raw, "?") {
		sep = "&"
	}
	return RedactURL(u.raw + sep + SchemaParam + "=" + u.namespace)
}

// Scrub replaces u's password wherever it occurs in text (a driver's error
// message, say) by xxxxx.
func (u StoreURL) Scrub(text string) string {
	for _, s := range u.secrets {
		text = strings.ReplaceAll(text, s, redacted)
	}
	return RedactURL(text)
}

// ScrubErr is err with u's password scrubbed from its message; errors.Is
// and As still see through it.
func (u StoreURL) ScrubErr(err error) error {
	if err == nil || len(u.secrets) == 0 {
		return err
	}
	return &scrubbed{msg: u.Scrub(err.Error()), err: err}
}

type scrubbed struct {
	msg string
	err error
}

func (e *scrubbed) Error() string { return e.msg }
func (e *scrubbed) Unwrap() error { return e.err }

const redacted = "xxxxx"

// isPasswordParam reports whether a connection parameter holds a secret:
// the password, or the passphrase of the client's TLS key.
func isPasswordParam(k string) bool {
	return strings.EqualFold(k, "password") || strings.EqualFold(k, "sslpassword")
}

var (
	schemeName = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9+.-]*$`)
	// userinfoPassword is the password of any URL in a text: after
	// "scheme://user:" up to the last @ before the path. The password may
	// hold characters a parser would stop at, so this errs on the side of
	// hiding more.
	userinfoPassword = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^:@/\s]*:)([^\s]*)@`)
	// passwordParam is a password=... (or sslpassword=...) parameter, in a
	// URL's query or a key=value connection string.
	passwordParam = regexp.MustCompile(`(?i)(\b(?:ssl)?password\s*=\s*)('(?:[^'\\]|\\.)*'|[^&\s]*)`)
)

// RedactURL replaces the passwords of the URLs (and password= settings) in
// s by xxxxx. It needs no valid URL: it is what is printed of one that
// failed to parse.
func RedactURL(s string) string {
	s = userinfoPassword.ReplaceAllString(s, "${1}"+redacted+"@")
	return passwordParam.ReplaceAllString(s, "${1}"+redacted)
}

// Namespace is the schema name the index of a data folder gets in a
// database unless the store URL names one (SchemaParam): the folder's name
// made an identifier, and a hash of its absolute path, so two folders of
// the same name do not share an index. Servers on other machines share it
// by naming the schema in the URL.
func Namespace(dataFolder string) string {
	abs, err := filepath.Abs(dataFolder)
	if err != nil {
		abs = dataFolder
	}
	var b strings.Builder
	b.WriteString("mrag_")
	for _, r := range strings.ToLower(filepath.Base(abs)) {
		if b.Len() >= 40 {
			break
		}
		if r >= 'a' && r <= 'z' || r >= '0' && r <= '9' {
			b.WriteRune(r)
		} else {
			b.WriteByte('_')
		}
	}
	sum := sha256.Sum256([]byte(abs))
	return b.String() + "_" + hex.EncodeToString(sum[:4])
}

// checkNamespace accepts schema names that need no quoting to read, though
// backends quote them anyway: lower-case letters, digits and _, starting
// with a letter or _, at most 63 bytes (PostgreSQL's limit).
func checkNamespace(ns string) error {
	ok := ns != "" && len(ns) <= 63 && !(ns[0] >= '0' && ns[0] <= '9')
	for _, r := range ns {
		ok = ok && (r >= 'a' && r <= 'z' || r >= '0' && r <= '9' || r == '_')
	}
	if !ok {
		return fmt.Errorf("%s=%q is not a schema name: lower-case letters, digits and _, not starting with a digit, at most 63 bytes", SchemaParam, ns)
	}
	return nil
}

// BackendConfig is what a backend's opener is given.
type BackendConfig struct {
	// URL is the connection URL, password included, SchemaParam removed.
	// Never print it or put it in an error: use Store.String or Scrub.
	URL   string
	Store StoreURL
	// Namespace is the schema (or table prefix) that holds this index: one
	// per data folder, already checked to be a plain identifier. Quote it
	// anyway.
	Namespace string
	// Version stamps the index: a committed index of another version is
	// served as empty (OpenErr ErrOtherVersion) and the next writer
	// rebuilds it.
	Version schema.Version
	// Options: Logger, ReadOnly (never create anything) and, where they
	// apply, the rest.
	Options Options
	// Folder is the local index folder (StoreURL.InFolder); "" for a
	// database.
	Folder string
}

// Driver is a backend as --store reaches it: a database's, or the local
// folder's (FolderBackend).
type Driver struct {
	// Open opens the index: it may connect, create its schema (unless
	// read-only) and load the committed index, and must honour ctx.
	Open func(ctx context.Context, cfg BackendConfig) (Backend, error)
	// Summary reads the last commit as ReadSummary does for a folder,
	// without loading vectors and without the model (cfg.Version is zero;
	// Summary.Model is the model that built the index; Bytes what the
	// index occupies, if the backend can tell). A namespace never written
	// gives an empty summary. The CLI's status and list use it.
	Summary func(ctx context.Context, cfg BackendConfig) (Summary, error)
	// Verify, when set, loads the committed index with every check Open
	// makes and frees it; damage is an error IsDamaged tells apart. A
	// database, which checks its own pages, leaves it nil.
	Verify func(ctx context.Context, cfg BackendConfig) error
	// CheckFolder, for the folder backend, reports whether a folder may
	// hold the index: missing, empty or an index of ours; otherwise the
	// error wraps ErrNotIndex.
	CheckFolder func(dir string) error
}

// ErrNotIndex means a folder holds files that are not an index of ours; it
// is someone's data and is never written to.
var ErrNotIndex = errors.New("not a micro-rag-mcp index")

// CheckIndexFolder reports whether dir may hold the local index
// (Driver.CheckFolder of FolderBackend).
func CheckIndexFolder(dir string) error {
	d, err := driverOf(StoreURL{})
	if err != nil {
		return err
	}
	return d.CheckFolder(dir)
}

// VerifyStore checks the index u names as Driver.Verify says; nil for a
// backend without Verify.
func VerifyStore(ctx context.Context, u StoreURL, namespace string) error {
	d, cfg, err := u.configured(namespace, schema.Version{}, Options{ReadOnly: true})
	if err != nil || d.Verify == nil {
		return err
	}
	return d.Verify(ctx, cfg)
}

var (
	driversMu sync.Mutex
	drivers   = map[string]Driver{}
)

// RegisterBackend makes a backend available to --store: name is what
// StoreURL.Backend says ("postgres"). A backend package calls it from
// init, so a binary has the backends it imports.
func RegisterBackend(name string, d Driver) {
	driversMu.Lock()
	defer driversMu.Unlock()
	drivers[name] = d
}

// ErrNotBuiltIn means the store URL names a backend this binary lacks.
var ErrNotBuiltIn = errors.New("backend not built in")

// CheckBackend says whether u can be opened by this binary: whether its
// backend (FolderBackend for the local folder) is registered.
func CheckBackend(u StoreURL) error {
	_, err := driverOf(u)
	return err
}

func driverOf(u StoreURL) (Driver, error) {
	name := u.backend
	if u.Local() {
		name = FolderBackend
	}
	driversMu.Lock()
	d, ok := drivers[name]
	driversMu.Unlock()
	if !ok && u.Local() {
		return d, fmt.Errorf("the local index folder %w: this binary was built without it", ErrNotBuiltIn)
	}
	if !ok {
		return d, fmt.Errorf("store %s: %s %w: this binary was built without it", u, u.backend, ErrNotBuiltIn)
	}
	return d, nil
}

// configured is u's driver and what it is given (backendConfig).
func (u StoreURL) configured(namespace string, v schema.Version, opts Options) (Driver, BackendConfig, error) {
	d, err := driverOf(u)
	if err != nil {
		return d, BackendConfig{}, err
	}
	cfg, err := u.backendConfig(namespace, v, opts)
	return d, cfg, err
}

// backendConfig is what u's driver is given for namespace, or for u's own
// namespace when it names one.
func (u StoreURL) backendConfig(namespace string, v schema.Version, opts Options) (BackendConfig, error) {
	if u.Local() {
		return BackendConfig{Store: u, Folder: u.folder, Version: v, Options: opts.WithDefaults()}, nil
	}
	if u.namespace != "" {
		namespace = u.namespace
	}
	if err := checkNamespace(namespace); err != nil {
		return BackendConfig{}, err
	}
	return BackendConfig{URL: u.raw, Store: u, Namespace: namespace, Version: v, Options: opts.WithDefaults()}, nil
}

// OpenBackend opens the index u names: a database's in namespace, or in
// u's own namespace when it names one; the local folder's index in the
// folder given by InFolder. Its errors have the password scrubbed.
func OpenBackend(ctx context.Context, u StoreURL, namespace string, v schema.Version, opts Options) (Backend, error) {
	d, cfg, err := u.configured(namespace, v, opts)
	if err != nil {
		return nil, err
	}
	b, err := d.Open(ctx, cfg)
	if err != nil {
		return nil, u.wrapErr(err)
	}
	return b, nil
}

// ReadStoreSummary reads the last commit of the index u names without
// loading vectors or the model: read-only, as Driver.Summary says.
func ReadStoreSummary(ctx context.Context, u StoreURL, namespace string) (Summary, error) {
	d, cfg, err := u.configured(namespace, schema.Version{}, Options{ReadOnly: true})
	if err != nil {
		return Summary{}, err
	}
	sum, err := d.Summary(ctx, cfg)
	if err != nil {
		return Summary{}, u.wrapErr(err)
	}
	return sum, nil
}

// wrapErr names a database store in its backend's error, scrubbed; the
// local folder's errors name their folder already.
func (u StoreURL) wrapErr(err error) error {
	if u.Local() {
		return err
	}
	wrapped := fmt.Errorf("store %s: %w", u, err)
	// A driver lists each address it tried on a line of its own: one line
	// reads as a sentence in a log, where a terminal would show it escaped.
	return &scrubbed{msg: oneLine.Replace(u.Scrub(wrapped.Error())), err: wrapped}
}

var oneLine = strings.NewReplacer(":\n\t", ": ", "\r\n\t", "; ", "\n\t", "; ", "\r\n", "; ", "\n", "; ")
