// Package model says where the embedding model and the ONNX Runtime library
// live on disk, and fetches the model once, verified, on an end user's first
// run.
package model

import (
	"bytes"
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/micro-rag/micro-rag-mcp/internal/cachedir"
)

// Names of the model files inside a model directory.
const (
	ONNXName      = "model.onnx"
	TokenizerName = "tokenizer.json"
)

// ORTLibName is the ONNX Runtime library's file name in a lib folder.
const ORTLibName = "libonnxruntime.so"

// FP32Name is all-MiniLM-L6-v2 in fp32, sentence-transformers' own
// export: its vectors match sentence-transformers' (the golden and parity
// tests run it), and the q8 file is made from it. Its name on the command
// line and its directory under cachedir.Path()/models.
const FP32Name = "all-MiniLM-L6-v2"

// DefaultName is the model a server runs without --model (Models[0]):
// the project's int8 file, about twice fp32's indexing speed at the same
// answers (docs/int8.md); --model all-MiniLM-L6-v2 for fp32.
const DefaultName = Q8Name

// Int8Name is the same network with int8 weights: 2.4× fp32's ingest on a
// CPU with int8 dot products (VNNI), about 1.1× without; cosine ≥ 0.98 to
// the fp32 vectors.
const Int8Name = "all-MiniLM-L6-v2-int8"

// Q8Name is the int8 file this project makes from the fp32 one
// (scripts/quantize.sh, docs/int8.md): per-channel weights, closer to
// fp32 than Int8Name's. `make setup` builds it; end users download it
// from Q8Source.
const Q8Name = "all-MiniLM-L6-v2-q8"

// Q8Source is where a first run downloads Q8Name: a release of the
// project's own tagged with the file's hash, published once per hash by
// the release steps (docs/release.md), so every version and every dev
// build with these pins fetch the same immutable files. The pins must
// equal scripts/versions.env's MODEL_Q8_ONNX_SHA256 and
// MODEL_TOKENIZER_SHA256 (a test reads them).
var Q8Source = projectRelease(Q8Name,
	RemoteFile{Remote: ONNXName, Local: ONNXName, Size: 58883044,
		SHA256: "cda294d983d875b74f405a87d421447076ddfbc7f149d86ced571ca656414722"},
	RemoteFile{Remote: TokenizerName, Local: TokenizerName, Size: 711661,
		SHA256: "da0e79933b9ed51798a3ae27893d3c5fa4a201126cef75586296df9b4d2c62a0"})

// ProjectRepo is this project's repository on GitHub.
const ProjectRepo = "micro-rag/micro-rag-mcp"

// projectRelease is the model name's two files as assets of
// ModelReleaseTag's release of ProjectRepo.
func projectRelease(name string, onnx, tokenizer RemoteFile) Source {
	return Source{BaseURL: "https://github.com", Repo: ProjectRepo, Release: true,
		Revision: ModelReleaseTag(name, onnx.SHA256), Files: []RemoteFile{onnx, tokenizer}}
}

// ModelReleaseTag is the tag of the release that carries the model name
// whose model.onnx has the SHA-256 onnxSHA256 (hex): model-NAME-<its
// first 12 hex digits>. A new file is a new release; a published one
// never changes. scripts/dist.sh names the same.
func ModelReleaseTag(name, onnxSHA256 string) string {
	return "model-" + name + "-" + onnxSHA256[:min(12, len(onnxSHA256))]
}

// Pooling is how one vector is made from the token vectors.
type Pooling string

const (
	PoolMean Pooling = "mean" // average over the attention mask (sentence-transformers' MiniLM)
	PoolCLS  Pooling = "cls"  // the [CLS] token's vector (bge)
)

// Spec is how a model is run: everything besides its two files that the
// vectors depend on.
type Spec struct {
	Pooling Pooling `json:"pooling"`
	// QueryPrefix is put before every search query, PassagePrefix before
	// every chunk (bge wants an instruction on queries only).
	QueryPrefix   string `json:"query_prefix,omitempty"`
	PassagePrefix string `json:"passage_prefix,omitempty"`
	// MaxLength is the most token ids one text becomes, [CLS] and [SEP]
	// included; longer texts are truncated.
	MaxLength int `json:"max_length"`
	// Lowercase says whether the tokenizer lower-cases and strips accents
	// (uncased BERT vocabularies) or keeps the text as it is (cased ones,
	// such as bge-small-zh's); nil: as tokenizer.json says. Either way
	// CJK ideographs are split into one token each.
	Lowercase *bool `json:"lowercase,omitempty"`
}

// Model is one embedding model this program can run.
type Model struct {
	Name string // as given to --model; also its folder under cachedir.Path()/models
	Spec Spec
	Hub  Source // what an end user downloads on first run
	// About is one line for --help and the README.
	About string
	// User: described by a model.json in a folder the user gave, not
	// from Models.
	User bool
	// Queries names the model whose files embed search queries, when it
	// is cached or can be downloaded (else this model embeds them): a
	// model of the same vectors at a higher precision. A query is one
	// short text, so its precision costs a few milliseconds a search,
	// while every passage keeps this model's speed.
	Queries string
	// Null is the model's cosine between a query and unrelated passages,
	// which search maps onto fp32 all-MiniLM-L6-v2's scale (the one fusion
	// and the score threshold were tuned on) so that they mean the same
	// with every model. Zero: taken as fp32's.
	Null NullCosine
}

// NullCosine is a model's null cosine: mean and spread (standard
// deviation) of cos(query, unrelated passage), measured as bench/cmd/noise
// -bg does (each evaluation question against every chunk of its corpus,
// Go docs and man pages, averaged).
type NullCosine struct {
	Mean   float64 `json:"mean"`
	Spread float64 `json:"spread"`
}

var yes, no = true, false

// bgeQuery is the instruction bge-*-en-v1.5 puts before queries (not
// passages) for retrieval; bgeQueryZH is bge-*-zh-v1.5's.
const (
	bgeQuery   = "Represent this sentence for searching relevant passages: "
	bgeQueryZH = "为这个句子生成表示以用于检索相关文章："
)

// bgeNull is bge-small-en-v1.5-int8's null cosine (0.517 ± 0.045 on the
// Go docs, 0.529 ± 0.049 on the man pages); every passage looks half
// related to every query, where all-MiniLM-L6-v2 says 0.07 ± 0.09. The
// fp32 file's is the same (0.515 ± 0.046 on the Go docs).
var bgeNull = NullCosine{Mean: 0.523, Spread: 0.047}

// bgeZHNull is bge-small-zh-v1.5-int8's, measured the same way (0.462 ±
// 0.036 on the Go docs, 0.538 ± 0.041 on the man pages). On Chinese text
// it sits lower and wider (0.444 ± 0.056: 15 Chinese questions over the 47
// Chinese man pages Debian installs, bench/eval/results-models.md).
var bgeZHNull = NullCosine{Mean: 0.500, Spread: 0.038}

// minilmNull is fp32 all-MiniLM-L6-v2's null cosine (0.086 ± 0.080 on the
// Go docs, 0.052 ± 0.103 on the man pages), the scale search was tuned on.
// The q8 file measured the same (0.0690 ± 0.0916 against fp32's 0.0690 ±
// 0.0915, both sets, bench/cmd/noise -bg -model NAME): mapping by that
// difference would move a cosine in [0, 1] by at most 0.001, less than
// quantisation moves one (median 0.0028, BENCHMARKS.md), so q8's cosines
// are scored as fp32's, unmapped: a search at the defaults behaves as
// before.
var minilmNull = NullCosine{Mean: 0.069, Spread: 0.092}

// Models are the models --model accepts; the first is the default
// (DefaultName).
var Models = []Model{
	{Name: Q8Name, Hub: Q8Source, About: "English, int8 made by this project from all-MiniLM-L6-v2 (the default): fp32's answers at about twice its indexing speed where the CPU has VNNI",
		Spec: Spec{Pooling: PoolMean, MaxLength: 256, Lowercase: &yes}, Null: minilmNull, Queries: FP32Name},
	{Name: FP32Name, Hub: HubSource, About: "English, fp32: sentence-transformers' exact vectors",
		Spec: Spec{Pooling: PoolMean, MaxLength: 256, Lowercase: &yes}, Null: minilmNull},
	{Name: Int8Name, Hub: HubSourceInt8, About: "English, int8: faster to index where the CPU has VNNI (2.4× measured), about 1.1× elsewhere; loses some answers",
		Spec: Spec{Pooling: PoolMean, MaxLength: 256, Lowercase: &yes}},
	{Name: "bge-small-en-v1.5", Hub: xenova("bge-small-en-v1.5", "onnx/model.onnx"), About: "English, fp32: better retrieval, half fp32 all-MiniLM-L6-v2's speed",
		Spec: Spec{Pooling: PoolCLS, QueryPrefix: bgeQuery, MaxLength: 512, Lowercase: &yes}, Null: bgeNull},
	{Name: "bge-small-en-v1.5-int8", Hub: xenova("bge-small-en-v1.5", "onnx/model_quantized.onnx"), About: "English, int8: better retrieval at fp32 all-MiniLM-L6-v2's speed",
		Spec: Spec{Pooling: PoolCLS, QueryPrefix: bgeQuery, MaxLength: 512, Lowercase: &yes}, Null: bgeNull},
	{Name: "bge-small-zh-v1.5-int8", Hub: xenova("bge-small-zh-v1.5", "onnx/model_quantized.onnx"), About: "Chinese (and English), int8, cased",
		Spec: Spec{Pooling: PoolCLS, QueryPrefix: bgeQueryZH, MaxLength: 512, Lowercase: &no}, Null: bgeZHNull},
}

// xenova is Xenova's ONNX export of a model on the hub, the files the
// Maven jars of `make models` were copied from (their READMEs say so).
// Verified like HubSource, against the hub's own sha256.
func xenova(name, onnx string) Source { return hubRepo("Xenova/"+name, onnx) }

// Names lists the models --model accepts, the default first.
func Names() []string {
	var names []string
	for _, m := range Models {
		names = append(names, m.Name)
	}
	return names
}

// Lookup returns the model called name ("" is the default).
func Lookup(name string) (Model, error) {
	if name == "" {
		return Models[0], nil
	}
	if i := slices.IndexFunc(Models, func(m Model) bool { return m.Name == name }); i >= 0 {
		return Models[i], nil
	}
	return Model{}, fmt.Errorf("unknown model %q (known: %s; or --model-dir with a %s)", name, strings.Join(Names(), ", "), SpecName)
}

// Dir is cachedir.Path()/models/<name>, where setup and the first-run download
// put the model's files.
func (m Model) Dir() string { return filepath.Join(cachedir.Path(), "models", m.Name) }

// Environment variables that override the defaults.
const (
	EnvModelDir = "MICRO_RAG_MODEL_DIR"
	EnvORTLib   = "MICRO_RAG_ORT_LIB"
)

// ORTTested is the ONNX Runtime release make setup installs (scripts/
// versions.env's ORT_VERSION, a test checks); its release line is the one
// the int8 default is measured with.
const ORTTested = "1.24.3"

// ORTAdvice is empty for a library of ORTTested's release line (1.24.x),
// else a warning for the log naming version: 1.25 and later run the int8
// default's u8-weight products 2.3x slower on AVX-512 VNNI (BENCHMARKS.md),
// a cost nothing else would show.
func ORTAdvice(version string) string {
	line := func(v string) string {
		major, rest, _ := strings.Cut(v, ".")
		minor, _, _ := strings.Cut(rest, ".")
		return major + "." + minor
	}
	if line(version) == line(ORTTested) {
		return ""
	}
	return fmt.Sprintf("ONNX Runtime %s is not the %s this build is measured with (the release packages and make setup carry it; "+
		"1.25 and later index about 1.8x slower with the int8 default on CPUs with AVX-512 VNNI)", version, ORTTested)
}

// Files are the absolute paths of the model's two files.
type Files struct {
	ONNX, Tokenizer string
}

// FilesIn names the model files inside dir without checking them.
func FilesIn(dir string) (Files, error) {
	abs, err := filepath.Abs(dir)
	if err != nil {
		return Files{}, err
	}
	return Files{ONNX: filepath.Join(abs, ONNXName), Tokenizer: filepath.Join(abs, TokenizerName)}, nil
}

// Locate finds the default model (DefaultName) already installed (see
// Model.Locate for the order) and checks that both files are there. It
// never downloads; see Ensure.
func Locate(modelDir string) (Files, error) { return Models[0].Locate(modelDir) }

// Locate finds m's files: in modelDir if set, else $MICRO_RAG_MODEL_DIR,
// else m.Dir(), else models/<name> beside the executable's folder (where a
// release package may carry it); both files must be there. It never
// downloads.
func (m Model) Locate(modelDir string) (Files, error) { return m.locate(modelDir, exeDir()) }

// locate is Locate with the executable's folder given.
func (m Model) locate(modelDir, exeDir string) (Files, error) {
	dir := cmp.Or(modelDir, os.Getenv(EnvModelDir))
	if dir == "" {
		dir = m.Dir()
		if bundled := filepath.Join(exeDir, "..", "models", m.Name); exeDir != "" && !haveFiles(dir) && haveFiles(bundled) {
			dir = bundled
		}
	}
	f, err := FilesIn(dir)
	if err != nil {
		return Files{}, err
	}
	for _, p := range []string{f.ONNX, f.Tokenizer} {
		if err := regularFile(p); err != nil {
			// No fix here: the engine adds the one that fits (download,
			// --model-dir, the built model's asset).
			return Files{}, fmt.Errorf("model not found in %s: %w", dir, err)
		}
	}
	return f, nil
}

// exeDir is the folder of the executable, symlinks followed, or "".
func exeDir() string {
	exe, err := os.Executable()
	if err != nil {
		return ""
	}
	if exe, err = filepath.EvalSymlinks(exe); err != nil {
		return ""
	}
	return filepath.Dir(exe)
}

// haveFiles says whether dir holds both model files.
func haveFiles(dir string) bool {
	f, err := FilesIn(dir)
	return err == nil && regularFile(f.ONNX) == nil && regularFile(f.Tokenizer) == nil
}

// ORTLibrary finds the ONNX Runtime shared library: the flag, else
// $MICRO_RAG_ORT_LIB, else lib/libonnxruntime.so beside the folder of the
// executable (the release tarball's layout, symlinks to the binary
// followed), else cachedir.Path()/lib/libonnxruntime.so (where setup installs it).
func ORTLibrary(flag string) (string, error) { return ortLibrary(flag, exeDir()) }

// ortLibrary is ORTLibrary with the executable's folder given.
func ortLibrary(flag, exeDir string) (string, error) {
	p := cmp.Or(flag, os.Getenv(EnvORTLib))
	var candidates []string
	if p != "" {
		candidates = []string{p}
	} else {
		if exeDir != "" {
			candidates = append(candidates, filepath.Join(exeDir, "..", "lib", ORTLibName))
		}
		candidates = append(candidates, filepath.Join(cachedir.Path(), "lib", ORTLibName))
	}
	var errs []error
	for _, c := range candidates {
		abs, err := filepath.Abs(c)
		if err != nil {
			return "", err
		}
		if err := regularFile(abs); err != nil {
			errs = append(errs, err)
			continue
		}
		return abs, nil
	}
	return "", &ORTNotFoundError{Tried: errs}
}

// ORTNotFoundError says that no ONNX Runtime library was found, and where
// it was looked for.
type ORTNotFoundError struct {
	Tried []error
}

func (e *ORTNotFoundError) Error() string {
	return e.Cause() + fmt.Sprintf(" (run `make setup`, or pass --ort-lib or set %s)", EnvORTLib)
}

// Cause is Error without the fix, for a caller that states its own.
func (e *ORTNotFoundError) Cause() string {
	tried := make([]string, len(e.Tried))
	for i, err := range e.Tried {
		tried[i] = err.Error()
	}
	return "ONNX Runtime library (1.24 or newer) not found: " + strings.Join(tried, "; ")
}

func (e *ORTNotFoundError) Unwrap() []error { return e.Tried }

// regularFile fails unless p (after symlinks) is a non-empty regular file.
func regularFile(p string) error {
	st, err := os.Stat(p)
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return fmt.Errorf("%s is not a regular file", p)
	}
	if st.Size() == 0 {
		return errors.New(p + " is empty")
	}
	return nil
}

// SpecName is the file in a --model-dir folder that describes a model the
// user brings: its Spec as JSON, plus an optional "name".
const SpecName = "model.json"

// FromDir reads dir/model.json. found is false when there is none (the
// folder then holds the files of a model from Models).
func FromDir(dir string) (m Model, found bool, err error) {
	p := filepath.Join(dir, SpecName)
	raw, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return Model{}, false, nil
	}
	if err != nil {
		return Model{}, false, err
	}
	var j struct {
		Name string `json:"name"`
		Spec
		Null NullCosine `json:"null_cosine"`
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields() // a misspelt key would silently change nothing
	if err := dec.Decode(&j); err != nil {
		return Model{}, true, fmt.Errorf("%s: %w (keys: name, pooling, query_prefix, passage_prefix, max_length, lowercase, null_cosine)", p, err)
	}
	if j.Name == "" {
		abs, err := filepath.Abs(dir)
		if err != nil {
			return Model{}, true, err
		}
		j.Name = filepath.Base(abs)
	}
	if err := j.Spec.Check(); err != nil {
		return Model{}, true, fmt.Errorf("%s: %w", p, err)
	}
	if j.Null.Spread < 0 || j.Null.Spread > 1 || math.Abs(j.Null.Mean) > 1 {
		return Model{}, true, fmt.Errorf("%s: null_cosine {mean %g, spread %g} is not a cosine's mean in [-1, 1] and spread in [0, 1]", p, j.Null.Mean, j.Null.Spread)
	}
	return Model{Name: j.Name, Spec: j.Spec, Null: j.Null, About: "described by " + p, User: true}, true, nil
}

// Check reports a spec this program cannot run.
func (s Spec) Check() error {
	switch s.Pooling {
	case PoolMean, PoolCLS:
	default:
		return fmt.Errorf("pooling %q is not one of %q, %q", s.Pooling, PoolMean, PoolCLS)
	}
	if s.MaxLength < 8 || s.MaxLength > 8192 {
		return fmt.Errorf("max_length %d is not in 8..8192", s.MaxLength)
	}
	return nil
}
