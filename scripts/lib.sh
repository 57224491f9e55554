# shellcheck shell=bash disable=SC2034
# Shared by scripts/demo and scripts/test: install what patchproof needs on a
# Debian 12 machine. Sourced, not run.

GO_VERSION=1.26.8

# Debian packages the host builder, the test suites and the benchmark use.
HOST_PACKAGES=(ca-certificates curl unzip git gcc g++ make pkg-config autoconf bison re2c ccache
	apache2 apache2-dev mariadb-server mariadb-client wrk valgrind)
# And the Docker builder.
DOCKER_PACKAGES=(docker.io debootstrap)

# on_exit runs a command when the script exits, after those added before.
_exit_cmds=()
on_exit() {
	_exit_cmds+=("$1")
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

# ensure_go puts Go $GO_VERSION (or newer) on PATH. Debian 12's golang is too
# old; the toolchain comes from the Go module proxy, which is reachable where
# go.dev may not be.
ensure_go() {
	export PATH="/usr/local/go/bin:$HOME/go/bin:$PATH"
	if command -v go >/dev/null 2>&1; then
		local have
		have=$(go env GOVERSION 2>/dev/null | sed 's/^go//')
		if [ "$(printf '%s\n%s\n' "$GO_VERSION" "$have" | sort -V | head -1)" = "$GO_VERSION" ]; then
			return 0
		fi
	fi
	local dir=/usr/local/go-toolchain/go$GO_VERSION
	if [ ! -x "$dir/bin/go" ]; then
		ensure_packages ca-certificates curl unzip
		local zip=/tmp/go$GO_VERSION.zip
		echo "patchproof: installing Go $GO_VERSION from the module proxy" >&2
		curl -fsSL -o "$zip" "https://proxy.golang.org/golang.org/toolchain/@v/v0.0.1-go$GO_VERSION.linux-amd64.zip"
		as_root rm -rf "$dir.tmp" && as_root mkdir -p "$dir.tmp"
		as_root unzip -q "$zip" -d "$dir.tmp"
		as_root mv "$dir.tmp/golang.org/toolchain@v0.0.1-go$GO_VERSION.linux-amd64" "$dir"
		as_root rm -rf "$dir.tmp" "$zip"
		as_root chmod +x "$dir"/bin/* "$dir"/pkg/tool/*/*
	fi
	export PATH="$dir/bin:$PATH"
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
