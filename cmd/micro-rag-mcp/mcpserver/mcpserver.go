// Package mcpserver exposes one engine as an MCP server with exactly two
// tools, search and reindex. It validates arguments and applies defaults
// itself because mcp-go only advertises them in the schema.
package mcpserver

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/mark3labs/mcp-go/mcp"
	"github.com/mark3labs/mcp-go/server"

	"github.com/micro-rag/micro-rag-mcp/engine"
	"github.com/micro-rag/micro-rag-mcp/index"
	"github.com/micro-rag/micro-rag-mcp/index/search"
	"github.com/micro-rag/micro-rag-mcp/internal/term"
	"github.com/micro-rag/micro-rag-mcp/pipeline"
)

// Engine is the part of *engine.Engine the tools and resources use.
type Engine interface {
	// Answer is a search tool call's results and note
	// (*engine.Engine.Answer); explain is false.
	Answer(ctx context.Context, args map[string]any, explain bool) (search.Output, error)
	Reindex(ctx context.Context, req engine.ReindexRequest, progress func(pipeline.Progress)) (engine.ReindexResult, error)
	ReadChunk(ctx context.Context, path string, i, around int) (search.Text, error)
	ReadDocument(ctx context.Context, path string) (search.Text, error)
	Documents(ctx context.Context, after string, limit int) ([]search.DocumentInfo, bool, error)
	IndexState() engine.IndexState
	// CommitID names the commit searches answer from ("" until loaded).
	CommitID() string
}

// Options describe the server as clients see it.
type Options struct {
	Name         string // serverInfo.name and title, and in tool titles and descriptions (--title)
	Version      string // serverInfo.version
	Instructions string // sent verbatim (--inst)
	// DocumentsPerPage sizes resources/list pages; 0 = DocumentsPerPage.
	DocumentsPerPage int
	Logger           *slog.Logger
	// Context, when set, bounds a watcher that sends notifications/resources/list_changed after each commit
	// (looking every IndexPoll, 0 = IndexPollEvery); the resources
	// capability then declares listChanged.
	Context   context.Context
	IndexPoll time.Duration
}

// New builds the MCP server. It does not start the engine.
func New(eng Engine, opts Options) *server.MCPServer {
	log := cmp.Or(opts.Logger, slog.New(slog.DiscardHandler))
	hooks := &server.Hooks{}
	watch := opts.Context != nil
	s := server.NewMCPServer(opts.Name, opts.Version,
		server.WithTitle(opts.Name),
		server.WithInstructions(opts.Instructions),
		server.WithToolCapabilities(false),
		server.WithResourceCapabilities(false, watch),
		server.WithRecovery(),
		server.WithResourceRecovery(),
		server.WithHooks(hooks),
	)
	t := &tools{eng: eng, srv: s, title: opts.Name, log: log}
	s.AddTool(SearchTool(opts.Name), t.search)
	s.AddTool(ReindexTool(opts.Name), t.reindex)
	rs := &resources{eng: eng, title: opts.Name, perPage: cmp.Or(max(opts.DocumentsPerPage, 0), DocumentsPerPage), log: log}
	rs.register(s, hooks)
	if watch {
		ticker := time.NewTicker(cmp.Or(max(opts.IndexPoll, 0), IndexPollEvery))
		go func() {
			defer ticker.Stop()
			watchIndex(opts.Context, s, eng.CommitID, ticker.C)
		}()
	}
	return s
}

// SearchTool describes the search tool of the instance called title.
func SearchTool(title string) mcp.Tool {
	return mcp.NewTool("search",
		mcp.WithToolTitle("Search "+title),
		mcp.WithDescription(fmt.Sprintf("Search the documents of %q by meaning and by keyword (exact names, "+
			"codes and identifiers are matched as written). Returns passages, best first, with file path, "+
			"page or lines, and a score from 0 to 1: semantic similarity and keyword match combined, so a "+
			"passage found both ways scores higher than either alone. The text and the structured result hold "+
			"the same passage text, cut around its best match when long; a passage found in several files comes once, "+
			"listing every path. Each result has a uri; read it as a "+
			"resource for the passage with its neighbours, or drop the #chunk part for the whole document. "+
			"The index keeps itself up to date: it is built at start and updated when files change, "+
			"so there is no need to call reindex first. While indexing runs, results may be incomplete "+
			"and index_state says how far it got.", title)),
		mcp.WithString("query", mcp.Required(), mcp.MinLength(1),
			mcp.Description("What to look for: a question in natural language, keywords, or an exact identifier.")),
		mcp.WithInteger("top_k", mcp.DefaultNumber(search.DefaultTopK), mcp.Min(search.MinTopK), mcp.Max(search.MaxTopK),
			mcp.Description("How many passages to return at most (overlapping chunks of one file count once).")),
		mcp.WithNumber("score_threshold", mcp.DefaultNumber(search.DefaultScoreThreshold), mcp.Min(0.0), mcp.Max(1.0),
			mcp.Description("Drop passages scoring below this. Scores are calibrated so that at the default a query the documents do not answer mostly returns nothing; 0 returns the top_k best whatever they score.")),
		mcp.WithString("path_glob",
			mcp.Description("Only search files matching this shell pattern, relative to the data folder (e.g. \"docs/**/*.md\"; a pattern without / matches file names).")),
		mcp.WithArray("ext", mcp.WithStringItems(),
			mcp.Description("Only search files with one of these extensions (e.g. [\"md\", \"pdf\"]; \"noext\" for files without one).")),
		mcp.WithString("modified_after",
			mcp.Description("Only search files modified after this RFC 3339 time (e.g. \"2026-01-31T00:00:00Z\").")),
		mcp.WithString("modified_before",
			mcp.Description("Only search files modified before this RFC 3339 time.")),
		mcp.WithRawOutputSchema([]byte(searchOutputSchema)),
		mcp.WithReadOnlyHintAnnotation(true),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
}

// ReindexTool describes the reindex tool of the instance called title.
func ReindexTool(title string) mcp.Tool {
	return mcp.NewTool("reindex",
		mcp.WithToolTitle("Reindex "+title),
		mcp.WithDescription(fmt.Sprintf("Check the documents of %q against the index now: new and changed files are "+
			"indexed, deleted files are dropped. Rarely needed: indexing runs by itself at start and whenever "+
			"files change. Unchanged files are skipped unless force is set. Answers busy (with what runs and "+
			"how far it is) while another indexing holds the index.", title)),
		mcp.WithBoolean("force", mcp.DefaultBool(false),
			mcp.Description("Re-extract and re-embed every file, changed or not.")),
		mcp.WithString("path_glob",
			mcp.Description("Only consider files matching this shell pattern, relative to the data folder (e.g. \"docs/*.md\").")),
		mcp.WithRawOutputSchema([]byte(reindexOutputSchema)),
		mcp.WithReadOnlyHintAnnotation(false),
		mcp.WithDestructiveHintAnnotation(false),
		mcp.WithIdempotentHintAnnotation(true),
		mcp.WithOpenWorldHintAnnotation(false),
	)
}

const searchOutputSchema = `{
  "type": "object",
  "properties": {
    "results": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "path": {"type": "string", "description": "relative to the data folder, / separated"},
          "score": {"type": "number", "minimum": 0, "maximum": 1, "description": "relevance from 0 to 1, never rising down the list: in hybrid search 1 - (1 - cosine similarity) * (1 - keyword score), in dense search the cosine, in keyword search the keyword score; lowered when the documents lack the query's words, and calibrated so that below 0.2 a result is more likely noise than an answer"},
          "snippet": {"type": "string", "description": "the passage's text (overlapping chunks of one file are merged into one passage); one longer than 3,000 characters is cut to the 3,000 around its best-matching sentence"},
          "chunk_index": {"type": "integer", "description": "the best-matching chunk of the passage, from 0"},
          "chunks": {"type": "array", "items": {"type": "integer"}, "description": "every chunk the passage holds, ascending"},
          "char_start": {"type": "integer", "description": "code-point offset of the passage in the document's extracted text"},
          "char_end": {"type": "integer"},
          "paths": {"type": "array", "items": {"type": "string"}, "description": "present when files hold the same passage text: every such path, path first"},
          "uri": {"type": "string", "description": "resource URI of the best chunk: resources/read returns it with its neighbours; without #chunk=N, the whole document"},
          "mtime": {"type": "number", "description": "seconds since the Unix epoch"},
          "ext": {"type": "string"},
          "page": {"type": "integer", "description": "PDF page, from 1"},
          "line_start": {"type": "integer"},
          "line_end": {"type": "integer"}
        },
        "required": ["path", "score", "snippet", "chunk_index", "chunks", "char_start", "char_end", "uri", "mtime", "ext"]
      }
    },
    "note": {"type": "string", "description": "present when no passage scored high and the folder holds files not indexed for their extension: which, and the flag that adds them; or when the filters pass no indexed file: how many each passes"},
    "index_state": {
      "type": "object",
      "description": "present while indexing has files left to read or chunks left to embed, or the model loads: results may be incomplete",
      "properties": {
        "indexing": {"type": "boolean"},
        "pending": {"type": "boolean", "description": "files are left to read or chunks to embed"},
        "model_loading": {"type": "boolean"},
        "activity": {"type": "string", "description": "initial indexing, reindex, or update after file changes"},
        "since": {"type": "string", "format": "date-time"},
        "files_done": {"type": "integer"},
        "files_total": {"type": "integer"},
        "chunks_done": {"type": "integer"},
        "chunks_total": {"type": "integer"},
        "searchable_files": {"type": "integer", "description": "files in the last commit, which is what search answers from"},
        "searchable_chunks": {"type": "integer"}
      },
      "required": ["indexing", "files_done", "files_total", "chunks_done", "chunks_total"]
    }
  },
  "required": ["results"]
}`

const reindexOutputSchema = `{
  "type": "object",
  "properties": {
    "files_added": {"type": "integer"},
    "files_updated": {"type": "integer"},
    "files_removed": {"type": "integer"},
    "files_failed": {"type": "integer"},
    "chunks_total": {"type": "integer"},
    "chunks_embedded": {"type": "integer", "description": "chunks sent to the model; unchanged chunks of a changed file keep their vectors unless force"},
    "elapsed_ms": {"type": "integer"},
    "waited_ms": {"type": "integer", "description": "the part of elapsed_ms spent waiting for the model or for the run in progress (the start-up indexing) before this run began"},
    "files_skipped": {"type": "integer", "description": "files seen but holding no text in the index (skipped lists them by reason)"},
    "files_truncated": {"type": "integer", "description": "files indexed only in part, over the server's --max-file-chunks (truncated names them)"},
    "truncated": {
      "type": "array",
      "description": "files indexed only in part and which part (at most 20)",
      "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["path", "reason"]
      }
    },
    "skipped": {
      "type": "array",
      "items": {
        "type": "object",
        "properties": {
          "reason": {"type": "string", "enum": ["no_text", "broken_link", "link_outside", "extension_not_enabled", "table_too_large", "no_reader", "compressed", "binary"]},
          "count": {"type": "integer"},
          "examples": {"type": "array", "items": {"type": "string"}, "description": "a few of the paths"},
          "exts": {"type": "array", "items": {"type": "string"}, "description": "the extensions met (\"\" for none)"},
          "note": {"type": "string", "description": "what the reason means and what to do"}
        },
        "required": ["reason", "count", "examples", "exts", "note"]
      }
    },
    "failed": {
      "type": "array",
      "description": "what this run could not read, by path (at most 20; status lists them all)",
      "items": {
        "type": "object",
        "properties": {"path": {"type": "string"}, "reason": {"type": "string"}},
        "required": ["path", "reason"]
      }
    },
    "exts": {"type": "array", "items": {"type": "string"}, "description": "the extensions the index covers"},
    "excludes": {"type": "array", "items": {"type": "string"}, "description": "the --exclude patterns the index records"},
    "note": {"type": "string", "description": "present when path_glob matched no file: says so"}
  },
  "required": ["files_added", "files_updated", "files_removed", "files_failed", "chunks_total", "chunks_embedded", "elapsed_ms"]
}`

// ToolOutput is the search tool's structuredContent: the search's output,
// and while indexing runs the index's state, which makes it incomplete.
type ToolOutput struct {
	search.Output
	IndexState *engine.IndexState `json:"index_state,omitempty"`
}

type tools struct {
	eng   Engine
	srv   *server.MCPServer
	title string // names the index in resource URIs
	log   *slog.Logger
}

// ParseReindex applies defaults and checks types.
func ParseReindex(args map[string]any) (engine.ReindexRequest, error) {
	var req engine.ReindexRequest
	if err := search.KnownArgs(args, "force", "path_glob"); err != nil {
		return req, err
	}
	var err error
	if req.Force, err = search.Arg(args, "force", false, "a boolean"); err != nil {
		return req, err
	}
	req.PathGlob, err = search.Arg(args, "path_glob", "", "a string")
	return req, err
}

// arguments returns the call's arguments as an object, or an error text when
// the client sent something else.
func arguments(req mcp.CallToolRequest) (map[string]any, error) {
	raw := req.GetRawArguments()
	// Over the wire mcp-go keeps the arguments as raw JSON.
	if b, ok := raw.(json.RawMessage); ok {
		raw = nil
		if len(b) > 0 {
			if err := json.Unmarshal(b, &raw); err != nil {
				return nil, fmt.Errorf("arguments are not valid JSON: %v", err)
			}
		}
	}
	if raw == nil {
		return map[string]any{}, nil
	}
	m, ok := raw.(map[string]any)
	if !ok {
		return nil, fmt.Errorf("arguments must be a JSON object, got %s", search.ArgType(raw))
	}
	return m, nil
}

func (t *tools) search(ctx context.Context, call mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := arguments(call)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	answer, err := t.eng.Answer(ctx, args, false)
	var bad *search.ArgsError
	if errors.As(err, &bad) {
		return mcp.NewToolResultError(err.Error()), nil
	}
	if err != nil {
		if ctx.Err() != nil {
			return mcp.NewToolResultError("search cancelled"), nil
		}
		t.log.Warn("search failed", "err", err)
		return mcp.NewToolResultError(FailureText("search", err)), nil
	}
	res := answer.Results
	for i := range res {
		res[i].URI = ChunkURI(t.title, res[i].Path, res[i].ChunkIndex)
	}
	structured, text := ToolOutput{Output: answer}, answer.Text()
	// Only work really left makes results incomplete: a run that finds
	// every file unchanged says nothing.
	if st := t.eng.IndexState(); st.Pending || st.ModelLoading {
		structured.IndexState = &st
		text = IndexNote(st) + "\n\n" + text
	}
	out := mcp.NewToolResultStructured(structured, text)
	// One resource_link per passage, after the text, for clients that fetch
	// more context through resources/read. Neither description nor MIME
	// type: the text block says what each result is, the templates give
	// the type, and every token here is paid on every search.
	for _, r := range res {
		out.Content = append(out.Content, mcp.NewResourceLink(r.URI, term.Visible(r.Path), "", ""))
	}
	return out, nil
}

// FailureText is the tool error for a search or reindex that failed: a
// database that cannot be reached is said as such, with what to do, since
// the driver's words (SQLSTATE 57P01, a refused dial) do not say it.
func FailureText(what string, err error) string {
	text := what + " failed: " + term.VisibleText(err.Error())
	if index.Unreachable(err) {
		text += "\nThe index's database cannot be reached (stopped, restarting or unreachable over the network); " +
			"the server connects again by itself: try again once the database is back."
	}
	return text
}

func (t *tools) reindex(ctx context.Context, call mcp.CallToolRequest) (*mcp.CallToolResult, error) {
	args, err := arguments(call)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	req, err := ParseReindex(args)
	if err != nil {
		return mcp.NewToolResultError(err.Error()), nil
	}
	var progress func(pipeline.Progress)
	if call.Params.Meta != nil && call.Params.Meta.ProgressToken != nil {
		relay := newProgressRelay(t.progressSender(ctx, call.Params.Meta.ProgressToken), time.Now)
		ticker := time.NewTicker(progressTick)
		stop, done := make(chan struct{}), make(chan struct{})
		// No progress may follow the answer: wait for the ticker to stop.
		defer func() { close(stop); <-done; ticker.Stop() }()
		go func() { relay.run(ticker.C, stop); close(done) }()
		progress = relay.update
	}
	res, err := t.eng.Reindex(ctx, req, progress)
	switch {
	case errors.Is(err, engine.ErrBusy):
		return mcp.NewToolResultError("busy: " + err.Error()), nil
	case err != nil && ctx.Err() != nil:
		return mcp.NewToolResultError("reindex cancelled; the previous index is still in use"), nil
	case err != nil:
		t.log.Warn("reindex failed", "err", err)
		// Line breaks stay real: an error of several lines (the paths tried) reads as such.
		return mcp.NewToolResultError(FailureText("reindex", err)), nil
	}
	took := fmt.Sprintf("Reindexed in %d ms", res.ElapsedMS)
	if res.WaitedMS >= waitWorthSaying {
		// Otherwise a reindex behind the start-up indexing reads as slow.
		took = fmt.Sprintf("Waited %d ms for the model or the start-up indexing, then reindexed in %d ms", res.WaitedMS, res.ElapsedMS-res.WaitedMS)
	}
	text := fmt.Sprintf("%s: %d added, %d updated, %d removed, %d failed; %d chunks in the index, %d embedded by this run.",
		took, res.FilesAdded, res.FilesUpdated, res.FilesRemoved, res.FilesFailed, res.ChunksTotal, res.ChunksEmbedded)
	if res.FilesSkipped > 0 {
		text += fmt.Sprintf(" %s seen but not indexed: %s.", engine.Counted(res.FilesSkipped, "file"), strings.Join(engine.SkipLines(res.Skipped), "; "))
	}
	if res.FilesFailed > 0 {
		text += " Could not read: " + strings.Join(engine.FailLines(res.Failed, res.FilesFailed), "; ") + "."
	}
	if res.FilesTruncated > 0 {
		text += " Indexed in part: " + strings.Join(engine.FailLines(res.Truncated, res.FilesTruncated), "; ") + "."
	}
	if res.Note != "" {
		text += " " + term.Visible(res.Note)
	}
	return mcp.NewToolResultStructured(res, text), nil
}

// waitWorthSaying is the wait before a reindex's own work that its text
// result mentions; shorter waits are noise.
const waitWorthSaying = 1000

// progressSender turns reindex progress into notifications/progress. A
// failed send (full channel, gone client) is logged and dropped: progress
// must never fail the reindex.
func (t *tools) progressSender(ctx context.Context, token mcp.ProgressToken) func(float64, int, pipeline.Progress, string) {
	return func(value float64, total int, p pipeline.Progress, eta string) {
		params := map[string]any{
			"progressToken": token,
			"progress":      value,
			"message":       progressMessage(p, eta),
		}
		if total > 0 {
			params["total"] = total
		}
		if err := t.srv.SendNotificationToClient(ctx, "notifications/progress", params); err != nil {
			t.log.Debug("progress notification dropped", "err", err)
		}
	}
}

// IndexNote tells the model that results may be incomplete, and why.
func IndexNote(st engine.IndexState) string {
	if st.ModelLoading {
		return "Note: the search model is still loading, so nothing can be searched yet; try again in a few seconds."
	}
	if st.LastRunError != "" {
		return fmt.Sprintf("Note: the last indexing failed (%s); it is tried again at %s; %s. Results may be incomplete.",
			st.LastRunError, st.RetryAt.Local().Format("15:04:05"), st.Searchable())
	}
	return "Note: indexing is running (" + st.Describe() + "); " + st.Searchable() + ". Results may be incomplete."
}
