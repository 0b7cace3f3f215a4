#!/usr/bin/env bash
# Installs the tools the benchmark corpus generator (bench/corpus) uses to
# make real PDF and DOCX files: LibreOffice Writer (headless), groff and
# Ghostscript. Idempotent: apt runs only when a package is missing.
set -euo pipefail

packages="libreoffice-writer-nogui groff ghostscript"

log() { printf 'bench-setup: %s\n' "$*" >&2; }
sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

missing=()
for p in $packages; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
	log "installing Debian packages: ${missing[*]}"
	sudo_if_needed apt-get update -qq
	sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi
for tool in soffice groff gs; do
	command -v "$tool" >/dev/null || { log "$tool not found after install"; exit 1; }
done
log "ready"
