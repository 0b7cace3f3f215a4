package engine

import (
	"context"
	"errors"
	"log/slog"
	"time"
)

// Config names the folders and files one engine works on.
type Config struct {
	DataFolder  string
	IndexFolder string   // default <DataFolder>/index
	Exts        []string // with dots, lower case; default .txt .md .pdf .docx
	ModelDir    string   // folder holding model.onnx and tokenizer.json; "" = cache
	ORTLibrary  string   // path of libonnxruntime; "" = cache
	// NoInitialReindex stops Start from reindexing once the model is ready
	// (the CLI's one-shot commands reindex or search explicitly).
	NoInitialReindex bool
	Logger           *slog.Logger
}

// Status describes the index for humans (the CLI's status command).
type Status struct {
	DataFolder  string    `json:"data_folder"`
	IndexFolder string    `json:"index_folder"`
	ModelReady  bool      `json:"model_ready"`
	Model       string    `json:"model"`
	Files       int       `json:"files"`
	Chunks      int       `json:"chunks"`
	Tombstones  int       `json:"tombstones"`
	IndexBytes  int64     `json:"index_bytes"`
	LastReindex time.Time `json:"last_reindex"`
	Reindexing  bool      `json:"reindexing"`
}

// Engine serves one data folder. Create with New, then Start; Close when done.
type Engine struct {
	cfg Config
}

// New checks the configuration; it loads nothing (Start does, in the background).
func New(cfg Config) (*Engine, error) {
	return nil, errors.New("engine: not implemented")
}

// Start locates (or downloads) and loads the model in the background, then
// runs the initial reindex unless NoInitialReindex. It returns at once.
func (e *Engine) Start(ctx context.Context) {}

// WaitModel waits until the model is loaded or ctx ends.
func (e *Engine) WaitModel(ctx context.Context) error { return errors.New("engine: not implemented") }

// Search answers from the current snapshot without waiting for a reindex.
// Before the model is ready it waits up to 5 s, then returns no results.
func (e *Engine) Search(ctx context.Context, req SearchRequest) ([]Result, error) {
	return nil, errors.New("engine: not implemented")
}

// Reindex runs one incremental reindex. It fails at once with ErrBusy when
// another reindex holds the index lock. progress may be nil.
func (e *Engine) Reindex(ctx context.Context, req ReindexRequest, progress func(Progress)) (ReindexResult, error) {
	return ReindexResult{}, errors.New("engine: not implemented")
}

// Status reports what the index holds.
func (e *Engine) Status() Status { return Status{} }

// Close stops background work and frees the model and index.
func (e *Engine) Close() error { return nil }
