#!/usr/bin/env bash
# branch-floor.sh — `ls -l branches/<leaf>` of the 60,000-entry session
# (bench/scale.sh's figure 3 row) on fresh pifs mounts, after `cat
# context.json` (the session parsed), beside bench/gofloor serving the same
# names and sizes from memory with pifs's mount options: the floor of that
# listing for a go-fuse server built as pifs is. Prints wall time and the
# server's CPU for each round, first and again.
#
# Usage: bench/branch-floor.sh PIFS-BINARY DEEP-STORE [ROUNDS]
#   e.g. bench/branch-floor.sh bin/pifs /tmp/pifs-scale-large/deep 3
# (bench/scale.sh --large makes the deep store; its 60,000-entry session
# is the one listed.)
set -euo pipefail
[ $# -ge 2 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
bin=$1 store=$2 rounds=${3:-3}
cd "$(dirname "$0")/.."
work=$(mktemp -d)
mnt=$work/mnt
mkdir "$mnt"
cleanup() {
	fusermount3 -u "$mnt" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/gofloor" ./bench/gofloor
dir=$(cd "$store" && ls -d ./--home-user-deep--/*000000060000.jsonl | sed 's/\.jsonl$//')
cpu() { awk '{print $14 + $15}' "/proc/$1/stat"; } # clock ticks
mounted() { for _ in $(seq 100); do grep -q " $mnt " /proc/mounts && return; sleep 0.1; done; echo "no mount at $mnt" >&2; exit 1; }
ms() { echo $((($2 - $1) / 1000000)); }
tick=$(getconf CLK_TCK)
round() { # NAME PID: the listing, first and again
	local t0 t1 t2 c0 c1 n leaf
	leaf=$(cat "$mnt/$dir/leaf" 2>/dev/null || cat "$work/leaf")
	c0=$(cpu "$2") t0=$(date +%s%N)
	n=$(ls -l "$mnt/$dir/branches/$leaf" | wc -l)
	t1=$(date +%s%N) c1=$(cpu "$2")
	ls -l "$mnt/$dir/branches/$leaf" > /dev/null
	t2=$(date +%s%N)
	echo -e "$1\t$n lines\tfirst $(ms "$t0" "$t1") ms\tserver cpu $(((c1 - c0) * 1000 / tick)) ms\tagain $(ms "$t1" "$t2") ms"
}
for r in $(seq "$rounds"); do
	"$bin" --sessions-dir "$store" --cache-dir none "$mnt" 2>> "$work/log" &
	pid=$!
	mounted
	cat "$mnt/$dir/context.json" > /dev/null
	round pifs "$pid"
	if [ ! -s "$work/manifest" ]; then
		cat "$mnt/$dir/leaf" > "$work/leaf"
		(cd "$mnt" && find "$dir/branches/$(cat "$work/leaf")" -maxdepth 1 -printf '%y\0%s\0%p\0%l\0') > "$work/manifest"
	fi
	fusermount3 -u "$mnt"
	wait "$pid"
	"$work/gofloor" "$work/manifest" "$mnt" 2>> "$work/log" &
	pid=$!
	mounted
	round gofloor "$pid"
	fusermount3 -u "$mnt"
	wait "$pid"
done
