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
