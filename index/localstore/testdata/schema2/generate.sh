#!/bin/sh
# Writes index/, the index the code at COMMIT (default: main) writes, and
# first-vectors.json (each file's first chunk vector, to search it with),
# for index/localstore/upgrade_test.go. Run from anywhere inside the repository:
#   index/localstore/testdata/schema2/generate.sh [COMMIT]
set -eu
commit=${1:-main}
here=$(cd "$(dirname "$0")" && pwd)
src=$(mktemp -d)
trap 'rm -rf "$src"' EXIT
top=$(git -C "$here" rev-parse --show-toplevel)
git -C "$top" archive "$commit" | tar -x -C "$src"
cp "$here/gen_fixture_test.go" "$src/index/zz_gen_fixture_test.go"
rm -rf "$here/index"
(cd "$src" && FIXTURE_OUT="$here/index" CGO_ENABLED=1 go test -count=1 -run '^TestWriteUpgradeFixture$' ./index/)
chmod 644 "$here"/index/* "$here/first-vectors.json"
git -C "$top" rev-parse "$commit" > "$here/COMMIT"
