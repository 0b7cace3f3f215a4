#!/usr/bin/env bash
# Builds all-MiniLM-L6-v2-q8 from the fp32 file setup installed
# (scripts/quantize.py, docs/int8.md) into the cache's models folder,
# verified against MODEL_Q8_ONNX_SHA256; nothing runs when it is already
# there and verified. The quantiser (pinned onnxruntime and onnx) goes into
# the cache folder with pip --target, never into the system's Python.
#   scripts/quantize.sh            build and verify
#   scripts/quantize.sh OUT.onnx   build into OUT.onnx, unverified (for trying variants)
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
. "$here/versions.env"
. "$here/lib.sh"

cache="${MICRO_RAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp}"
fp32="$cache/models/all-MiniLM-L6-v2"
dest="$cache/models/all-MiniLM-L6-v2-q8"
log() { printf 'quantize: %s\n' "$*" >&2; }

out="${1:-}"
if [ -z "$out" ] && verify "$dest/model.onnx" "$MODEL_Q8_ONNX_SHA256" && verify "$dest/tokenizer.json" "$MODEL_TOKENIZER_SHA256"; then
	exit 0
fi
verify "$fp32/model.onnx" "$MODEL_ONNX_SHA256" || { log "the fp32 model is missing or changed in $fp32: run scripts/setup.sh"; exit 1; }

ensure_pip

tools="$cache/quantize-tools"
stamp="$tools/.pins"
if [ "$(cat "$stamp" 2>/dev/null)" != "$QUANTIZE_TOOLS" ]; then
	log "installing $QUANTIZE_TOOLS into $tools"
	# Into a folder of this run's own, moved into place whole: two setups
	# running at once (worktrees share the cache) never see half of it.
	fresh="$tools.$$"
	rm -rf "$fresh"
	# shellcheck disable=SC2086 # a list of requirements
	python3 -m pip install --quiet --disable-pip-version-check --no-deps --only-binary :all: --target "$fresh" $QUANTIZE_TOOLS >&2
	echo "$QUANTIZE_TOOLS" >"$fresh/.pins"
	rm -rf "$tools.old.$$"
	[ ! -e "$tools" ] || mv "$tools" "$tools.old.$$"
	mv "$fresh" "$tools" && rm -rf "$tools.old.$$"
fi

if [ -n "$out" ]; then
	shift
	PYTHONPATH="$tools" python3 "$here/quantize.py" --out "$out" "$@"
	exit 0
fi
mkdir -p "$dest"
log "building $dest/model.onnx from the fp32 file"
# shellcheck disable=SC2086 # a list of flags
new="$dest/model.onnx.$$.new"
PYTHONPATH="$tools" python3 "$here/quantize.py" --out "$new" $QUANTIZE_ARGS
if ! verify "$new" "$MODEL_Q8_ONNX_SHA256"; then
	log "checksum mismatch: $new is $(sha256sum "$new" | cut -c1-64), versions.env says $MODEL_Q8_ONNX_SHA256"
	exit 1
fi
cp "$fp32/tokenizer.json" "$dest/tokenizer.json.$$.new" && mv "$dest/tokenizer.json.$$.new" "$dest/tokenizer.json"
mv "$new" "$dest/model.onnx"
