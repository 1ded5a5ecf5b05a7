#!/usr/bin/env bash
# Installs the pi test oracle (@earendil-works/pi-coding-agent, pinned by
# package.json + package-lock.json next to this script) into a cache dir.
#
#   DIR = ${PIFS_ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pifs/oracle-1.6.0}
#
# Idempotent and safe to run from several processes at once (flock, or a lock
# directory where flock is missing). npm output goes to stderr; the last line
# on stdout is the oracle dir.
set -euo pipefail

VERSION=1.6.0
: "${HOME:=$(echo ~)}" # bash falls back to the passwd entry when HOME is unset
SRC="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
DIR="${PIFS_ORACLE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/pifs/oracle-$VERSION}"
PKG="$DIR/node_modules/@earendil-works/pi-coding-agent/package.json"
MARK="$DIR/.pifs-oracle-installed"

installed() {
	# The marker is written only after a complete `npm ci`, so a half-finished
	# install by another process is never taken for a finished one; comparing
	# the manifests re-installs when the pinned lock changes.
	[ -f "$PKG" ] && [ -f "$MARK" ] || return 1
	cmp -s "$SRC/package.json" "$DIR/package.json" || return 1
	cmp -s "$SRC/package-lock.json" "$DIR/package-lock.json" || return 1
	local v
	v="$(node -e 'process.stdout.write(String(JSON.parse(require("fs").readFileSync(process.argv[1], "utf8")).version))' "$PKG" 2>/dev/null)" || return 1
	[ "$v" = "$VERSION" ]
}

if installed; then
	echo "$DIR"
	exit 0
fi

command -v node >/dev/null 2>&1 || { echo "install.sh: node not found" >&2; exit 3; }
command -v npm >/dev/null 2>&1 || { echo "install.sh: npm not found" >&2; exit 3; }

mkdir -p "$DIR"
LOCK="$DIR.lock"

unlock() { :; }
if command -v flock >/dev/null 2>&1; then
	exec 9>"$LOCK"
	flock 9
else
	# Portable fallback: mkdir is atomic. A lock older than 20 minutes is stale.
	tries=0
	until mkdir "$LOCK.d" 2>/dev/null; do
		tries=$((tries + 1))
		if [ -n "$(find "$LOCK.d" -maxdepth 0 -mmin +20 2>/dev/null)" ]; then
			rm -rf "$LOCK.d"
			continue
		fi
		if [ "$tries" -gt 1200 ]; then
			echo "install.sh: timed out waiting for $LOCK.d" >&2
			exit 4
		fi
		sleep 1
	done
	unlock() { rm -rf "$LOCK.d"; trap - EXIT; }
	trap unlock EXIT
fi

# Another process may have finished the install while we waited.
if ! installed; then
	rm -f "$MARK"
	cp "$SRC/package.json" "$SRC/package-lock.json" "$DIR/"
	(
		cd "$DIR"
		npm ci --ignore-scripts --no-audit --no-fund --loglevel=error 1>&2
	)
	touch "$MARK"
	if ! installed; then
		echo "install.sh: $PKG missing or not version $VERSION after npm ci" >&2
		exit 5
	fi
fi

unlock
echo "$DIR"
