package main

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/micro-rag/micro-rag-mcp/cmd/micro-rag-mcp/mcpserver"
	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	isearch "github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/bytesize"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
	"github.com/micro-rag/micro-rag-mcp/stages"
)

// defaultIdleRelease is how long a server keeps the model loaded with
// nothing to do (see docs/command-line.md for the measurement behind it).
const defaultIdleRelease = 5 * time.Minute

// runServe is the MCP server on stdio.
func runServe(ctx context.Context, args []string, stdin io.Reader, stdout, stderr io.Writer) error {
	var c common
	var title, inst string
	var watch bool
	var idleRelease time.Duration
	fs := newFlagSet("micro-rag-mcp",
		"micro-rag-mcp --data-folder DIR --title NAME --inst TEXT [options]\n"+
			"  micro-rag-mcp search|reindex|status|list --help", stderr)
	c.register(fs)
	c.registerSearchMode(fs)
	addUsageNote(fs, mainExitNote)
	fs.StringVar(&title, "title", "", "MCP server name shown to clients (required)")
	fs.StringVar(&inst, "inst", "", "MCP instructions sent verbatim to clients (required)")
	fs.BoolVar(&watch, "watch", true, "follow file changes and update the index by itself (--watch=false turns it off)")
	idleRelease = defaultIdleRelease
	fs.Var(idleDuration{&idleRelease}, "idle-release", "give the model's memory back after this `duration` with no search or reindex needing it\n"+
		"(the next search loads it again, in about a second); 0 = never")
	pos, err := parseFlags(fs, args, stdout)
	if err != nil {
		return err
	}
	if c.version {
		printVersion(stdout)
		return nil
	}
	if len(pos) > 0 {
		return withUsage(fs, usageErr("unexpected argument %q (subcommands are search, reindex, status, list)", pos[0]))
	}
	if err := required(fs, "data-folder", "title", "inst"); err != nil {
		return err
	}
	if idleRelease < 0 {
		return usageErr("--idle-release %s is negative: give a duration such as 10m, or 0 to keep the model loaded", idleRelease)
	}
	cfg, log, cleanup, err := c.setup(stderr)
	if err != nil {
		return err
	}
	defer cleanup()
	cfg.Watch = watch
	cfg.IdleRelease = idleRelease

	out := stdout
	if stdout == os.Stdout {
		f, err := protectStdout()
		if err != nil {
			return err
		}
		defer f.Close()
		out = f
	}

	eng, err := engine.New(cfg)
	if err != nil {
		return err
	}
	defer func() {
		if err := eng.Close(); err != nil {
			log.Error("closing engine", "err", err)
		}
	}()
	s := mcpserver.New(eng, mcpserver.Options{
		Name: title, Version: buildVersion(), Instructions: inst, Logger: log, Context: ctx,
	})
	// Start right away: initialize and tools/list are answered while the
	// model loads and the first reindex runs in the background.
	eng.Start(ctx)
	log.Info("serving MCP on stdio", "title", title, "data_folder", cfg.DataFolder, "version", buildVersion())

	err = mcpserver.ServeStdio(ctx, s, stdin, out, log)
	if errors.Is(err, context.Canceled) {
		err = nil // SIGINT/SIGTERM
	}
	log.Info("MCP session ended")
	return err
}

// parseSubcommand parses a human subcommand's flags. done is true when it
// printed the version and there is nothing more to do. Positional arguments
// are a usage error unless takesArgs.
func (c *common) parseSubcommand(fs *flag.FlagSet, args []string, stdout io.Writer, takesArgs bool) (pos []string, done bool, err error) {
	pos, err = parseFlags(fs, args, stdout)
	if err != nil {
		return nil, false, err
	}
	if c.version {
		printVersion(stdout)
		return nil, true, nil
	}
	if err := required(fs, "data-folder"); err != nil {
		return nil, false, err
	}
	if !takesArgs && len(pos) > 0 {
		return nil, false, withUsage(fs, usageErr("unexpected argument %q", pos[0]))
	}
	return pos, false, nil
}

// openSubcommandEngine starts an engine for a human subcommand and waits
// for its model; a read-only engine creates nothing on disk. close
// releases everything.
func (c *common) openSubcommandEngine(ctx context.Context, stderr io.Writer, readOnly bool) (eng *engine.Engine, close func(), err error) {
	cfg, _, cleanup, err := c.setup(stderr)
	if err != nil {
		return nil, nil, err
	}
	cfg.NoInitialReindex, cfg.ReadOnly = true, readOnly
	if eng, err = engine.New(cfg); err != nil {
		cleanup()
		return nil, nil, err
	}
	eng.Start(ctx)
	if err := eng.WaitModel(ctx); err != nil {
		eng.Close()
		cleanup()
		return nil, nil, fmt.Errorf("not ready: %w", err) // the cause names the model or the store
	}
	return eng, func() { eng.Close(); cleanup() }, nil
}

// searchExitNote is search's exit statuses, for its --help.
const searchExitNote = `Exit status: 0 when passages were found, 1 when none matched, 2 on an
error (bad flags, a missing model, a damaged index, ...).
`

func runSearch(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	// 1 means no match alone, so a script can tell it from a failure.
	defer func() { err = withExitCode(err, 2) }()
	var c common
	var topK int
	var threshold float64
	var asJSON, explain bool
	var glob, after, before string
	var exts givenString
	fs := newFlagSet("search", `micro-rag-mcp search --data-folder DIR [--top-k N] [--score-threshold X] [--search-mode M] [--path-glob GLOB] [--ext LIST] [--modified-after T] [--modified-before T] [--explain] [--json] "QUERY"`, stderr)
	addUsageNote(fs, searchExitNote)
	c.register(fs)
	quietByDefault(fs)
	c.registerSearchMode(fs)
	fs.IntVar(&topK, "top-k", isearch.DefaultTopK, "number of passages to show (1-50)")
	fs.Float64Var(&threshold, "score-threshold", isearch.DefaultScoreThreshold, "minimum score (0-1); the score is calibrated in every --search-mode so that at the default a query nothing answers (random letters, an off-topic question) mostly returns nothing: it is discounted when the folder lacks the query's words and, in hybrid mode, when no passage is close to its meaning; 0 returns the top-k whatever they score")
	fs.StringVar(&glob, "path-glob", "", "only search files matching this shell pattern, relative to the data folder (as reindex --path-glob)")
	fs.Var(&exts, "ext", "only search files with these comma-separated `extensions` (md,pdf; noext for files without one)")
	fs.StringVar(&after, "modified-after", "", "only search files modified after this RFC 3339 time (2026-01-31T00:00:00Z)")
	fs.StringVar(&before, "modified-before", "", "only search files modified before this RFC 3339 time")
	fs.BoolVar(&asJSON, "json", false, "print the results as JSON")
	fs.BoolVar(&explain, "explain", false, "show what each score is made of: cosine, keyword score, share of the query's keywords, the query's coverage by the folder's words, the best cosine of any chunk with the query (best; json: support), calibrated score (with --json: an explain object per result)")
	pos, done, err := c.parseSubcommand(fs, args, stdout, true)
	if err != nil || done {
		return err
	}
	query := strings.TrimSpace(strings.Join(pos, " "))
	if query == "" {
		return withUsage(fs, usageErr("search needs a query"))
	}
	// The search tool's arguments, checked as the tool checks them before
	// the model loads.
	call := map[string]any{"query": query, "top_k": float64(topK), "score_threshold": threshold,
		"path_glob": glob, "modified_after": after, "modified_before": before}
	if exts.given { // given empty, it is refused as the tool refuses it
		call["ext"] = exts.value
	}
	if _, err := isearch.ParseArgs(call); err != nil {
		return &exitError{code: 2, err: err, usage: true, cmd: "search"}
	}
	eng, closeEngine, err := c.openSubcommandEngine(ctx, stderr, true)
	if err != nil {
		return err
	}
	defer closeEngine()
	if err := c.searchableIndex(ctx, eng); err != nil {
		return err
	}
	out, err := eng.Answer(ctx, call, explain)
	if err != nil {
		return err
	}
	committed := eng.IndexSummary(ctx)
	if committed.Reindexing {
		// The server's index_state note, for a reindex in another process.
		fmt.Fprintln(stderr, "micro-rag-mcp: note: a reindex is running in another process; search answers from what it has committed so far, so results may be incomplete")
	}
	if asJSON {
		// The search tool's structuredContent, but for the uri (which
		// names a resource of an MCP server) and the index state (the CLI
		// searches no index being built).
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
	} else {
		fmt.Fprintln(stdout, out.Text()) // the tool's text
	}
	if len(out.Results) == 0 {
		// Like grep: exit status 1 when nothing matched.
		return &exitError{code: 1, err: c.whyNoMatch(ctx, eng, out, committed, threshold)}
	}
	return nil
}

// searchableIndex refuses an index the engine could not load: the engine
// serves a damaged index as empty (a server rebuilds it), and "no match"
// would hide the damage.
func (c *common) searchableIndex(ctx context.Context, eng *engine.Engine) error {
	err := eng.IndexErr()
	if err == nil {
		return nil
	}
	dir := eng.Status().IndexFolder
	switch {
	case index.IsDamaged(err):
		return c.unusableIndex(2, dir, "is damaged: "+err.Error())
	case errors.Is(err, index.ErrOtherVersion):
		if built := c.otherModel(eng.IndexSummary(ctx).Model); built != "" {
			// Rebuilding would re-embed every file; the flag costs nothing.
			return &exitError{code: 2, err: fmt.Errorf("the index in %s was built by the model %s, not %s; to search it, add --model %s (to rebuild it with %s instead, run: %s)",
				dir, built, c.model, built, c.model, c.reindexCommand("--force"))}
		}
		return c.unusableIndex(2, dir, "was built by another model or chunking")
	}
	return fmt.Errorf("the index in %s could not be loaded: %w", dir, err)
}

// whyNoMatch says why a search returned nothing, most specific reason first.
func (c *common) whyNoMatch(ctx context.Context, eng *engine.Engine, out isearch.Output, committed index.Summary, threshold float64) error {
	if committed.LastReindex == "" { // never committed
		if committed.Reindexing {
			return errors.New("no passages matched: the index holds no files yet; a reindex in another process is building it, and search finds its files from its first commit (2 s in on an empty index, then a checkpoint every 30 s, or its end)")
		}
		return fmt.Errorf("no passages matched: the index holds no files yet; to build it, run: %s", c.reindexCommand())
	}
	if out.FilteredOut() { // not the folder's answer: the filters passed no file
		return errors.New("no passages matched: no indexed file passes the filters (the note says how many each passes)")
	}
	// Files changed since the last reindex are not searched: say so
	// rather than that the folder lacks an answer. A miss may walk the
	// folder (as status does); a hit never does.
	if st, err := eng.ReadStatus(ctx); err == nil && !committed.Reindexing {
		if n := st.ChangedDisk.New + st.ChangedDisk.Modified; n > 0 {
			are := "are"
			if n == 1 {
				are = "is"
			}
			return fmt.Errorf("no passages matched: none scored %g or more, but %s %s new or changed since the last reindex, not searched yet (%s); to index them, run: %s",
				threshold, engine.Counted(n, "file"), are, term.Visible(strings.Join(st.ChangedDisk.Examples, ", ")), c.reindexCommand())
		}
	}
	return fmt.Errorf("no passages matched: none scored %g or more, so the folder probably does not answer this (--score-threshold 0 shows the closest anyway)", threshold)
}

func runReindex(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	var force, asJSON bool
	var glob string
	fs := newFlagSet("reindex", "micro-rag-mcp reindex --data-folder DIR [--force] [--path-glob GLOB] [--json]", stderr)
	c.register(fs)
	fs.BoolVar(&force, "force", false, "re-extract and re-embed every file")
	fs.StringVar(&glob, "path-glob", "", "only files matching this shell pattern, relative to the data folder")
	fs.BoolVar(&asJSON, "json", false, "print the result as JSON")
	addUsageNote(fs, "Exit status: 0 when done, 1 on any error, 2 on a usage error.\n")
	_, done, err := c.parseSubcommand(fs, args, stdout, false)
	if err != nil || done {
		return err
	}
	if err := checkPathGlob(glob); err != nil {
		return err
	}
	// Log lines go through the bar so they print above it.
	bar := newProgressBar(stderr)
	eng, closeEngine, err := c.openSubcommandEngine(ctx, bar, false)
	if err != nil {
		return err
	}
	defer closeEngine()
	res, err := eng.Reindex(ctx, engine.ReindexRequest{Force: force, PathGlob: glob}, bar.update)
	bar.done()
	var scopeErr *engine.ScopeError
	switch {
	case errors.As(err, &scopeErr):
		return &exitError{code: 2, err: fmt.Errorf("refused: %w", err)}
	case errors.Is(err, engine.ErrBusy):
		return fmt.Errorf("busy: %w", err)
	case err != nil && ctx.Err() != nil:
		return errors.New("reindex interrupted; the index keeps its last commit (a later reindex carries on from there)")
	case err != nil:
		return err
	}
	if asJSON {
		return writeJSON(stdout, res)
	}
	fmt.Fprintf(stdout, "files added:     %d\nfiles updated:   %d\nfiles removed:   %d\nfiles failed:    %d\n",
		res.FilesAdded, res.FilesUpdated, res.FilesRemoved, res.FilesFailed)
	for _, line := range engine.FailLines(res.Failed, res.FilesFailed) {
		fmt.Fprintf(stdout, "  %s\n", line)
	}
	fmt.Fprintf(stdout, "chunks total:    %d\nchunks embedded: %d\nelapsed:         %s\n",
		res.ChunksTotal, res.ChunksEmbedded, (time.Duration(res.ElapsedMS) * time.Millisecond).String())
	if res.FilesTruncated > 0 {
		fmt.Fprintf(stdout, "files truncated: %d\n", res.FilesTruncated)
		for _, line := range engine.FailLines(res.Truncated, res.FilesTruncated) {
			fmt.Fprintf(stdout, "  %s\n", line)
		}
	}
	fmt.Fprintf(stdout, "files skipped:   %d\n", res.FilesSkipped)
	for _, line := range engine.SkipLines(res.Skipped) {
		fmt.Fprintf(stdout, "  %s\n", line)
	}
	fmt.Fprintf(stdout, "extensions:      %s\nexcludes:        %s\n", isearch.ExtList(res.Exts), term.Visible(excludeList(res.Excludes)))
	if res.Note != "" {
		fmt.Fprintf(stdout, "note:            %s\n", term.Visible(res.Note))
	}
	return nil
}

// statusExitNote is status's exit statuses, for its --help.
const statusExitNote = `The index is loaded with the checks a search makes (sizes and checksums of
its files, their agreement, unit-length vectors).

Exit status: 0 when the index is sound or not built yet, 1 when it is
damaged (rebuild it with reindex --force) or on an error, 2 on a usage error.
`

func runStatus(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	eng, cleanup, asJSON, err := c.openReadOnly("status", "micro-rag-mcp status --data-folder DIR [--json]", statusExitNote,
		args, stdout, stderr, nil)
	if err != nil || eng == nil {
		return err
	}
	defer cleanup()
	st, err := eng.ReadStatus(ctx)
	if err != nil {
		return err
	}
	if asJSON {
		err = writeJSON(stdout, st)
	} else {
		err = printStatus(stdout, st)
	}
	if err == nil && st.Integrity == engine.IntegrityDamaged {
		err = c.unusableIndex(1, st.IndexFolder, "is damaged: "+st.Damage)
	}
	if err == nil && st.ScopeDamage != "" {
		err = &exitError{code: 1, err: errors.New(st.ScopeDamage)}
	}
	if err == nil && st.FolderProblem != "" {
		err = &exitError{code: 1, err: errors.New(st.FolderProblem)}
	}
	return err
}

// printStatus writes a status as a table for people.
func printStatus(stdout io.Writer, st engine.Status) error {
	last := "never"
	if !st.LastReindex.IsZero() {
		last = st.LastReindex.Local().Format(time.RFC3339)
	}
	model := cmp.Or(st.Model, "(not indexed yet)")
	ch := st.ChangedDisk
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintf(tw, "data folder:\t%s\n", term.Visible(st.DataFolder))
	if st.Store != "" {
		fmt.Fprintf(tw, "store:\t%s\n", term.Visible(st.Store))
	}
	fmt.Fprintf(tw, "index folder:\t%s\n", term.Visible(st.IndexFolder))
	if st.Integrity == engine.IntegrityDamaged {
		fmt.Fprintf(tw, "integrity:\tDAMAGED: %s\n", term.OneLine(st.Damage, 200))
	} else {
		fmt.Fprintf(tw, "integrity:\t%s (file sizes and checksums, their agreement, vector lengths)\n", st.Integrity)
	}
	fmt.Fprintf(tw, "files:\t%d\n", st.Files)
	fmt.Fprintf(tw, "chunks:\t%d\n", st.Chunks)
	fmt.Fprintf(tw, "tombstones:\t%d\n", st.Tombstones)
	fmt.Fprintf(tw, "model:\t%s\n", term.Visible(model))
	fmt.Fprintf(tw, "index size:\t%s\n", st.IndexSize())
	if st.VectorIndex != "" {
		fmt.Fprintf(tw, "vector index:\t%s\n", st.VectorIndex)
	}
	fmt.Fprintf(tw, "last reindex:\t%s\n", last)
	if st.Reindexing {
		fmt.Fprintf(tw, "reindex running:\tyes, in another process: the figures above are its last commit, and search answers from them until it ends\n")
	}
	fmt.Fprintf(tw, "extensions:\t%s\n", isearch.ExtList(st.Exts))
	if st.ScopeDamage != "" {
		fmt.Fprintf(tw, "scope record:\tDAMAGED (see below)\n")
	}
	fmt.Fprintf(tw, "excludes:\t%s\n", term.Visible(excludeList(st.Excludes)))
	if st.LastRunError != "" {
		fmt.Fprintf(tw, "last run failed:\t%s\n", term.OneLine(st.LastRunError, 240))
	}
	if st.FolderProblem != "" {
		fmt.Fprintf(tw, "data folder record:\tREINDEX REFUSED: %s\n", term.OneLine(st.FolderProblem, 400))
	}
	if st.LastRunDamage != "" {
		fmt.Fprintf(tw, "last run record:\tDAMAGED: %s\n", term.OneLine(st.LastRunDamage, 240))
	}
	fmt.Fprintf(tw, "changed on disk since:\t%d new, %d modified, %d deleted\n", ch.New, ch.Modified, ch.Deleted)
	for _, p := range ch.Examples {
		fmt.Fprintf(tw, "\t  %s\n", term.Visible(p))
	}
	fmt.Fprintf(tw, "not indexed:\t%d\n", stages.SkipTotal(st.Skipped))
	for _, line := range engine.SkipLines(st.Skipped) {
		fmt.Fprintf(tw, "\t  %s\n", line)
	}
	fmt.Fprintf(tw, "failed files:\t%d\n", len(st.Failed))
	for _, f := range st.Failed {
		fmt.Fprintf(tw, "\t  %s: %s\n", term.Visible(f.Path), term.OneLine(f.Reason, 120))
	}
	fmt.Fprintf(tw, "links leading outside:\t%d (not followed)\n", st.LinksOutside)
	fmt.Fprintf(tw, "truncated files:\t%d\n", len(st.Truncated))
	for _, f := range st.Truncated {
		fmt.Fprintf(tw, "\t  %s: %s\n", term.Visible(f.Path), term.OneLine(f.Reason, 240))
	}
	return tw.Flush()
}

// excludeList is --exclude patterns for people.
func excludeList(p []string) string {
	if len(p) == 0 {
		return "(none)"
	}
	return strings.Join(p, " ")
}

// unusableIndex says that the index in dir cannot serve a search, with
// problem saying why ("is damaged: ..."), and how to rebuild it; code is
// the exit status.
func (c *common) unusableIndex(code int, dir, problem string) error {
	return &exitError{code: code, err: fmt.Errorf("the index in %s %s; search will not use it until it is rebuilt. To fix, run: %s",
		dir, problem, c.reindexCommand("--force"))}
}

// otherModel is the name of the known model that built an index (recorded
// as "NAME sha256:…") when it is not the one these flags choose, else "".
func (c *common) otherModel(recorded string) string {
	name, _, _ := strings.Cut(recorded, " ")
	if c.modelDir != "" || name == "" || name == c.model || engine.CheckModel(name) != nil {
		return ""
	}
	return name
}

// reindexCommand is the reindex command line for this index, with extra
// flags before the folder.
func (c *common) reindexCommand(extra ...string) string {
	args := append(append([]string{"micro-rag-mcp", "reindex"}, extra...), "--data-folder", engine.ShellQuote(c.dataFolder))
	if c.indexFolder != "" {
		args = append(args, "--index-folder", engine.ShellQuote(c.indexFolder))
	}
	if c.store != "" {
		args = append(args, "--store", engine.ShellQuote(index.RedactURL(c.store)))
	}
	if c.model != engine.DefaultModel {
		args = append(args, "--model", engine.ShellQuote(c.model))
	}
	return strings.Join(args, " ")
}

// writeJSON prints v as indented JSON that is safe on a terminal (VisibleJSON).
func writeJSON(w io.Writer, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return err
	}
	_, err = w.Write(append(term.VisibleJSON(b), '\n'))
	return err
}

// openReadOnly parses the flags of a command that reads the index files
// alone (no model, no ONNX Runtime): the common ones, what addFlags adds,
// and --json; eng is read-only and never started. eng is nil when there is
// nothing more to do (--help); cleanup stops the profilers.
func (c *common) openReadOnly(name, synopsis, note string, args []string, stdout, stderr io.Writer,
	addFlags func(*flag.FlagSet)) (eng *engine.Engine, cleanup func(), asJSON bool, err error) {
	fs := newFlagSet(name, synopsis, stderr)
	addUsageNote(fs, note)
	c.register(fs)
	quietByDefault(fs)
	if addFlags != nil {
		addFlags(fs)
	}
	fs.BoolVar(&asJSON, "json", false, "print the "+name+" as JSON")
	_, done, err := c.parseSubcommand(fs, args, stdout, false)
	if err != nil || done {
		return nil, nil, false, err
	}
	cfg, _, cleanup, err := c.setup(stderr)
	if err != nil {
		return nil, nil, false, err
	}
	cfg.ReadOnly, cfg.NoInitialReindex = true, true
	if eng, err = engine.New(cfg); err != nil {
		cleanup()
		return nil, nil, false, err
	}
	return eng, cleanup, asJSON, nil
}

func runList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var c common
	var glob string
	eng, cleanup, asJSON, err := c.openReadOnly("list", "micro-rag-mcp list --data-folder DIR [--path-glob GLOB] [--json]",
		"Lists the documents in the index, from its files alone (no model).\n\n"+
			"Exit status: 0 on success, 1 on any error, 2 on a usage error.\n", args, stdout, stderr, func(fs *flag.FlagSet) {
			fs.StringVar(&glob, "path-glob", "", "only documents matching this shell pattern, relative to the data folder")
		})
	if err != nil || eng == nil {
		return err
	}
	defer cleanup()
	if err := checkPathGlob(glob); err != nil {
		return err
	}
	docs, err := eng.ListFiles(glob)
	if index.IsDamaged(err) {
		return c.unusableIndex(1, eng.Status().IndexFolder, "is damaged: "+err.Error())
	}
	if err != nil {
		return err
	}
	if len(docs) == 0 && glob == "" {
		// As search says it: an empty list is no reindex yet, not an empty folder.
		if s := eng.IndexSummary(ctx); s.LastReindex == "" && !s.Reindexing {
			fmt.Fprintf(stderr, "micro-rag-mcp: note: the index holds no files yet; to build it, run: %s\n", c.reindexCommand())
		}
	}
	if asJSON {
		return writeJSON(stdout, map[string]any{"documents": docs})
	}
	tw := tabwriter.NewWriter(stdout, 0, 0, 2, ' ', 0)
	fmt.Fprintln(tw, "CHUNKS\tSIZE\tMODIFIED\tPATH")
	chunks := 0
	for _, d := range docs {
		chunks += d.Chunks
		mod := time.Unix(0, int64(d.Mtime*1e9)).Local().Format("2006-01-02 15:04")
		fmt.Fprintf(tw, "%d\t%s\t%s\t%s\n", d.Chunks, bytesize.Format(d.Size), mod, term.Visible(d.Path))
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s, %s\n", engine.Counted(len(docs), "document"), engine.Counted(chunks, "chunk"))
	return err
}
