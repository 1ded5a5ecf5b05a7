#!/usr/bin/env bash
# mount.sh MOUNTPOINT [pifs flags...] — build pifs and mount your pi
# sessions there, or a copy of the demo store when you have none.
# Runs in the foreground; Ctrl-C unmounts.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mnt=${1:?usage: mount.sh MOUNTPOINT [pifs flags...]}
shift
mkdir -p "$mnt"
if ! command -v fusermount3 >/dev/null; then
	if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
		apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq fuse3 >/dev/null
	else
		echo "mount.sh: FUSE 3 is needed: apt-get install fuse3" >&2
		exit 1
	fi
fi
bin="$here/bin/pifs"
(cd "$here" && go build -o "$bin" ./cmd/pifs)

dir=${PI_CODING_AGENT_SESSION_DIR:-${PI_CODING_AGENT_DIR:+$PI_CODING_AGENT_DIR/sessions}}
dir=${dir:-$HOME/.pi/agent/sessions}
if [ ! -d "$dir" ] || [ -z "$(ls -A "$dir" 2>/dev/null)" ]; then
	dir=$(mktemp -d "${TMPDIR:-/tmp}/pifs-demo.XXXXXX")
	cp -r "$here/testdata/demo/." "$dir/"
	echo "no pi sessions found; mounting a copy of the demo store ($dir)" >&2
fi
echo "mounting $dir on $mnt (Ctrl-C to unmount)" >&2
exec "$bin" --sessions-dir "$dir" "$@" "$mnt"
