#!/usr/bin/env bash
# Clean-room proof that micro-rag-mcp installs anywhere (not part of make
# test: it takes half an hour or more). As root, after `make dist`:
#
#   scripts/cleanroom.sh [WORKDIR]      (default /var/tmp/micro-rag-cleanroom)
#   CLEANROOM_PARTS=b scripts/cleanroom.sh   (only one part: a or b)
#
# It makes a minimal Debian 12 root with debootstrap, from the Debian mirror
# this machine's apt already uses, and then in two copies of it:
#  a) unpacks the newest dist/ tarball and runs an MCP session on a small
#     folder (testdata/sample) with bash as the client, under
#     `env -i HOME=<empty> PATH=/usr/bin:/bin`, with no network at all
#     (unshare -n). Nothing but the base system is installed: no FAISS, BLAS
#     or ONNX Runtime packages. No model hub is reachable from here, so the
#     model comes from a local copy through --model-dir.
#  b) clones this repository (its current branch) and runs
#     `make setup && make test`; setup must bring every tool itself. Only git
#     (to clone) and make (to say `make setup`) are installed first.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/.." && pwd)
. "$here/lib.sh"
log() { printf '\ncleanroom: %s\n' "$*" >&2; }

[ "$(id -u)" -eq 0 ] || { log "run as root (debootstrap and chroot)"; exit 1; }
work=${1:-/var/tmp/micro-rag-cleanroom}
parts=${CLEANROOM_PARTS:-ab}
tarball=$(ls -t "$repo"/dist/micro-rag-mcp-*-linux-amd64.tar.gz 2>/dev/null | head -n1) || true
[ -n "$tarball" ] || { log "no tarball in dist/: run make dist first"; exit 1; }
cache="${MICRO_RAG_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/micro-rag-mcp}"
model="$cache/models/all-MiniLM-L6-v2-q8" # the default model
[ -s "$model/model.onnx" ] && [ -s "$model/tokenizer.json" ] || { log "no model in $model: run make setup"; exit 1; }

command -v debootstrap >/dev/null || install_debian_packages debootstrap
mirror=$(debian_mirror)
[ -n "$mirror" ] || { log "no Debian archive in apt's sources"; exit 1; }

mounted=()
cleanup() {
	local m
	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		m=${mounted[i]}
		umount -R "$m" 2>/dev/null || umount -l "$m" 2>/dev/null || true
	done
}
trap cleanup EXIT

# enter ROOT: the kernel file systems a chroot needs; rslave so unmounting
# them never reaches the host's /dev.
enter() {
	local r=$1
	mount -t proc proc "$r/proc" && mounted+=("$r/proc")
	mount -t sysfs sys "$r/sys" && mounted+=("$r/sys")
	mount --rbind /dev "$r/dev" && mount --make-rslave "$r/dev" && mounted+=("$r/dev")
	cp /etc/resolv.conf "$r/etc/resolv.conf"
}

rm -rf "$work"
mkdir -p "$work"
log "debootstrap --variant=minbase bookworm from $mirror"
debootstrap --variant=minbase bookworm "$work/base" "$mirror" >"$work/debootstrap.log" 2>&1 ||
	{ tail -20 "$work/debootstrap.log"; exit 1; }
cp -a "$work/base" "$work/a"
mv "$work/base" "$work/b"

# --- a) the tarball, nothing else -------------------------------------------
a="$work/a"
if [[ $parts == *a* ]]; then
enter "$a"
mkdir -p "$a/opt/micro-rag-mcp" "$a/opt/model" "$a/srv/docs" "$a/home/empty"
tar -xzf "$tarball" -C "$a/opt/micro-rag-mcp" --strip-components=1
cp "$model/model.onnx" "$model/tokenizer.json" "$a/opt/model/"
cp -r "$repo/testdata/sample/." "$a/srv/docs/"
cat >"$a/opt/session.sh" <<'EOF'
# An MCP session over stdio with bash as the client: initialize, tools/list,
# reindex (retried while the server's own first reindex is busy), search.
set -euo pipefail
bin=/opt/micro-rag-mcp/bin/micro-rag-mcp
echo "env: $(env | tr '\n' ' ')"
echo "ldd $bin:"; ldd "$bin"
"$bin" --version
coproc SRV { "$bin" --data-folder /srv/docs --title cleanroom --inst "Search the sample folder." --model-dir /opt/model 2>/tmp/server.log; }
exec 3>&"${SRV[1]}" 4<&"${SRV[0]}"
send() { printf '%s\n' "$1" >&3; echo ">> ${1:0:160}"; }
# answer ID: the response line with that id (notifications skipped).
answer() {
	local line
	while IFS= read -r -t 600 line <&4; do
		case $line in *"\"id\":$1,"* | *"\"id\":$1}"*) printf '%s\n' "$line"; return 0 ;; esac
	done
	echo "no answer to request $1" >&2; return 1
}
send '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"cleanroom-bash","version":"1"}}}'
reply=$(answer 1); echo "<< ${reply:0:300}"
send '{"jsonrpc":"2.0","method":"notifications/initialized"}'
send '{"jsonrpc":"2.0","id":2,"method":"tools/list"}'
reply=$(answer 2); echo "<< tools: $(grep -o '"name":"[a-z_]*"' <<<"$reply" | tr '\n' ' ')"
id=3
while :; do
	send '{"jsonrpc":"2.0","id":'$id',"method":"tools/call","params":{"name":"reindex","arguments":{}}}'
	reply=$(answer $id); id=$((id + 1))
	case $reply in *'busy:'*) sleep 1 ;; *) break ;; esac
done
echo "<< ${reply:0:400}"
send '{"jsonrpc":"2.0","id":'$id',"method":"tools/call","params":{"name":"search","arguments":{"query":"how many days of parental leave do employees get","top_k":3}}}'
reply=$(answer $id)
echo "<< paths: $(grep -o '"path":"[^"]*"' <<<"$reply" | tr '\n' ' ')"
grep -q '"path":"employee-handbook-leave.docx"' <<<"$reply" || { echo "FAIL: the handbook was not found"; exit 1; }
id=$((id + 1))
send '{"jsonrpc":"2.0","id":'$id',"method":"tools/call","params":{"name":"search","arguments":{"query":"event ingestion design","top_k":3}}}'
reply=$(answer $id)
echo "<< paths: $(grep -o '"path":"[^"]*"' <<<"$reply" | tr '\n' ' ')"
grep -q '"path":"event-ingestion-design.pdf"' <<<"$reply" || { echo "FAIL: the PDF was not found"; exit 1; }
# EOF on the server's stdin ends the session: close every copy of the pipe.
exec 3>&- {SRV[1]}>&-
wait "$SRV_PID" || true
echo "server stderr (last lines):"; tail -n 8 /tmp/server.log
echo "files the server wrote under HOME:"; (cd /home/empty && find . -maxdepth 4 | head -20)
echo "PASS: MCP session from the tarball"
EOF
log "a) installed packages matching faiss|blas|lapack|onnx|gfortran|python|golang|node (expect none):"
chroot "$a" dpkg-query -W -f='${Package}\n' | grep -E 'faiss|blas|lapack|onnx|gfortran|python|golang|nodejs' || echo "(none)"
log "a) MCP session from the tarball, no network, bare environment"
unshare -n chroot "$a" /usr/bin/env -i HOME=/home/empty PATH=/usr/bin:/bin /bin/bash /opt/session.sh
fi
[[ $parts == *b* ]] || exit 0

# --- b) from source: make setup && make test --------------------------------
b="$work/b"
enter "$b"
# This network inspects TLS with its own authority; give the clean room the
# host's extra certificates so package clients can reach the registries.
if compgen -G "/usr/local/share/ca-certificates/*.crt" >/dev/null; then
	mkdir -p "$b/usr/local/share/ca-certificates"
	cp /usr/local/share/ca-certificates/*.crt "$b/usr/local/share/ca-certificates/"
fi
branch=$(git -C "$repo" rev-parse --abbrev-ref HEAD)
git clone -q --branch "$branch" "$repo" "$b/root/micro-rag-mcp"
log "b) cloned $branch at $(git -C "$b/root/micro-rag-mcp" log -1 --format='%h %s')"
benv=(/usr/bin/env -i HOME=/root PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
	LANG=C.UTF-8 NODE_EXTRA_CA_CERTS=/etc/ssl/certs/ca-certificates.crt)
chroot "$b" "${benv[@]}" /bin/bash -c '
	set -e
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends git make ca-certificates >/dev/null
	update-ca-certificates >/dev/null 2>&1
	cd /root/micro-rag-mcp
	echo "before setup: go=$(command -v go || echo none) npm=$(command -v npm || echo none) mvn=$(command -v mvn || echo none) g++=$(command -v g++ || echo none) python3=$(command -v python3 || echo none)"
	time make setup
	echo "after setup: $(go version) | npm $(npm --version) | $(mvn -v 2>/dev/null | head -n1) | $(g++ --version | head -n1)"
	time make test
	echo "second make setup (must be a no-op):"
	time make setup
'
log "b) PASS: make setup && make test in a fresh Debian 12"
