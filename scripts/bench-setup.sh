#!/usr/bin/env bash
# Installs the tools the benchmark corpus generators (bench/corpus,
# bench/eval) and testdata/golden/make-golden.sh use to make real PDF, DOCX,
# OpenDocument, RTF, EPUB, PPTX and XLSX files: LibreOffice Writer, Calc and
# Impress (headless), pandoc, groff (the full package: groff-base has no PDF
# device) and Ghostscript; and the packages whose man pages make up the man-page
# evaluation sets (the "# package:" lines of bench/eval/manpages.txt and
# crowded.txt).
# Idempotent: apt runs only when a package is missing.
set -euo pipefail

root="$(cd "$(dirname "$0")/.." && pwd)"
packages="libreoffice-writer-nogui libreoffice-calc-nogui libreoffice-impress-nogui pandoc groff ghostscript"
packages+=" $(awk '$1 == "#" && $2 == "package:" { print $3 }' "$root/bench/eval/manpages.txt" "$root/bench/eval/crowded.txt" | sort -u)"

log() { printf 'bench-setup: %s\n' "$*" >&2; }
. "$(cd "$(dirname "$0")" && pwd)/lib.sh"

# shellcheck disable=SC2086 # a list of names
install_debian_packages $packages
for tool in soffice pandoc groff gs; do
	command -v "$tool" >/dev/null || { log "$tool not found after install"; exit 1; }
done
log "ready"
