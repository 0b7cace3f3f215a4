package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/client"
	"github.com/mark3labs/mcp-go/client/transport"
	"github.com/mark3labs/mcp-go/mcp"

	"github.com/micro-rag/micro-rag-mcp/internal/mcpcall"
)

// Server says how to start the built server for one mode.
type Server struct {
	Bin    string // bin/micro-rag-mcp
	Data   string // the corpus folder
	Index  string // the index folder, shared by every mode
	Mode   string // value of --search-mode; "" runs the server's default
	Model  string // value of --model; "" runs the server's default
	Inst   string // --inst: what the folder holds, as a client is told
	Store  string // value of --store; "" keeps the index in Index
	Args   Setting
	Stderr io.Writer
}

// Setting is the search arguments every question is asked with besides
// its query; the zero Setting leaves them all to the server's defaults.
type Setting struct {
	Name      string   // as the report shows it
	TopK      int      // 0 sends no top_k
	Threshold *float64 // nil sends no score_threshold
}

var zero = 0.0

// Ranking asks for the 10 best whatever they score: the order alone.
// Defaults asks as a user's client does, with the query alone.
var (
	Ranking  = Setting{Name: "top_k 10, threshold 0", TopK: 10, Threshold: &zero}
	Defaults = Setting{Name: "default top_k and threshold"}
)

// arguments are the search tool's arguments for query.
func (st Setting) arguments(query string) map[string]any {
	args := map[string]any{"query": query}
	if st.TopK > 0 {
		args["top_k"] = st.TopK
	}
	if st.Threshold != nil {
		args["score_threshold"] = *st.Threshold
	}
	return args
}

// SearchModes is modes, or only the server's default when the binary has
// no --search-mode flag (another build, by its --help output).
func SearchModes(ctx context.Context, bin string, modes []string) ([]string, error) {
	out, err := exec.CommandContext(ctx, bin, "--help").CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("eval: %s --help: %v: %s", bin, err, out)
	}
	if !strings.Contains(string(out), "-search-mode") {
		slog.Warn("the server has no --search-mode flag; only its default (dense) search is measured")
		return []string{""}, nil
	}
	return modes, nil
}

// Run starts the server over stdio, waits for its index to be up to date,
// and asks every question with s.Args.
func (s Server) Run(ctx context.Context, qs []Question) ([]Outcome, error) {
	c, err := s.start(ctx)
	if err != nil {
		return nil, err
	}
	defer c.Close()
	if err := waitIndexed(ctx, c); err != nil {
		return nil, err
	}
	var outs []Outcome
	for _, q := range qs {
		o, err := s.ask(ctx, c, q)
		if err != nil {
			return nil, err
		}
		outs = append(outs, o)
	}
	return outs, nil
}

// start runs the server with s's flags and initialises the MCP session.
func (s Server) start(ctx context.Context) (*client.Client, error) {
	args := []string{"--data-folder", s.Data, "--index-folder", s.Index, "--title", "eval",
		"--inst", s.Inst, "--log-level", "warn"}
	for _, f := range [][2]string{{"--search-mode", s.Mode}, {"--model", s.Model}, {"--store", s.Store}} {
		if f[1] != "" {
			args = append(args, f[0], f[1])
		}
	}
	var opts []transport.StdioOption
	if s.Stderr != nil {
		opts = append(opts, transport.WithCommandStderrWriter(s.Stderr))
	}
	c, err := client.NewStdioMCPClientWithOptions(s.Bin, nil, args, opts...)
	if err != nil {
		return nil, fmt.Errorf("eval: start %s: %w", s.Bin, err)
	}
	init := mcp.InitializeRequest{}
	init.Params.ProtocolVersion = mcp.LATEST_PROTOCOL_VERSION
	init.Params.ClientInfo = mcp.Implementation{Name: "micro-rag-eval", Version: "1"}
	if _, err := c.Initialize(ctx, init); err != nil {
		c.Close()
		return nil, fmt.Errorf("eval: initialize: %w", err)
	}
	return c, nil
}

// waitIndexed returns once the server's index is current and no corpus
// file failed. The server indexes by itself at start; a reindex call
// retried while it is busy returns once the index is current.
func waitIndexed(ctx context.Context, c *client.Client) error {
	for {
		res, err := mcpcall.Tool(ctx, c, "reindex", map[string]any{})
		if err != nil {
			return fmt.Errorf("eval: reindex: %w", err)
		}
		if res.IsError && strings.HasPrefix(mcpcall.Text(res), "busy") {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(250 * time.Millisecond):
			}
			continue
		}
		if res.IsError {
			return fmt.Errorf("eval: reindex: %s", mcpcall.Text(res))
		}
		var rr struct {
			FilesFailed int `json:"files_failed"`
		}
		if err := mcpcall.Decode(res.StructuredContent, &rr); err != nil {
			return fmt.Errorf("eval: reindex result: %w", err)
		}
		if rr.FilesFailed > 0 {
			return fmt.Errorf("eval: %d corpus files failed to index: %s", rr.FilesFailed, mcpcall.Text(res))
		}
		return nil
	}
}

// ask runs one question's search with s.Args; hit paths are made
// relative to the corpus folder, and so are the text's result blocks.
func (s Server) ask(ctx context.Context, c *client.Client, q Question) (Outcome, error) {
	start := time.Now()
	res, err := mcpcall.Tool(ctx, c, "search", s.Args.arguments(q.Query))
	lat := time.Since(start)
	if err != nil {
		return Outcome{}, fmt.Errorf("eval: search %s: %w", q.ID, err)
	}
	if res.IsError {
		return Outcome{}, fmt.Errorf("eval: search %s: %s", q.ID, mcpcall.Text(res))
	}
	var out struct {
		Results []struct {
			Path       string `json:"path"`
			Snippet    string `json:"snippet"`
			ChunkIndex int    `json:"chunk_index"`
			CharStart  int    `json:"char_start"`
			CharEnd    int    `json:"char_end"`
		} `json:"results"`
	}
	if err := mcpcall.Decode(res.StructuredContent, &out); err != nil {
		return Outcome{}, fmt.Errorf("eval: search %s result: %w", q.ID, err)
	}
	structured, err := json.Marshal(res.StructuredContent)
	if err != nil {
		return Outcome{}, fmt.Errorf("eval: search %s result: %w", q.ID, err)
	}
	o := Outcome{Question: q, Latency: lat, Text: mcpcall.Text(res), Structured: string(structured)}
	var cited []string
	for _, r := range out.Results {
		o.Hits = append(o.Hits, Hit{Path: s.relative(r.Path), ChunkIndex: r.ChunkIndex,
			CharStart: r.CharStart, CharEnd: r.CharEnd, Text: r.Snippet})
		cited = append(cited, r.Path)
	}
	o.TextBlocks = TextBlocks(o.Text, cited)
	for i := range o.TextBlocks {
		o.TextBlocks[i].Path = s.relative(o.TextBlocks[i].Path)
	}
	return o, nil
}

// relative is p relative to the corpus folder when the server gave it
// absolute, with forward slashes.
func (s Server) relative(p string) string {
	if data, err := filepath.Abs(s.Data); err == nil && filepath.IsAbs(p) {
		if rel, err := filepath.Rel(data, p); err == nil {
			p = rel
		}
	}
	return filepath.ToSlash(p)
}

// IndexChunks reads the live chunks of the server's index, in its folder
// or its store.
func (s Server) IndexChunks(ctx context.Context) (map[string][]chunk, error) {
	if s.Store != "" {
		return StoreChunks(ctx, s.Store, s.Data)
	}
	return Chunks(s.Index)
}

// chunk is the part of a manifest.jsonl record the evaluation reads.
type chunk struct {
	ID         int64  `json:"id"`
	Path       string `json:"path"`
	ChunkIndex int    `json:"chunk_index"`
	CharStart  int    `json:"char_start"`
	CharEnd    int    `json:"char_end"`
	Text       string `json:"text"`
	Deleted    bool   `json:"deleted"`
}

// Chunks reads the live chunks of an index folder's manifest.jsonl, by
// path, in chunk order. A tombstone removes the record with its id.
func Chunks(indexDir string) (map[string][]chunk, error) {
	f, err := os.Open(filepath.Join(indexDir, "manifest.jsonl"))
	if err != nil {
		return nil, fmt.Errorf("eval: %w", err)
	}
	defer f.Close()
	live := map[int64]chunk{}
	r := bufio.NewReader(f)
	for {
		line, err := r.ReadBytes('\n')
		if len(line) > 0 && line[len(line)-1] == '\n' {
			var c chunk
			if jerr := json.Unmarshal(line, &c); jerr != nil {
				return nil, fmt.Errorf("eval: manifest.jsonl: %w", jerr)
			}
			if c.Deleted {
				delete(live, c.ID)
			} else {
				live[c.ID] = c
			}
		}
		if err == io.EOF {
			break
		}
		if err != nil {
			return nil, fmt.Errorf("eval: manifest.jsonl: %w", err)
		}
	}
	out := map[string][]chunk{}
	for _, c := range live {
		out[c.Path] = append(out[c.Path], c)
	}
	for _, cs := range out {
		slices.SortFunc(cs, func(a, b chunk) int { return a.ChunkIndex - b.ChunkIndex })
	}
	return out, nil
}

// FillWhole sets each hit's Whole text: the chunk at its index plus any
// other chunk of the file lying inside the returned span (a server that
// merges neighbouring hits returns one span over several chunks).
func FillWhole(outs []Outcome, chunks map[string][]chunk, dataDir string) {
	for i := range outs {
		for j := range outs[i].Hits {
			h := &outs[i].Hits[j]
			cs := chunks[h.Path]
			if cs == nil {
				cs = chunks[filepath.Join(dataDir, h.Path)]
			}
			var parts []string
			for _, c := range cs {
				if c.ChunkIndex == h.ChunkIndex || (c.CharStart >= h.CharStart && c.CharEnd <= h.CharEnd) {
					parts = append(parts, c.Text)
				}
			}
			h.Whole = strings.Join(parts, "\n")
		}
	}
}
