#!/usr/bin/env bash
# Installs what make dist needs beyond building (setup.sh), idempotently:
# the gfortran runtime to link statically (Debian) and zig, whose clang
# builds against an old glibc, into .tools/zig.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
. "$here/versions.env"
. "$here/lib.sh"
log() { printf 'setup-dist: %s\n' "$*" >&2; }

# shellcheck disable=SC2086 # a list of names
install_debian_packages $DEBIAN_DIST_PACKAGES
pip_target "$root/.tools/zig" "$DIST_TOOLS"
