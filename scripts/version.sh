#!/usr/bin/env bash
# Prints "VERSION COMMIT" for the build. VERSION is one spelling that the
# tarball, the wheel (PEP 440) and npm (semver) all take unchanged:
#   vX.Y.Z tagged            X.Y.Z
#   N commits past vX.Y.Z    X.Y.Z+N.gCOMMIT
#   no release tag yet       0.0.0+dev.COMMIT
# with ".dirty" appended to the +part (or "+dirty") when the tree has
# changes. The +part is a local version to PEP 440 and build metadata to
# semver. COMMIT is the 12-digit short hash.
set -euo pipefail
cd "$(dirname "$0")/.."
commit=$(git rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
# An all-digit hash with a leading zero would lose the zero in PEP 440's
# normal form: git's own "g" prefix keeps every hash a word.
word=$commit
[[ $commit =~ ^[0-9]+$ ]] && word="g$commit"
local_part=
if described=$(git describe --tags --match 'v[0-9]*.[0-9]*.[0-9]*' --long 2>/dev/null); then
	# vX.Y.Z-N-gHASH
	if [[ ! $described =~ ^v([0-9]+\.[0-9]+\.[0-9]+)-([0-9]+)-g([0-9a-f]+)$ ]]; then
		echo "version.sh: tag ${described%-*-*} is not vX.Y.Z" >&2
		exit 1
	fi
	version=${BASH_REMATCH[1]}
	[ "${BASH_REMATCH[2]}" = 0 ] || local_part="${BASH_REMATCH[2]}.g${BASH_REMATCH[3]}"
else
	version=0.0.0
	local_part="dev.$word"
fi
if ! git diff --quiet HEAD 2>/dev/null; then
	local_part="${local_part:+$local_part.}dirty"
fi
echo "$version${local_part:++$local_part} $commit"
