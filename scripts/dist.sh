#!/usr/bin/env bash
# Builds dist/micro-rag-mcp-VERSION-linux-amd64.tar.gz: the binary with FAISS,
# OpenBLAS/LAPACK, the gfortran runtime, OpenMP and libstdc++ linked in, for
# glibc 2.27 and newer; lib/ with the
# ONNX Runtime library and libquadmath (found through the binary's
# $ORIGIN/../lib run path); README, LICENSE and every third-party licence
# text. From the same files, scripts/pack.py writes the wheel and the two
# npm tarballs. Run through `make dist`, after setup.sh and setup-dist.sh.
#
# --if-changed: do nothing when dist/ already holds the output of this very
# source tree (commit, uncommitted changes and untracked files), as recorded
# in dist/SOURCE; the package tests use it so that a test run builds once.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/versions.env"
. "$here/lib.sh"
log() { printf 'dist: %s\n' "$*" >&2; }
cd "$root"

source_key() {
	{
		git rev-parse HEAD
		git diff HEAD --binary
		git ls-files -z --others --exclude-standard | xargs -0 -r sha256sum
	} | sha256sum | cut -d' ' -f1
}
key=$(source_key)
if [ "${1:-}" = --if-changed ] && [ "$(cat dist/SOURCE 2>/dev/null)" = "$key" ]; then
	log "dist/ is up to date ($(ls dist | tr '\n' ' '))"
	exit 0
fi

read -r version commit < <("$here/version.sh")
epoch=$(git log -1 --format=%ct 2>/dev/null || date +%s)
name="micro-rag-mcp-$version-linux-amd64"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg="$stage/$name"
mkdir -p "$pkg/bin" "$pkg/lib" "$pkg/licenses"

# Compiled by zig's clang against glibc 2.28's symbols (scripts/oldglibc),
# so the binary needs no glibc newer than its libraries do (2.27); GCC's
# libstdc++ linked in statically, its unwinder from the system's libgcc_s.
log "building $name"
oldglibc="$here/oldglibc"
[ -x "$root/.tools/zig/ziglang/zig" ] || { log "zig is missing from .tools/zig: run make dist (or bash scripts/setup-dist.sh)"; exit 1; }
"$oldglibc/cc" -c -O2 -o "$stage/compat.o" "$oldglibc/compat.c"
gcclib=$(dirname "$(gcc -print-file-name=libstdc++.a)")
# --allow-shlib-undefined: the build machine's libgcc_s needs a newer glibc
# than the target's stubs have; the target's own libgcc_s is used at run time.
CC="$oldglibc/cc" CXX="$oldglibc/c++" \
	CGO_LDFLAGS="-L/usr/lib/$(gcc -print-multiarch) -L$gcclib -Wl,--allow-shlib-undefined $stage/compat.o $gcclib/libstdc++.a $(gcc -print-file-name=libgcc_s.so.1) $gcclib/libgcc.a" \
	go build -trimpath -tags faiss_static \
	-ldflags "-s -w -X main.version=$version -X main.commit=$commit" \
	-o "$pkg/bin/micro-rag-mcp" ./cmd/micro-rag-mcp

# ONNX Runtime as setup installed it, checked again.
cache="${MICRO_RAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp}"
ortlib="$cache/lib/libonnxruntime.so.$ORT_VERSION"
echo "$ORT_SHA256  $ortlib" | sha256sum -c --quiet - || { log "run make setup: $ortlib is missing or altered"; exit 1; }
cp "$ortlib" "$pkg/lib/libonnxruntime.so"
cp -L "$(gcc -print-file-name=libquadmath.so.0)" "$pkg/lib/libquadmath.so.0"

# Every library the binary needs is either in lib/ or part of a base system
# (glibc, libgcc); anything else means the static link slipped.
deps=$(ldd "$pkg/bin/micro-rag-mcp")
if grep -q 'not found' <<<"$deps"; then
	log "unresolved libraries:"$'\n'"$deps"
	exit 1
fi
grep -q "libquadmath.so.0 => $pkg/bin/../lib/" <<<"$deps" || { log "libquadmath does not resolve into lib/:"$'\n'"$deps"; exit 1; }
extra=$(awk '/=>/ { print $1 }' <<<"$deps" | grep -v -E '^(libc|libm|libdl|libpthread|libresolv|libgcc_s|libquadmath|ld-linux-x86-64)\.so' || true)
[ -z "$extra" ] || { log "unexpected shared libraries: $extra"; exit 1; }
"$pkg/bin/micro-rag-mcp" --version >&2

cp README.md LICENSE THIRD_PARTY_NOTICES.md "$pkg/"
cp -r licenses/. "$pkg/licenses/"

# Licence texts of the Debian packages linked in, as Debian ships them.
mkdir -p "$pkg/licenses/debian"
for p in libfaiss-dev libopenblas0-pthread liblapack3 libgfortran5 libgomp1 libquadmath0 "libstdc++-$(gcc -dumpversion | cut -d. -f1)-dev" "libgcc-$(gcc -dumpversion | cut -d. -f1)-dev"; do
	cp "/usr/share/doc/$p/copyright" "$pkg/licenses/debian/$p.copyright"
done
# zig's licence: its compiler-rt and glibc start-up pieces are linked in.
mkdir -p "$pkg/licenses/zig"
cp "$root/.tools/zig/ziglang/LICENSE" "$pkg/licenses/zig/LICENSE"
for l in GPL-3 LGPL-2.1 Apache-2.0; do
	cp "/usr/share/common-licenses/$l" "$pkg/licenses/debian/$l"
done

# Licence and notice files of every Go module compiled into the binary,
# read from the module cache (paths escape capitals as !lower).
modcache=$(go env GOMODCACHE)
while read -r path ver; do
	esc=$(sed 's/[A-Z]/!\L&/g' <<<"$path")
	src="$modcache/$esc@$ver"
	dst="$pkg/licenses/go/$path"
	mkdir -p "$dst"
	found=0
	for f in "$src"/LICENSE* "$src"/LICENCE* "$src"/COPYING* "$src"/NOTICE* "$src"/PATENTS*; do
		[ -f "$f" ] || continue
		cp "$f" "$dst/"
		found=1
	done
	[ "$found" = 1 ] || { log "no licence file in $src"; exit 1; }
	echo "$path $ver" >>"$pkg/licenses/go/MODULES"
done < <(go version -m "$pkg/bin/micro-rag-mcp" | awk '$1 == "dep" { print $2, $3 }')

mkdir -p "$pkg/licenses/go/std"
cp "$(go env GOROOT)/LICENSE" "$pkg/licenses/go/std/LICENSE"

# One build's output at a time, so the tests and a find-links folder see
# only this version.
rm -f dist/SOURCE dist/micro-rag-mcp-* dist/micro_rag_mcp*
mkdir -p dist
tarball="dist/$name.tar.gz"
tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
	-czf "$tarball" -C "$stage" "$name"
(cd dist && sha256sum "$name.tar.gz" >"$name.tar.gz.sha256")
log "$tarball ($(du -h "$tarball" | cut -f1)), sha256 $(cut -d' ' -f1 "dist/$name.tar.gz.sha256")"

SOURCE_DATE_EPOCH=$epoch python3 "$here/pack.py" "$pkg" dist "$version"
echo "$key" >dist/SOURCE
