#!/usr/bin/env bash
# Installs the tools the benchmark corpus generator (bench/corpus) uses to
# make real PDF and DOCX files: LibreOffice Writer (headless), groff and
# Ghostscript. Idempotent: apt runs only when a package is missing.
set -euo pipefail

packages="libreoffice-writer-nogui groff ghostscript"

log() { printf 'bench-setup: %s\n' "$*" >&2; }
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# shellcheck disable=SC2086 # a list of names
install_debian_packages $packages
for tool in soffice groff gs; do
	command -v "$tool" >/dev/null || { log "$tool not found after install"; exit 1; }
done
log "ready"
