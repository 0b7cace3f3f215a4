#!/usr/bin/env bash
# Prints "VERSION COMMIT" for the build: VERSION is the nearest vX.Y.Z tag
# (git describe, "-dirty" when the tree has changes), else 0.0.0-dev+COMMIT
# until the first release is tagged; COMMIT is the 12-digit short hash.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
version=$(git describe --tags --match 'v[0-9]*' --dirty 2>/dev/null | sed 's/^v//') || true
if [ -z "$version" ]; then
	version="0.0.0-dev+$commit"
	git diff --quiet HEAD 2>/dev/null || version="$version.dirty"
fi
echo "$version $commit"
