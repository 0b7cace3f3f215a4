#!/bin/sh
# Regenerates the test PDFs from the committed sources with real tools.
# Needs: python3, LibreOffice (libreoffice-writer-nogui), groff, pdflatex
# (texlive-latex-base, lmodern), ghostscript, qpdf. Output PDFs are committed,
# so tests do not need these tools.
set -eu
cd "$(dirname "$0")"
python3 gen_sources.py

# LibreOffice: HTML opened in Writer, exported as PDF.
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
soffice --headless -env:UserInstallation=file://"$tmp"/lo \
	--infilter=HTML\ \(StarWriter\) --convert-to pdf:writer_pdf_Export \
	--outdir "$tmp" river.html >/dev/null
mv "$tmp"/river.pdf river-libreoffice.pdf

# groff: -k runs preconv for the UTF-8 accents, -t runs tbl for the table.
groff -k -t -ms -Tpdf river.ms >river-groff.pdf

# pdflatex, run in a scratch directory so aux files stay out of the tree.
cp river.tex "$tmp"/
(cd "$tmp" && pdflatex -interaction=nonstopmode river.tex >/dev/null)
mv "$tmp"/river.pdf river-pdflatex.pdf

# groff through PostScript and ghostscript's ps2pdf.
groff -k -t -ms -Tps river.ms >"$tmp"/river.ps
ps2pdf "$tmp"/river.ps river-ps2pdf.pdf

# An image-only page: a grey gradient drawn with the PostScript image operator.
cat >"$tmp"/image.ps <<'PS'
%!PS
100 400 translate 300 200 scale
64 64 8 [64 0 0 64 0 0] { 0 1 4095 { 64 mod 4 mul } for 4096 string dup 0 1 4095 { dup 64 mod 4 mul put dup } for pop } image
showpage
PS
ps2pdf "$tmp"/image.ps image-only.pdf

# Encrypted copies: one needs the user password "secret", one has an empty
# user password (owner password only) and must open without asking.
qpdf --encrypt secret owner-pw 256 -- river-libreoffice.pdf ../hostile/encrypted-user-password.pdf
qpdf --encrypt "" owner-pw 256 -- river-libreoffice.pdf encrypted-empty-user-password.pdf

# Truncated: the first half of a real file.
size=$(wc -c <river-pdflatex.pdf)
head -c $((size / 2)) river-pdflatex.pdf >../hostile/truncated.pdf
