#!/usr/bin/env bash
# Builds dist/micro-rag-mcp-VERSION-linux-amd64.tar.gz: the binary with FAISS,
# OpenBLAS/LAPACK, the gfortran runtime, OpenMP and libstdc++ linked in, for
# glibc 2.27 and newer; lib/ with the
# ONNX Runtime library and libquadmath (found through the binary's
# $ORIGIN/../lib run path); README, LICENSE and every third-party licence
# text. From the same files, scripts/pack.py writes the wheel and the two
# npm tarballs. Beside them, dist/micro-rag-mcp-VERSION-model-all-MiniLM-L6-v2-q8.tar.gz:
# the project's int8 model and the fp32 model its queries are embedded by, as
# their own release asset, checked against their pins;
# and dist/model-all-MiniLM-L6-v2-q8-<12 hex of its SHA-256>/, its two files
# as the assets of the release of that tag, where a first run downloads them.
# Run through `make dist`, after setup.sh and setup-dist.sh.
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
cache="${MICRO_RAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp}"

# all-MiniLM-L6-v2-q8 is on no hub: a first run downloads it from a release
# of its own tagged with its hash (internal/model's Q8Source), and each
# version's release carries it as an asset too, models/<name>/ to unpack
# beside bin/ or into the cache folder for offline use (docs/int8.md); not
# in the packages, which would then pass 40 MB. Built as make
# models builds it when missing; a file that differs from its pin is refused,
# not rebuilt over. Checked here, before the long build, on the very copy
# that is packed. The asset carries fp32 all-MiniLM-L6-v2 beside it: the
# default model embeds queries with it (model.Model.Queries), and an
# offline first run fetches nothing, so without it queries would be int8's.
q8=all-MiniLM-L6-v2-q8
q8src="$cache/models/$q8"
if [ ! -f "$q8src/model.onnx" ] || [ ! -f "$q8src/tokenizer.json" ]; then
	log "$q8src lacks model.onnx or tokenizer.json: building it as make models does (scripts/quantize.sh)"
	"$here/quantize.sh" || { log "could not build $q8: run make models, then make dist again"; exit 1; }
fi
# stage_model NAME PIN FIX: copies NAME's model.onnx (pinned by the
# versions.env variable PIN) and tokenizer.json from the cache into the
# asset's staging folder and checks the copies; a missing or altered file
# stops the build with FIX, before anything is built.
stage_model() {
	local src="$cache/models/$1" dst="$stage/model/models/$1" fix=$3 f file var
	mkdir -p "$dst"
	for f in "model.onnx $2" "tokenizer.json MODEL_TOKENIZER_SHA256"; do
		read -r file var <<<"$f"
		[ -f "$src/$file" ] || { log "$src lacks $file: $fix"; exit 1; }
		cp "$src/$file" "$dst/" && chmod 0644 "$dst/$file"
		if ! verify "$dst/$file" "${!var}"; then
			log "refusing to pack $src/$file: its SHA-256 is $(sha256sum "$dst/$file" | cut -c1-64), scripts/versions.env's $var is ${!var}; delete $src and $fix"
			exit 1
		fi
	done
}
stage_model "$q8" MODEL_Q8_ONNX_SHA256 "run make models"
q8stage="$stage/model/models/$q8"
fp32=all-MiniLM-L6-v2
stage_model "$fp32" MODEL_ONNX_SHA256 "run make setup (the default model embeds its queries with it)"

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
rm -rf dist/model-*
mkdir -p dist
# pack_tar OUT DIR MEMBER... writes dist/OUT, the same bytes for the same
# files, and dist/OUT.sha256 beside it.
pack_tar() {
	local out=$1 dir=$2
	shift 2
	tar --sort=name --owner=0 --group=0 --numeric-owner --mtime="@$epoch" \
		-czf "dist/$out" -C "$dir" "$@"
	(cd dist && sha256sum "$out" >"$out.sha256")
	log "dist/$out ($(du -h "dist/$out" | cut -f1)), sha256 $(cut -d' ' -f1 "dist/$out.sha256")"
}
pack_tar "$name.tar.gz" "$stage" "$name"
# Only the model files, no folder entries: unpacked into a folder that
# already has models/, it changes nothing but the models' own files.
pack_tar "micro-rag-mcp-$version-model-$q8.tar.gz" "$stage/model" "models/$q8/model.onnx" "models/$q8/tokenizer.json" \
	"models/$fp32/model.onnx" "models/$fp32/tokenizer.json"
# The same two files under the names and tag the first-run download asks
# for (model.ModelReleaseTag): the release of this tag is made once per hash.
q8tag="model-$q8-${MODEL_Q8_ONNX_SHA256:0:12}"
mkdir -p "dist/$q8tag"
cp -p "$q8stage/model.onnx" "$q8stage/tokenizer.json" "dist/$q8tag/"
log "dist/$q8tag/: model.onnx and tokenizer.json, the assets of the release tagged $q8tag"

SOURCE_DATE_EPOCH=$epoch python3 "$here/pack.py" "$pkg" dist "$version"
echo "$key" >dist/SOURCE
