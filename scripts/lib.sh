# shellcheck shell=bash disable=SC2034
# Shared by scripts/demo and scripts/test: install what patchproof needs on a
# Debian 12 machine. Sourced, not run.


# Debian packages the host builder, the test suites and the benchmark use:
# every package of images/build.Dockerfile (the -dev libraries of the
# official image's profile among them; images' TestHostHasBuildPackages
# keeps the two lists together), and the servers and tools.
HOST_PACKAGES=(ca-certificates curl unzip git gcc g++ make pkg-config autoconf bison re2c ccache file
	libargon2-dev libcurl4-openssl-dev libonig-dev libreadline-dev libsodium-dev
	libsqlite3-dev libssl-dev libxml2-dev zlib1g-dev
	apache2 apache2-dev mariadb-server mariadb-client wrk valgrind linux-perf)
# And the Docker builder.
DOCKER_PACKAGES=(docker.io debootstrap)

# on_exit runs a command when the script exits, after those added before.
_exit_cmds=()
on_exit() {
	_exit_cmds+=("$1")
	# shellcheck disable=SC2154 # c is the trap's own loop variable
	trap 'for c in "${_exit_cmds[@]}"; do eval "$c"; done' EXIT
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then "$@"; else sudo "$@"; fi
}

# ensure_packages installs the Debian packages that are not installed yet.
ensure_packages() {
	local missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	echo "patchproof: installing ${missing[*]}" >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	# policy-rc.d keeps the packages' own services (apache2, mariadb) from
	# starting: patchproof starts its own, on free ports.
	as_root sh -c 'printf "#!/bin/sh\nexit 101\n" > /usr/sbin/policy-rc.d && chmod +x /usr/sbin/policy-rc.d'
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
	as_root rm -f /usr/sbin/policy-rc.d
}

# ensure_go puts a Go on PATH that runs the go.mod's toolchain. Any Go from
# 1.21 on switches itself to the toolchain go.mod names (GOTOOLCHAIN), which
# it fetches through `go env GOPROXY` and verifies against the checksum
# database; Debian 12's own golang (1.19) is too old for that, so where no Go
# is on the machine, golang-1.23-go comes from bookworm-backports, from the
# same mirror as the machine's other Debian sources.
ensure_go() {
	export PATH="/usr/local/go/bin:/usr/lib/go-1.23/bin:$HOME/go/bin:$PATH"
	export GOTOOLCHAIN="${GOTOOLCHAIN:-auto}"
	if command -v go >/dev/null 2>&1; then
		local have
		have=$(GOTOOLCHAIN=local go env GOVERSION 2>/dev/null | sed 's/^go//')
		if [ "$(printf '%s\n%s\n' "1.21" "$have" | sort -V | head -1)" = "1.21" ]; then
			return 0
		fi
	fi
	local mirror
	mirror=$(debian_mirror)
	if [ -z "$mirror" ]; then
		echo "patchproof: no Go 1.21 or newer, and no Debian mirror in the apt sources to install golang-1.23-go from" >&2
		return 1
	fi
	echo "patchproof: installing golang-1.23-go from bookworm-backports ($mirror)" >&2
	as_root sh -c "printf 'Types: deb\nURIs: %s\nSuites: bookworm-backports\nComponents: main\nSigned-By: /usr/share/keyrings/debian-archive-keyring.gpg\n' '$mirror' > /etc/apt/sources.list.d/patchproof-backports.sources"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q >&2
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends -t bookworm-backports golang-1.23-go >&2
}

# install_tools builds the named tools, at the versions tools/go.mod pins,
# into bin/ (staticcheck, actionlint, benchstat, govulncheck and x/vulndb's
# indexdb are there). They are bumped there like any dependency, and go
# verifies them through the checksum database.
install_tools() {
	GOBIN="$PWD/bin" go install -C tools "$@"
}

# debian_mirror prints the URI of the machine's main Debian archive, as apt
# has it (not the security archive). It succeeds with no output where there
# is none, so that `mirror=$(debian_mirror)` under set -e can say so: awk
# reads all its input where head would leave the writers a SIGPIPE.
debian_mirror() {
	if [ -n "${PATCHPROOF_DEBIAN_MIRROR:-}" ]; then
		echo "$PATCHPROOF_DEBIAN_MIRROR"
		return 0
	fi
	local f
	{
		for f in /etc/apt/sources.list.d/*.sources; do
			[ -f "$f" ] && awk '/^URIs:/ && $2 !~ /security/ { print $2; exit }' "$f"
		done
		if [ -f /etc/apt/sources.list ]; then
			awk '$1 == "deb" && $0 !~ /security/ { for (i = 2; i <= NF; i++) if ($i ~ /^[a-z]+:\/\//) { print $i; exit } }' /etc/apt/sources.list
		fi
	} | awk 'NR == 1'
}

# start_dockerd starts a Docker engine of our own unless one answers, and
# exports DOCKER_HOST. It is stopped when the calling script exits.
start_dockerd() {
	if [ -n "${DOCKER_HOST:-}" ] && docker version >/dev/null 2>&1; then return 0; fi
	if [ -S /var/run/docker.sock ] && DOCKER_HOST=unix:///var/run/docker.sock docker version >/dev/null 2>&1; then
		export DOCKER_HOST=unix:///var/run/docker.sock
		return 0
	fi
	local root=/var/lib/patchproof-docker
	as_root mkdir -p "$root/data" "$root/exec"
	export DOCKER_HOST=unix://$root/docker.sock
	as_root sh -c "dockerd --data-root $root/data --exec-root $root/exec -H $DOCKER_HOST --pidfile $root/dockerd.pid >$root/dockerd.log 2>&1 &"
	for _ in $(seq 1 60); do
		docker version >/dev/null 2>&1 && break
		sleep 1
	done
	docker version >/dev/null 2>&1 || { echo "patchproof: dockerd did not start; see $root/dockerd.log" >&2; tail -5 "$root/dockerd.log" >&2; return 1; }
	on_exit "as_root kill \$(cat $root/dockerd.pid) 2>/dev/null || true"
}
