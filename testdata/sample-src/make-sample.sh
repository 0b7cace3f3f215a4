#!/usr/bin/env bash
# Rebuilds the PDF and DOCX of testdata/sample from the sources here.
# Needs pdflatex (texlive-latex-base) and LibreOffice (libreoffice-writer-nogui).
set -euo pipefail
src=$(cd "$(dirname "$0")" && pwd)
out="$src/../sample"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# Fixed dates keep the PDF byte-for-byte reproducible.
export SOURCE_DATE_EPOCH=1735689600 FORCE_SOURCE_DATE=1

# Two runs are not needed: the document has no references.
pdflatex -interaction=nonstopmode -halt-on-error -output-directory "$tmp" \
	"$src/event-ingestion-design.tex" >/dev/null
cp "$tmp/event-ingestion-design.pdf" "$out/event-ingestion-design.pdf"

# A private LibreOffice profile keeps the user's own profile untouched.
soffice -env:UserInstallation="file://$tmp/lo-profile" --headless \
	--infilter="HTML (StarWriter)" --convert-to 'docx:MS Word 2007 XML' \
	--outdir "$tmp" "$src/employee-handbook-leave.html" >/dev/null
cp "$tmp/employee-handbook-leave.docx" "$out/employee-handbook-leave.docx"
