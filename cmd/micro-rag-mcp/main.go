// Command micro-rag-mcp serves semantic search over one folder of documents
// through the Model Context Protocol on stdio. The subcommands search,
// reindex, status and list run the same engine once, for humans at a terminal.
package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"runtime"
	"runtime/debug"
	"slices"
	"syscall"

	"github.com/micro-rag/micro-rag-mcp/internal/term"
)

// version and commit are set at link time by make build and make dist
// (-ldflags "-X main.version=... -X main.commit=..."); otherwise the build
// info's module version and VCS revision are used.
var version, commit = "", ""

func buildVersion() string {
	if version != "" {
		return version
	}
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		return bi.Main.Version
	}
	return "dev"
}

// buildCommit is the commit the binary was built from, or "unknown".
func buildCommit() string {
	if commit != "" {
		return commit
	}
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "vcs.revision" && s.Value != "" {
				return s.Value
			}
		}
	}
	return "unknown"
}

// printVersion answers --version: "micro-rag-mcp VERSION (commit C, GO)".
func printVersion(w io.Writer) {
	fmt.Fprintf(w, "micro-rag-mcp %s (commit %s, %s)\n", buildVersion(), buildCommit(), runtime.Version())
}

// exitError carries an exit status: 2 for usage errors, 1 for the rest,
// unless a command says otherwise (search: 1 is no match alone).
type exitError struct {
	code      int
	err       error
	usage     bool   // the command line is wrong: point at --help
	cmd       string // the command whose --help to point at ("" or the program: the server's)
	showUsage func() // prints the usage after the message, when it helps
}

func (e *exitError) Error() string { return e.err.Error() }

func usageErr(format string, a ...any) error {
	return &exitError{code: 2, err: fmt.Errorf(format, a...), usage: true}
}

// withExitCode gives err the exit status code unless it carries one.
func withExitCode(err error, code int) error {
	var ee *exitError
	if err == nil || errors.Is(err, errHelp) || errors.As(err, &ee) {
		return err
	}
	return &exitError{code: code, err: err}
}

func main() {
	setMemoryLimit()
	os.Exit(run(os.Args[1:], os.Stdin, os.Stdout, os.Stderr))
}

// run is main without os.Exit, so deferred profile writers finish.
func run(args []string, stdin io.Reader, stdout, stderr io.Writer) int {
	ctx, stop := stopOnSignal(stderr)
	defer stop()

	var err error
	cmd := ""
	if len(args) > 0 {
		cmd = args[0]
	}
	switch cmd {
	case "search":
		err = runSearch(ctx, args[1:], stdout, stderr)
	case "reindex":
		err = runReindex(ctx, args[1:], stdout, stderr)
	case "status":
		err = runStatus(ctx, args[1:], stdout, stderr)
	case "list":
		err = runList(ctx, args[1:], stdout, stderr)
	case "help":
		printMainUsage(stdout)
		return 0
	default:
		err = runServe(ctx, args, stdin, stdout, stderr)
	}
	if err == nil || errors.Is(err, errHelp) {
		return 0
	}
	var ee *exitError
	if errors.As(err, &ee) {
		fmt.Fprintf(stderr, "micro-rag-mcp: %s\n", term.Visible(ee.err.Error()))
		if ee.showUsage != nil {
			fmt.Fprintln(stderr)
			ee.showUsage()
		}
		if ee.usage && ee.showUsage == nil {
			help := "micro-rag-mcp --help"
			if ee.cmd != "" && ee.cmd != "micro-rag-mcp" {
				help = "micro-rag-mcp " + ee.cmd + " --help"
			} else if slices.Contains([]string{"search", "reindex", "status", "list"}, cmd) {
				// A flag's value refused by the subcommand: its own help.
				help = "micro-rag-mcp " + cmd + " --help"
			}
			fmt.Fprintf(stderr, "Run '%s' for usage.\n", help)
		}
		return ee.code
	}
	// Errors quote file names and folders: escape what a terminal acts on.
	fmt.Fprintf(stderr, "micro-rag-mcp: %s\n", term.Visible(err.Error()))
	return 1
}

// stopOnSignal returns a context that SIGINT or SIGTERM cancels: the
// command winds down within seconds (a reindex keeps its last commit). A
// second signal exits at once with 128+signal, as a shell reports it; the
// kernel drops index.lock with the process, and the next writer cuts any
// uncommitted tail.
func stopOnSignal(stderr io.Writer) (context.Context, func()) {
	ctx, cancel := context.WithCancel(context.Background())
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	done := make(chan struct{})
	go func() {
		select {
		case sig := <-sigs:
			cancel()
			fmt.Fprintf(stderr, "micro-rag-mcp: %v: stopping; the index keeps its last commit (signal again to exit at once)\n", sig)
		case <-done:
			return
		}
		select {
		case sig := <-sigs:
			fmt.Fprintf(stderr, "micro-rag-mcp: %v again: exiting at once\n", sig)
			code := 130
			if s, ok := sig.(syscall.Signal); ok {
				code = 128 + int(s)
			}
			os.Exit(code)
		case <-done:
		}
	}()
	return ctx, func() {
		signal.Stop(sigs)
		close(done)
		cancel()
	}
}

func printMainUsage(w io.Writer) {
	fmt.Fprint(w, `micro-rag-mcp: local semantic search over a folder, as an MCP server on stdio.

Usage:
  micro-rag-mcp --data-folder DIR --title NAME --inst TEXT [options]   serve MCP on stdio
  micro-rag-mcp search  --data-folder DIR [--top-k N] [--score-threshold X] [--search-mode M] QUERY
  micro-rag-mcp reindex --data-folder DIR [--force] [--path-glob GLOB]
  micro-rag-mcp status  --data-folder DIR
  micro-rag-mcp list    --data-folder DIR [--path-glob GLOB]   the indexed documents

Run 'micro-rag-mcp COMMAND --help' for the options of a command.

`+mainExitNote)
}

// mainExitNote is every command's exit statuses, for help and the server's --help.
const mainExitNote = `Exit status: 0 on success, 2 on a usage error, 1 on any other error (for
status, a damaged index too); but search exits 1 only when no passage
matched, and 2 on any error.
`

func newLogger(w io.Writer, level string) (*slog.Logger, error) {
	var l slog.Level
	if err := l.UnmarshalText([]byte(level)); err != nil {
		return nil, usageErr("--log-level: %q is not one of debug, info, warn, error", level)
	}
	return slog.New(slog.NewTextHandler(w, &slog.HandlerOptions{Level: l})), nil
}
