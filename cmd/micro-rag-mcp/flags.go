package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/http/pprof"
	"os"
	"path/filepath"
	"regexp"
	rpprof "runtime/pprof"
	"strings"
	"time"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/glob"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// errHelp ends a command after --help printed its usage (exit 0).
var errHelp = errors.New("help requested")

// common holds the flags every command takes.
type common struct {
	dataFolder  string
	indexFolder string
	store       string
	exts        givenString
	addExts     givenString
	changeExts  bool
	changeExcl  bool
	model       string
	modelDir    string
	ortLib      string
	logLevel    string
	cpuProfile  string
	pprofAddr   string
	searchMode  string
	excludes    patternList
	maxChunks   int
	maxTableKiB int64
	allowBroad  bool
	version     bool
}

// givenString is a string flag that remembers being given, so that an
// explicitly empty --exts ” is refused rather than read as "not given".
type givenString struct {
	value string
	given bool
}

func (g *givenString) String() string { return g.value }

func (g *givenString) Set(v string) error {
	g.value, g.given = v, true
	return nil
}

// patternList collects a repeatable flag (--exclude A --exclude B).
type patternList []string

func (p *patternList) String() string { return strings.Join(*p, ", ") }

func (p *patternList) Set(v string) error {
	if err := engine.CheckExclude(v); err != nil {
		return err
	}
	*p = append(*p, v)
	return nil
}

func (c *common) register(fs *flag.FlagSet) {
	fs.StringVar(&c.dataFolder, "data-folder", "", "folder of documents to index (required)")
	fs.StringVar(&c.indexFolder, "index-folder", "", "where the index lives (default <data-folder>/index)")
	// The default is not shown: $MICRO_RAG_STORE may hold a password.
	fs.StringVar(&c.store, "store", "", "keep the index in this PostgreSQL database instead of the index folder:\n"+
		"postgres://USER[:PASSWORD]@HOST:PORT/DB[?sslmode=verify-full][&schema=NAME] (default $"+index.EnvStore+";\n"+
		"without either, the index folder). Its password is never printed; prefer ~/.pgpass or $PGPASSWORD")
	fs.Var(&c.exts, "exts", "comma-separated file `extensions` to index, replacing the list recorded in the index\n"+
		"(default: the recorded list; a new index takes "+isearch.ExtList(engine.DefaultExts)+",\n"+
		engine.NoExt+" being README, LICENSE and other files without an extension); \"+.csv,.json\" adds to it.\n"+
		"A list that leaves out recorded extensions is refused unless --change-exts is given")
	fs.Var(&c.addExts, "add-exts", "comma-separated file `extensions` to index besides the recorded (or --exts) list;\n"+
		"code, config and markup name whole groups (source code, configuration files, text markups)")
	fs.BoolVar(&c.changeExts, "change-exts", false, "let --exts leave out extensions the index covers: their files are removed from the index")
	fs.BoolVar(&c.changeExcl, "change-exclude", false, "let --exclude add patterns the index did not record (matching files are removed\n"+
		"from the index), or, without --exclude, clear the recorded patterns")
	fs.StringVar(&c.model, "model", engine.DefaultModel, "embedding model (switching rebuilds the index; the first use downloads it):"+engine.ModelHelp())
	fs.StringVar(&c.modelDir, "model-dir", "", "folder holding model.onnx and tokenizer.json (default: the user cache); with a model.json there, any BERT-style WordPiece model (see docs/command-line.md, Bring your own model)")
	fs.StringVar(&c.ortLib, "ort-lib", "", "path of libonnxruntime.so (default: ../lib beside the binary, else the user cache)")
	fs.StringVar(&c.logLevel, "log-level", "info", "log level on stderr: debug, info, warn or error")
	fs.StringVar(&c.cpuProfile, "cpuprofile", "", "write a CPU profile to this file until exit")
	fs.StringVar(&c.pprofAddr, "pprof", "", "serve net/http/pprof on this loopback address (e.g. 127.0.0.1:6060)")
	fs.Var(&c.excludes, "exclude", "leave out paths matching this gitignore-style pattern (repeatable), on top of .gitignore and\n"+
		".micro-rag-ignore files (default: the patterns recorded in the index; adding one needs --change-exclude)")
	fs.IntVar(&c.maxChunks, "max-file-chunks", engine.DefaultMaxFileChunks,
		"index at most this many chunks of one file (the rest is left out and the file reported as truncated); 0 = no cap")
	fs.Int64Var(&c.maxTableKiB, "max-table-kib", stages.DefaultTableCap>>10,
		"read CSV and TSV files up to this size in KiB (larger ones are reported as table_too_large); 0 = no cap")
	fs.BoolVar(&c.allowBroad, "allow-broad-folder", false, "allow a data folder that is / or your home folder")
	fs.BoolVar(&c.version, "version", false, "print the version and exit")
}

// quietByDefault makes a command log only warnings and errors unless
// --log-level says otherwise: a person reading search results or a status
// wants no progress chatter.
func quietByDefault(fs *flag.FlagSet) {
	f := fs.Lookup("log-level")
	f.DefValue = "warn"
	f.Value.Set("warn")
}

// registerSearchMode adds --search-mode, for the commands that search.
func (c *common) registerSearchMode(fs *flag.FlagSet) {
	fs.StringVar(&c.searchMode, "search-mode", string(isearch.Hybrid),
		"ranking: hybrid (keyword and semantic fused), dense (semantic only) or keyword (BM25 only); "+
			"the score starts as 1-(1-cosine)(1-keyword score), the cosine, or the keyword score, "+
			"is lowered when the folder lacks the query's words, and is calibrated per mode so that 0.2 means the same in each")
}

// newFlagSet returns a flag set whose usage goes to stderr after the given synopsis.
func newFlagSet(name, synopsis string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "Usage:\n  %s\n\nOptions:\n", synopsis)
		printFlags(fs)
	}
	return fs
}

// flagLine is the start of a flag's line in flag.PrintDefaults.
var flagLine = regexp.MustCompile(`(?m)^  -`)

// printFlags is flag.PrintDefaults with each flag spelt --name, as the
// README and the error messages spell it.
func printFlags(fs *flag.FlagSet) {
	out := fs.Output()
	var b strings.Builder
	fs.SetOutput(&b)
	fs.PrintDefaults()
	fs.SetOutput(out)
	io.WriteString(out, flagLine.ReplaceAllString(b.String(), "  --"))
}

// parseFlags parses args, allowing positional arguments between flags
// ("search "query" --top-k 3"). --help prints usage to stdout.
func parseFlags(fs *flag.FlagSet, args []string, stdout io.Writer) ([]string, error) {
	// Answer --help before parsing: flag would print the usage to stderr too.
	for _, a := range args {
		if a == "--" {
			break
		}
		if a == "-h" || a == "-help" || a == "--h" || a == "--help" {
			fs.SetOutput(stdout)
			fs.Usage()
			return nil, errHelp
		}
	}
	var pos []string
	for {
		// flag would print its error with the argument raw; run prints it
		// escaped (term.Visible), after the usage printed here.
		stderr := fs.Output()
		fs.SetOutput(io.Discard)
		err := fs.Parse(args)
		fs.SetOutput(stderr)
		if err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(stdout)
				fs.Usage()
				return nil, errHelp
			}
			// The error and a suggestion, not forty lines of usage.
			return nil, &exitError{code: 2, err: suggestFlag(fs, err), usage: true, cmd: fs.Name()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		if args[0] == "--" {
			return append(pos, args[1:]...), nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

// addUsageNote prints note after the options in fs's usage.
func addUsageNote(fs *flag.FlagSet, note string) {
	usage := fs.Usage
	fs.Usage = func() {
		usage()
		fmt.Fprint(fs.Output(), "\n"+note)
	}
}

// required reports a usage error (with usage on stderr) when any named flag is empty.
func required(fs *flag.FlagSet, names ...string) error {
	var missing, what []string
	for _, n := range names {
		if f := fs.Lookup(n); strings.TrimSpace(f.Value.String()) == "" {
			missing = append(missing, "--"+n)
			what = append(what, "--"+n+": "+strings.TrimSuffix(f.Usage, " (required)"))
		}
	}
	if len(missing) == 0 {
		return nil
	}
	// One line a client's log shows whole: what is missing, what each is,
	// and where to add it.
	return withUsage(fs, usageErr("missing required flag(s): %s (%s); add them to the command line (for a server, in the MCP client's configuration)",
		strings.Join(missing, ", "), strings.Join(what, "; ")))
}

// checkPathGlob refuses a --path-glob that is not a valid pattern, as a
// usage error, before any folder is opened.
func checkPathGlob(pattern string) error {
	if _, err := glob.Parse(pattern); err != nil {
		return usageErr("--path-glob: %v", err)
	}
	return nil
}

// parseExts normalises the extension list of flag --name
// (engine.ParseExts), an error being a usage error.
func parseExts(name, s string) ([]string, error) {
	if noExts(s) {
		// Given but empty: without this the recorded list would be used
		// silently, as if the flag were absent.
		absent := "keep the list recorded in the index"
		if name == "add-exts" {
			absent = "add none"
		}
		return nil, usageErr("--%s %q: no file extensions given; pass some (such as --%s .md,.txt), or leave --%s out to %s",
			name, s, name, name, absent)
	}
	exts, err := engine.ParseExts(strings.Split(s, ","))
	if err != nil {
		return nil, usageErr("--%s: %v", name, err)
	}
	return exts, nil
}

// noExts reports whether an extension list names none ("", " , ", "+").
func noExts(s string) bool { return strings.Trim(s, " ,+") == "" }

// scopeFlags turns --exts, --add-exts and --exclude into the engine's
// request: unset flags keep what the index recorded, and "--exts +.html"
// adds like --add-exts.
func (c *common) scopeFlags(cfg *engine.Config) error {
	// A flag given empty is refused, not read as absent (parseExts says so).
	for _, f := range []struct {
		name string
		givenString
	}{{"exts", c.exts}, {"add-exts", c.addExts}} {
		if f.given && noExts(f.value) {
			_, err := parseExts(f.name, f.value)
			return err
		}
	}
	exts, add := c.exts.value, c.addExts.value
	if rest, ok := strings.CutPrefix(strings.TrimSpace(exts), "+"); ok {
		exts, add = "", strings.Trim(rest+","+add, ",")
	}
	var err error
	if exts != "" {
		if cfg.Exts, err = parseExts("exts", exts); err != nil {
			return err
		}
	}
	if add != "" {
		if cfg.AddExts, err = parseExts("add-exts", add); err != nil {
			return err
		}
	}
	cfg.ChangeExts, cfg.ChangeExcludes = c.changeExts, c.changeExcl
	cfg.Excludes = c.excludes
	if cfg.Excludes == nil && c.changeExcl {
		cfg.Excludes = []string{} // clear the record
	}
	return nil
}

// setup turns the common flags into an engine configuration and starts the
// profilers. cleanup stops them; call it before exiting.
func (c *common) setup(stderr io.Writer) (cfg engine.Config, log *slog.Logger, cleanup func(), err error) {
	cleanup = func() {}
	log, err = newLogger(stderr, c.logLevel)
	if err != nil {
		return cfg, nil, cleanup, err
	}
	var scope engine.Config
	if err := c.scopeFlags(&scope); err != nil {
		return cfg, nil, cleanup, err
	}
	if err := engine.CheckModel(c.model); err != nil {
		return cfg, nil, cleanup, usageErr("--model: %v", err)
	}
	if c.maxChunks < 0 {
		return cfg, nil, cleanup, usageErr("--max-file-chunks: %d is negative (0 means no cap)", c.maxChunks)
	}
	if c.maxTableKiB < 0 {
		return cfg, nil, cleanup, usageErr("--max-table-kib: %d is negative (0 means no cap)", c.maxTableKiB)
	}
	mode, err := isearch.ParseMode(c.searchMode)
	if err != nil {
		return cfg, nil, cleanup, usageErr("--search-mode: %v", err)
	}
	data, err := engine.CheckDataFolder(c.dataFolder)
	if err != nil {
		return cfg, nil, cleanup, err
	}
	if what := broadFolder(data); what != "" && !c.allowBroad {
		return cfg, nil, cleanup, usageErr("--data-folder %s is %s: a reindex would read every file under it and copy their text into the index; "+
			"choose the folder of your documents, or pass --allow-broad-folder if you mean it", data, what)
	}
	store, err := c.storeURL()
	if err != nil {
		return cfg, nil, cleanup, err
	}
	indexDir := c.indexFolder
	if indexDir != "" {
		if indexDir, err = filepath.Abs(indexDir); err != nil {
			return cfg, nil, cleanup, err
		}
	}
	if cleanup, err = c.startProfilers(log); err != nil {
		return cfg, nil, cleanup, err
	}
	cfg = engine.Config{
		DataFolder:  data,
		IndexFolder: indexDir,
		Store:       store,
		Model:       c.model,
		ModelDir:    c.modelDir,
		ORTLibrary:  c.ortLib,
		SearchMode:  mode,
		Logger:      log,
	}
	cfg.Exts, cfg.AddExts, cfg.ChangeExts, cfg.Excludes, cfg.ChangeExcludes =
		scope.Exts, scope.AddExts, scope.ChangeExts, scope.Excludes, scope.ChangeExcludes
	if cfg.MaxFileChunks = c.maxChunks; c.maxChunks == 0 {
		cfg.MaxFileChunks = -1
	}
	if cfg.TableCap = c.maxTableKiB << 10; c.maxTableKiB == 0 {
		cfg.TableCap = -1
	}
	return cfg, log, cleanup, nil
}

// startProfilers starts the profilers the flags ask for; cleanup stops
// them (after an error, the ones started).
func (c *common) startProfilers(log *slog.Logger) (cleanup func(), err error) {
	var stops []func()
	cleanup = func() {
		for i := len(stops) - 1; i >= 0; i-- {
			stops[i]()
		}
	}
	if c.pprofAddr != "" {
		stop, err := servePprof(c.pprofAddr, log)
		if err != nil {
			return cleanup, err
		}
		stops = append(stops, stop)
	}
	if c.cpuProfile != "" {
		stop, err := startCPUProfile(c.cpuProfile, log)
		if err != nil {
			cleanup()
			return func() {}, err
		}
		stops = append(stops, stop)
	}
	return cleanup, nil
}

// storeURL is --store, else $MICRO_RAG_STORE, parsed; errors never show
// its password.
func (c *common) storeURL() (index.StoreURL, error) {
	raw, from := c.store, "--store"
	if raw == "" {
		raw, from = os.Getenv(index.EnvStore), "$"+index.EnvStore
	}
	u, err := index.ParseStoreURL(raw)
	if err == nil {
		err = index.CheckBackend(u)
	}
	if err != nil {
		return u, usageErr("%s: %v", from, err)
	}
	return u, nil
}

// startCPUProfile profiles the process into path until stop is called.
func startCPUProfile(path string, log *slog.Logger) (stop func(), err error) {
	f, err := os.Create(path)
	if err != nil {
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	if err := rpprof.StartCPUProfile(f); err != nil {
		f.Close()
		return nil, fmt.Errorf("--cpuprofile: %w", err)
	}
	return func() {
		rpprof.StopCPUProfile()
		if err := f.Close(); err != nil {
			log.Error("writing CPU profile", "err", err)
		}
	}, nil
}

// broadFolder says what a data folder (absolute, links resolved) is when
// it is the root of the file system or the user's home folder, else "".
func broadFolder(data string) string {
	if data == string(filepath.Separator) {
		return "the root of the file system"
	}
	if home, err := os.UserHomeDir(); err == nil {
		if home, err = filepath.EvalSymlinks(home); err == nil && home == data {
			return "your home folder"
		}
	}
	return ""
}

// checkLoopback refuses pprof addresses that would listen beyond this machine.
func checkLoopback(addr string) error {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return usageErr("--pprof: %v", err)
	}
	if ip := net.ParseIP(host); host == "localhost" || ip != nil && ip.IsLoopback() {
		return nil
	}
	return usageErr("--pprof: %q is not a loopback address (use 127.0.0.1:PORT or localhost:PORT)", addr)
}

// servePprof serves the profiling endpoints on their own mux, never the default one.
func servePprof(addr string, log *slog.Logger) (stop func(), err error) {
	if err := checkLoopback(addr); err != nil {
		return nil, err
	}
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("--pprof: %w", err)
	}
	if tcp, ok := ln.Addr().(*net.TCPAddr); !ok || !tcp.IP.IsLoopback() {
		ln.Close()
		return nil, usageErr("--pprof: %s resolved to a non-loopback address", addr)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/debug/pprof/", pprof.Index)
	mux.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
	mux.HandleFunc("/debug/pprof/profile", pprof.Profile)
	mux.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
	mux.HandleFunc("/debug/pprof/trace", pprof.Trace)
	srv := &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("pprof server", "err", err)
		}
	}()
	log.Info("pprof listening", "addr", "http://"+ln.Addr().String()+"/debug/pprof/")
	return func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		srv.Shutdown(ctx)
	}, nil
}

// withUsage makes a usage error print fs's usage after its message.
func withUsage(fs *flag.FlagSet, err error) error {
	var ee *exitError
	if errors.As(err, &ee) {
		ee.showUsage, ee.cmd = fs.Usage, fs.Name()
	}
	return err
}

// suggestFlag adds the nearest defined flag to an "flag provided but not
// defined" error: the same letters without dashes, or a name one or two
// edits away.
func suggestFlag(fs *flag.FlagSet, err error) error {
	name, ok := strings.CutPrefix(err.Error(), "flag provided but not defined: ")
	if !ok {
		if msg := err.Error(); strings.HasPrefix(msg, "invalid value ") {
			// Spelt as --help and the README spell flags.
			return errors.New(strings.Replace(msg, " for flag -", " for flag --", 1))
		}
		return err
	}
	name = strings.TrimLeft(name, "-")
	bare := func(s string) string { return strings.ToLower(strings.NewReplacer("-", "", "_", "").Replace(s)) }
	best, bestDist := "", 3
	fs.VisitAll(func(f *flag.Flag) {
		d := editDistance(bare(name), bare(f.Name))
		if prefix := strings.HasPrefix(f.Name, name) && len(name) >= 3; prefix && d > 1 {
			d = 2 // "--data" for "--data-folder"
		}
		if d < bestDist {
			best, bestDist = f.Name, d
		}
	})
	msg := fmt.Sprintf("unknown flag --%s", name)
	if best != "" {
		msg += fmt.Sprintf(" (did you mean --%s?)", best)
	}
	return errors.New(msg)
}

// editDistance is the Levenshtein distance of a and b, by bytes.
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

// idleDuration is a duration flag whose error says how to write one: a
// bare number is the likely mistake ("--idle-release 10").
type idleDuration struct{ d *time.Duration }

func (f idleDuration) String() string {
	if f.d == nil {
		return ""
	}
	return f.d.String()
}

func (f idleDuration) Set(v string) error {
	d, err := time.ParseDuration(v)
	if err != nil {
		return fmt.Errorf("not a duration: write it with a unit, such as 30s, 10m or 1h (0 = never)")
	}
	*f.d = d
	return nil
}
