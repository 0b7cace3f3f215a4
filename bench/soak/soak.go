// Package soak runs several micro-rag-mcp processes on one PostgreSQL index
// under mixed load: two servers over stdio MCP answer searches and
// resources/read without pause, a reindexer (the CLI, a third process)
// runs in a loop, and a writer adds, modifies, deletes and renames files
// in the data folder. It counts errors, checks that a planted phrase
// becomes findable on both servers without a restart and that a second
// concurrent reindex is answered busy, and at the end compares the index
// with a clean rebuild of the same folder. bench/cmd/soak runs it for
// minutes; a short run is a test.
package soak

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/bench/corpus"
	"github.com/micro-rag/micro-rag-mcp/internal/mcpcall"
)

// Config says what to run.
type Config struct {
	Bin      string        // the built server, bin/micro-rag-mcp
	Store    string        // postgres://… of a database the processes share
	Dir      string        // work folder: data/, index folders, logs
	Duration time.Duration // of the mixed load
	Stable   int           // files the writer never touches (default 40)
	Seed     uint64
	// WriteEvery, ReindexEvery, PlantEvery and BusyEvery pace the writer,
	// the reindexer loop, planted phrases and busy checks.
	WriteEvery, ReindexEvery, PlantEvery, BusyEvery time.Duration
	// PlantTimeout is how long a planted phrase may take to be found on
	// both servers before it counts as a failure.
	PlantTimeout time.Duration
	// FinalQueries is how many of Queries the final check asks in every
	// mode (0: all): each is a CLI process loading the model.
	FinalQueries int
	Log          io.Writer // progress lines; nil: none
}

func (c *Config) defaults() {
	c.Stable = cmp.Or(c.Stable, 40)
	c.WriteEvery = cmp.Or(c.WriteEvery, 400*time.Millisecond)
	c.ReindexEvery = cmp.Or(c.ReindexEvery, 2*time.Second)
	c.PlantEvery = cmp.Or(c.PlantEvery, 10*time.Second)
	c.BusyEvery = cmp.Or(c.BusyEvery, 30*time.Second)
	c.PlantTimeout = cmp.Or(c.PlantTimeout, 90*time.Second)
	if c.FinalQueries <= 0 || c.FinalQueries > len(Queries) {
		c.FinalQueries = len(Queries)
	}
	if c.Log == nil {
		c.Log = io.Discard
	}
}

// Run runs the soak and returns its report; err is a failure to run it at
// all (a server that does not start), not a failed check: those are in
// the report (Report.Failures).
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	r := &Report{Duration: cfg.Duration, start: time.Now()}
	s := &soak{cfg: cfg, rep: r, rng: rand.New(rand.NewPCG(cfg.Seed, 7))}
	s.data = filepath.Join(cfg.Dir, "data")
	if err := s.seed(); err != nil {
		return nil, err
	}
	// The first build, by the CLI: the servers start on a full index.
	t := time.Now()
	if out, err := s.cli(ctx, "reindex", "idx-reindexer", cfg.Store); err != nil {
		return nil, fmt.Errorf("soak: first reindex: %w: %s", err, out)
	}
	r.FirstBuild = time.Since(t)
	for i := range 2 {
		srv, err := s.startServer(ctx, i)
		if err != nil {
			return nil, err
		}
		defer srv.c.Close()
		s.servers = append(s.servers, srv)
	}
	fmt.Fprintf(cfg.Log, "soak: %d files indexed in %s; two servers up; mixed load for %s\n", s.cfg.Stable+len(s.churn), r.FirstBuild.Round(time.Millisecond), cfg.Duration)

	load, stop := context.WithTimeout(ctx, cfg.Duration)
	defer stop()
	var wg sync.WaitGroup
	run := func(f func(context.Context)) { wg.Add(1); go func() { defer wg.Done(); f(load) }() }
	run(s.writer)
	run(s.reindexer)
	run(s.busyChecker)
	for _, srv := range s.servers {
		run(func(ctx context.Context) { s.searcher(ctx, srv) })
	}
	run(s.progress)
	wg.Wait()
	s.plants.Wait()
	if ctx.Err() != nil {
		return nil, ctx.Err()
	}
	if s.rep.Busy.Tool.Busy.Load()+s.rep.Busy.Tool.Missed.Load() == 0 {
		s.busyAfterLoad(ctx)
	}
	s.final(ctx)
	for _, srv := range s.servers {
		r.ServerLogErrors += srv.logErrors()
	}
	return r, nil
}

type soak struct {
	cfg     Config
	rep     *Report
	data    string
	servers []*server

	mu      sync.Mutex // guards rng, churn, seq, held and the writer's files
	rng     *rand.Rand
	churn   []string        // churn/ files the writer may change
	held    map[string]bool // planted files not yet found on both servers
	seq     int
	plantN  int
	plants  sync.WaitGroup
	plantMu sync.Mutex
	tokens  []string // planted tokens found, asked again by the searchers
}

// seed writes the stable files and a first set of churn files.
func (s *soak) seed() error {
	for i := range s.cfg.Stable {
		p := filepath.Join(s.data, "stable", fmt.Sprintf("s%03d.md", i))
		if err := corpus.WriteFile(p, []byte(document(s.rng, i%len(topics), 8+s.rng.IntN(25)))); err != nil {
			return err
		}
	}
	for range 20 {
		if _, err := s.addChurn(""); err != nil {
			return err
		}
	}
	s.held = map[string]bool{}
	return nil
}

// addChurn writes a new churn file, with extra text appended; the caller
// holds no lock.
func (s *soak) addChurn(extra string) (string, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.seq++
	rel := fmt.Sprintf("churn/c%05d.md", s.seq)
	text := document(s.rng, s.rng.IntN(len(topics)), 4+s.rng.IntN(20)) + extra
	if err := corpus.WriteFile(filepath.Join(s.data, rel), []byte(text)); err != nil {
		return "", err
	}
	s.churn = append(s.churn, rel)
	return rel, nil
}

// writer changes one churn file at a time: add, modify, delete, rename,
// and every PlantEvery adds a file holding a new made-up word.
func (s *soak) writer(ctx context.Context) {
	tick := time.NewTicker(s.cfg.WriteEvery)
	defer tick.Stop()
	lastPlant := time.Now()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
		}
		if time.Since(lastPlant) >= s.cfg.PlantEvery {
			lastPlant = time.Now()
			s.plant(ctx)
			continue
		}
		if err := s.change(); err != nil {
			s.rep.fail("writer: %v", err)
			return
		}
	}
}

func (s *soak) change() error {
	s.mu.Lock()
	n := len(s.churn)
	op := s.rng.IntN(4)
	switch {
	case n < 10:
		op = 0
	case n > 40:
		op = 2
	}
	var pick string
	var at int
	if n > 0 {
		at = s.rng.IntN(n)
		pick = s.churn[at]
		if s.held[pick] {
			op = 0
		}
	}
	s.mu.Unlock()
	switch op {
	case 0:
		s.rep.Writes.Add.Add(1)
		_, err := s.addChurn("")
		return err
	case 1:
		s.rep.Writes.Modify.Add(1)
		s.mu.Lock()
		text := document(s.rng, s.rng.IntN(len(topics)), 4+s.rng.IntN(20))
		s.mu.Unlock()
		return corpus.WriteFile(filepath.Join(s.data, pick), []byte(text))
	case 2:
		s.rep.Writes.Delete.Add(1)
		s.mu.Lock()
		s.churn = slices.Delete(s.churn, at, at+1)
		s.mu.Unlock()
		return os.Remove(filepath.Join(s.data, pick))
	default:
		s.rep.Writes.Rename.Add(1)
		s.mu.Lock()
		s.seq++
		to := fmt.Sprintf("churn/r%05d.md", s.seq)
		s.churn[at] = to
		s.mu.Unlock()
		return os.Rename(filepath.Join(s.data, pick), filepath.Join(s.data, to))
	}
}

// plant adds a file with a word nothing else holds and waits in the
// background until both servers find it; the writer leaves the file alone
// until then.
func (s *soak) plant(ctx context.Context) {
	s.mu.Lock()
	s.plantN++
	tok := plantToken(s.plantN)
	s.mu.Unlock()
	rel, err := s.addChurn(fmt.Sprintf("\nThe harbour master wrote %s in the log book.\n", tok))
	if err != nil {
		s.rep.fail("plant: %v", err)
		return
	}
	s.mu.Lock()
	s.held[rel] = true
	s.mu.Unlock()
	s.rep.Plants.Planted.Add(1)
	at := time.Now()
	s.plants.Add(1)
	go func() {
		defer s.plants.Done()
		defer func() { s.mu.Lock(); delete(s.held, rel); s.mu.Unlock() }()
		// The plant's own deadline outlives the load, so the last ones
		// are still waited for.
		wait, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.PlantTimeout)
		defer cancel()
		found := make([]bool, len(s.servers))
		for {
			all := true
			for i, srv := range s.servers {
				if !found[i] {
					hits, err := srv.search(wait, tok, 3)
					found[i] = err == nil && slices.ContainsFunc(hits, func(h hit) bool { return h.Path == rel })
				}
				all = all && found[i]
			}
			if all {
				s.rep.Plants.found.count(time.Since(at), nil)
				s.plantMu.Lock()
				s.tokens = append(s.tokens, tok)
				s.plantMu.Unlock()
				return
			}
			if !sleep(wait, 250*time.Millisecond) {
				s.rep.fail("planted %q in %s: not found on every server within %s (found %v)", tok, rel, s.cfg.PlantTimeout, found)
				return
			}
		}
	}()
}

// reindexer runs the CLI's reindex in a loop, as a cron job would.
func (s *soak) reindexer(ctx context.Context) {
	for sleep(ctx, s.cfg.ReindexEvery) {
		out, err := s.cli(ctx, "reindex", "idx-reindexer", s.cfg.Store)
		switch {
		case ctx.Err() != nil:
			return
		case err == nil:
			s.rep.Reindex.OK.Add(1)
		case isBusy(out):
			s.rep.Reindex.Busy.Add(1)
		default:
			s.rep.Reindex.Errors.Add(1)
			s.rep.fail("reindexer: %v: %s", err, out)
		}
	}
}

// busyChecker starts a forced reindex (the CLI, a process of its own)
// and, once that process holds the index's advisory lock, asks for a
// second reindex from each server (the reindex tool) and from another
// CLI process: each must be answered busy. One that asks after the lock
// was let go runs instead (Missed): the CLI takes a second or two to load
// the model before it asks. A forced reindex that never held the lock
// (answered busy itself, by the reindexer loop or a server's update) is
// tried again soon, so a short soak under load still gets its checks.
func (s *soak) busyChecker(ctx context.Context) {
	wait := s.cfg.BusyEvery
	for sleep(ctx, wait) {
		wait = s.cfg.BusyEvery
		if !s.busyOnce(ctx) {
			wait = 250 * time.Millisecond
		}
	}
}

// busyAfterLoad makes the busy check once the mixed load is over, when it
// was never made during it: on a loaded machine the servers' updates after
// the writer's changes can hold the lock whenever a forced reindex asks for
// it; with the writer stopped the forced one takes it.
func (s *soak) busyAfterLoad(ctx context.Context) {
	ctx, cancel := context.WithTimeout(ctx, 3*time.Minute)
	defer cancel()
	for ctx.Err() == nil && !s.busyOnce(ctx) {
		sleep(ctx, 250*time.Millisecond)
	}
}

// busyApp names the forced reindex's connections (application_name), to
// tell its lock from the servers' own updates.
const busyApp = "micro-rag-soak-busy"

// busyOnce reports whether the second reindexes were asked while the
// forced one held the lock.
func (s *soak) busyOnce(ctx context.Context) (checked bool) {
	first := exec.CommandContext(ctx, s.cfg.Bin, s.cliArgs("reindex", "idx-busy-a", s.cfg.Store, "--force")...)
	first.Env = append(os.Environ(), "PGAPPNAME="+busyApp)
	var firstOut strings.Builder
	first.Stdout, first.Stderr = &firstOut, &firstOut
	if err := first.Start(); err != nil {
		s.rep.fail("busy check: %v", err)
		return false
	}
	var finished atomic.Bool
	done := make(chan error, 1)
	go func() { err := first.Wait(); finished.Store(true); done <- err }()
	defer func() {
		err := <-done
		switch {
		case ctx.Err() != nil:
		case err == nil:
			s.rep.Reindex.OK.Add(1)
		case isBusy(firstOut.String()):
			s.rep.Reindex.Busy.Add(1)
		default:
			s.rep.Reindex.Errors.Add(1)
			s.rep.fail("busy check, forced reindex: %v: %s", err, firstOut.String())
		}
	}()
	for !finished.Load() {
		if !sleep(ctx, 20*time.Millisecond) {
			return false
		}
		held, err := s.lockHeld(ctx, busyApp)
		if err != nil {
			if ctx.Err() == nil {
				s.rep.fail("busy check: %v", err)
			}
			return false
		}
		if !held {
			continue
		}
		var wg sync.WaitGroup
		for _, srv := range s.servers {
			wg.Go(func() {
				busy, err := srv.reindex(ctx)
				s.busyAnswer(ctx, &s.rep.Busy.Tool, busy, err, fmt.Sprintf("server %d's reindex tool", srv.n))
			})
		}
		out, err := s.cli(ctx, "reindex", "idx-busy-b", s.cfg.Store)
		s.busyAnswer(ctx, &s.rep.Busy.CLI, err != nil && isBusy(out), func() error {
			if err != nil && !isBusy(out) {
				return fmt.Errorf("%w: %s", err, out)
			}
			return nil
		}(), "a second CLI reindex")
		wg.Wait()
		return true
	}
	return false
}

func (s *soak) busyAnswer(ctx context.Context, c *busyCount, busy bool, err error, who string) {
	switch {
	case ctx.Err() != nil:
	case err != nil:
		s.rep.Reindex.Errors.Add(1)
		s.rep.fail("busy check, %s: %v", who, err)
	case busy:
		c.Busy.Add(1)
	default:
		c.Missed.Add(1)
	}
}

// sleep waits d; false means ctx ended first.
func sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}

func isBusy(out string) bool { return strings.Contains(out, "busy:") }

// cli runs a subcommand on the data folder with its own index folder
// (which keeps only scope and last-run notes with a database store).
func (s *soak) cli(ctx context.Context, sub, indexName, store string, extra ...string) (string, error) {
	out, err := exec.CommandContext(ctx, s.cfg.Bin, s.cliArgs(sub, indexName, store, extra...)...).CombinedOutput()
	return string(out), err
}

func (s *soak) cliArgs(sub, indexName, store string, extra ...string) []string {
	return append([]string{sub, "--data-folder", s.data, "--index-folder", filepath.Join(s.cfg.Dir, indexName),
		"--store", store, "--log-level", "warn"}, extra...)
}

// progress prints a line every 30 s.
func (s *soak) progress(ctx context.Context) {
	for sleep(ctx, 30*time.Second) {
		fmt.Fprintf(s.cfg.Log, "soak: %s %s\n", time.Since(s.rep.start).Round(time.Second), s.rep.brief())
	}
}

// searcher asks one server without pause: a search (a fixed query or a
// planted word), resources/read of its best chunk, and now and then of the
// whole document and a reindex call.
func (s *soak) searcher(ctx context.Context, srv *server) {
	for n := 0; ctx.Err() == nil; n++ {
		q := Queries[n%len(Queries)]
		s.plantMu.Lock()
		if len(s.tokens) > 0 && n%3 == 0 {
			q = s.tokens[n%len(s.tokens)]
		}
		s.plantMu.Unlock()
		t := time.Now()
		hits, err := srv.search(ctx, q, 5)
		if ctx.Err() != nil {
			return
		}
		s.rep.Search.count(time.Since(t), err)
		if err != nil {
			s.rep.fail("server %d: search %q: %v", srv.n, q, err)
			continue
		}
		if len(hits) == 0 {
			continue
		}
		uri := hits[0].URI
		if n%5 == 4 {
			uri, _, _ = strings.Cut(uri, "#")
		}
		t = time.Now()
		err = srv.read(ctx, uri)
		if ctx.Err() != nil {
			return
		}
		switch {
		case err != nil && strings.Contains(err.Error(), "resource not found") && strings.HasPrefix(hits[0].Path, "churn/"):
			// The writer removed, renamed or shortened the file between
			// the search and the read: the documented not-found.
			s.rep.Read.Gone.Add(1)
		default:
			s.rep.Read.count(time.Since(t), err)
			if err != nil {
				s.rep.fail("server %d: read %s: %v", srv.n, uri, err)
			}
		}
		if n%50 == 49 {
			busy, err := srv.reindex(ctx)
			if ctx.Err() != nil {
				return
			}
			switch {
			case err != nil:
				s.rep.Reindex.Errors.Add(1)
				s.rep.fail("server %d: reindex tool: %v", srv.n, err)
			case busy:
				s.rep.Reindex.Busy.Add(1)
			default:
				s.rep.Reindex.OK.Add(1)
			}
		}
	}
}

// server is one micro-rag-mcp process over stdio.
type server struct {
	n   int
	c   *client.Client
	log string
}

type hit struct {
	Path       string  `json:"path"`
	ChunkIndex int     `json:"chunk_index"`
	Score      float64 `json:"score"`
	URI        string  `json:"uri"`
}

func (s *soak) startServer(ctx context.Context, n int) (*server, error) {
	logPath := filepath.Join(s.cfg.Dir, fmt.Sprintf("server%d.log", n))
	logf, err := os.Create(logPath)
	if err != nil {
		return nil, err
	}
	args := []string{"--data-folder", s.data, "--index-folder", filepath.Join(s.cfg.Dir, fmt.Sprintf("idx-server%d", n)),
		"--store", s.cfg.Store, "--title", "soak", "--inst", "Generated notes on ten topics.", "--log-level", "warn"}
	c, err := client.NewStdioMCPClientWithOptions(s.cfg.Bin, nil, args, transport.WithCommandStderrWriter(logf))
	if err != nil {
		return nil, fmt.Errorf("soak: start server %d: %w", n, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "micro-rag-soak", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("soak: initialize server %d: %w", n, err)
	}
	return &server{n: n, c: c, log: logPath}, nil
}

// search asks with score_threshold 0, so a ranking is compared whatever
// the calibration says of its scores.
func (srv *server) search(ctx context.Context, q string, k int) ([]hit, error) {
	res, err := mcpcall.Tool(ctx, srv.c, "search", map[string]any{"query": q, "top_k": k, "score_threshold": 0})
	if err != nil {
		return nil, err
	}
	if res.IsError {
		return nil, fmt.Errorf("tool error: %s", mcpcall.Text(res))
	}
	var out struct {
		Results []hit `json:"results"`
	}
	if err := mcpcall.Decode(res.StructuredContent, &out); err != nil {
		return nil, err
	}
	return out.Results, nil
}

func (srv *server) read(ctx context.Context, uri string) error {
	req := mcp.ReadResourceRequest{}
	req.Params.URI = uri
	res, err := srv.c.ReadResource(ctx, req)
	if err == nil && len(res.Contents) == 0 {
		err = errors.New("no contents")
	}
	return err
}

// reindex calls the reindex tool; busy is the documented answer while
// another process writes.
func (srv *server) reindex(ctx context.Context) (busy bool, err error) {
	res, err := mcpcall.Tool(ctx, srv.c, "reindex", map[string]any{})
	if err != nil {
		return false, err
	}
	if res.IsError {
		if strings.HasPrefix(mcpcall.Text(res), "busy") {
			return true, nil
		}
		return false, fmt.Errorf("tool error: %s", mcpcall.Text(res))
	}
	return false, nil
}

// logErrors counts the ERROR lines of the server's log.
func (srv *server) logErrors() int {
	b, _ := os.ReadFile(srv.log)
	return strings.Count(string(b), "level=ERROR")
}
