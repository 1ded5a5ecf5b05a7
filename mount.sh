#!/usr/bin/env bash
# mount.sh MOUNTPOINT [pifs flags...] — build pifs and mount your pi
# sessions there, or a copy of the demo store when you have none.
# Runs in the foreground; Ctrl-C unmounts. mount.sh --help shows pifs's help.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# A Go toolchain at least as new as go.mod's "go" line.
need=$(sed -n 's/^go \([0-9][0-9.]*\)$/\1/p' "$here/go.mod")
newer_or_equal() { [ "$(printf '%s\n%s\n' "$2" "$1" | sort -V | head -n1)" = "$2" ]; }
go_version() { "$1" env GOVERSION 2>/dev/null | sed 's/^go//; s/[^0-9.].*//'; }
go=""
for cand in "$(command -v go || true)" /usr/local/go/bin/go $(ls -d /usr/lib/go-1.*/bin/go 2>/dev/null | sort -rV); do
	if [ -n "$cand" ] && [ -x "$cand" ] && newer_or_equal "$(go_version "$cand")" "$need"; then
		go=$cand
		break
	fi
done
if [ -z "$go" ]; then
	found=$(command -v go >/dev/null && go_version go || echo none)
	pkg=golang-$(echo "$need" | cut -d. -f1,2)
	cat >&2 <<MSG
mount.sh: building pifs needs Go $need or newer (found: $found).
  Debian 12's golang-go is 1.19, too old. Either:
  - from bookworm-backports: apt install -t bookworm-backports $pkg (or newer)
    (mount.sh finds /usr/lib/go-1.*/bin/go by itself), or
  - the official tarball from https://go.dev/dl/, unpacked into /usr/local/go
    (mount.sh finds /usr/local/go/bin/go by itself).
MSG
	exit 1
fi

bin="$here/bin/pifs"
(cd "$here" && "$go" build -o "$bin" ./cmd/pifs)

case "${1:-}" in
-h | --help | -V | --version) exec "$bin" "$1" ;;
"" | -*)
	echo "usage: mount.sh MOUNTPOINT [pifs flags...]   (mount.sh --help for pifs's flags)" >&2
	exit 2
	;;
esac
mnt=$1
shift
[ -e "$mnt" ] || mkdir -p -- "$mnt"

if ! command -v fusermount3 >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fuse3 >/dev/null
	else
		echo "mount.sh: FUSE 3 is needed: apt-get install fuse3" >&2
		exit 1
	fi
fi

# pifs finds your sessions itself (as pi does); only when there are none
# does mount.sh give it a copy of the demo store, removed on exit.
flags=()
dir=${PI_CODING_AGENT_SESSION_DIR:-${PI_CODING_AGENT_DIR:+$PI_CODING_AGENT_DIR/sessions}}
dir=${dir:-$HOME/.pi/agent/sessions}
demo=""
case " $* " in *" --sessions-dir"*) dir="" ;; esac
if [ -n "$dir" ] && { [ ! -d "$dir" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ]; }; then
	demo=$(mktemp -d "${TMPDIR:-/tmp}/pifs-demo.XXXXXX")
	trap 'rm -rf "$demo"' EXIT
	cp -r "$here/testdata/demo/." "$demo/"
	echo "no pi sessions found; mounting a copy of the demo store ($demo)" >&2
	flags=(--sessions-dir "$demo")
fi

# pifs gets Ctrl-C and a closed terminal's SIGHUP itself (same process
# group) and unmounts; a TERM sent to this script is passed on. The demo
# copy is removed only once pifs has exited.
"$bin" ${flags[@]+"${flags[@]}"} "$@" "$mnt" &
pid=$!
trap ':' INT HUP
trap 'kill -TERM "$pid" 2>/dev/null || true' TERM
status=0
while kill -0 "$pid" 2>/dev/null; do
	wait "$pid" && status=0 || status=$?
done
exit "$status"
