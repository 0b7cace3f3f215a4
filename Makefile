# Every target that builds or runs anything depends on setup, which installs
# the native libraries and model files idempotently (see scripts/setup.sh).
GO ?= go
BIN := bin/micro-rag-mcp
export CGO_ENABLED := 1

.PHONY: setup build test test-short vet bench demo fuzz clean

setup:
	@bash scripts/setup.sh

build: setup
	$(GO) build -o $(BIN) ./cmd/micro-rag-mcp

vet: setup
	$(GO) vet ./...

test: setup vet build
	$(GO) test -race -timeout 45m ./...

bench: setup
	$(GO) test -run '^$$' -bench . -benchtime 1x -timeout 60m ./bench/

# Runs the built server on testdata/sample through MCP on stdio; the index
# goes to a temporary folder so the repository stays clean.
demo: setup build
	$(GO) run ./cmd/micro-rag-mcp/demo -bin $(BIN) -data testdata/sample

clean:
	rm -rf bin
