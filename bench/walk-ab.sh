#!/usr/bin/env bash
# walk-ab.sh — one walk over a store (ls -l, find, grep -r, ...) on a fresh
# mount, for several pifs binaries (and the floor servers), one after the
# other in each round, so that a machine's load falls on all of them alike.
# Each run mounts STORE afresh (with --cache-dir none where the binary has
# it), runs COMMAND in the mountpoint twice, and reads the server's CPU
# (user + system, /proc/PID/stat) around each. Prints one line a run,
# tab-separated: round, name, CPU of the first run (ms), CPU of the second
# (ms), wall of the first (ms), wall of the second (ms), lines the command
# printed, load average.
#
# Usage: bench/walk-ab.sh ROUNDS STORE COMMAND NAME=BINARY...
#   e.g. bench/walk-ab.sh 5 /tmp/pifs-scale-large/A 'find . -maxdepth 3' old=/path/pifs new=bin/pifs
# A contender is a pifs binary, or:
#   NAME=floor:MANIFEST     bench/floor serving MANIFEST (built as $FLOOR, default
#                           /tmp/floor; gcc -O2 -o /tmp/floor bench/floor/floor.c
#                           $(pkg-config --cflags --libs fuse3)); floor-d:MANIFEST with -d
#   NAME=gofloor:MANIFEST   bench/gofloor serving MANIFEST (go run, or $GOFLOOR)
# where MANIFEST is what `find . -printf '%y\0%s\0%p\0%l\0'` writes through a
# pifs mount of STORE (the names the command reaches).
# NAME may end in @DIR to mount pifs with --cache-dir DIR instead of none (a
# remount: walk once with that DIR first, then measure).
# $WALK_SETUP, when set, is run in the mountpoint before the first timed run
# (untimed): 'ls -l ./--*/*/' there and in COMMAND times that listing
# repeated.
# $PIFS_ARGS, when set, is more flags for every pifs mount (split at spaces):
# PIFS_ARGS='--cache-size 64MiB'.
# $WALK_RT=1 runs everything at real-time priority (chrt -f 10, as root):
# on a machine shared with other work, the walk and the server then take
# the cores when they need them, which spreads the results far less; it
# does nothing against other work's use of memory bandwidth.
# A pifs without some of its names, to measure what they cost:
#   git apply bench/results/2026-12-02-without-new-views.patch && go build -o /tmp/without ./cmd/pifs
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
if [ "${WALK_RT:-}" = 1 ] && [ -z "${WALK_RT_ON:-}" ]; then
	WALK_RT_ON=1 exec chrt -f 10 "$0" "$@"
fi
rounds=$1 store=$2 command=$3
shift 3
floorbin=${FLOOR:-/tmp/floor}
gofloorbin=${GOFLOOR:-}
if [ -z "$gofloorbin" ]; then
	for nb in "$@"; do
		case ${nb#*=} in gofloor:*)
			gofloorbin=$(mktemp -d)/gofloor
			(cd "$(dirname "$0")/.." && go build -o "$gofloorbin" ./bench/gofloor)
			break ;;
		esac
	done
fi
mnt=$(mktemp -d)
pid=
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then fusermount3 -uz "$mnt" || true; fi
	if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
cpu() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$pid/stat"; }
now() { date +%s%N; }
printf 'round\tname\tcpu_first_ms\tcpu_again_ms\twall_first_ms\twall_again_ms\tlines\tload\n'
for r in $(seq "$rounds"); do
	for nb in "$@"; do
		name=${nb%%=*} bin=${nb#*=}
		cachedir=none
		case $name in *@*) cachedir=${name#*@} name=${name%%@*} ;; esac
		case $bin in
		floor:*) "$floorbin" "${bin#floor:}" "$mnt" -f 2>/dev/null & ;;
		floor-d:*) "$floorbin" -d "${bin#floor-d:}" "$mnt" -f 2>/dev/null & ;;
		gofloor:*) "$gofloorbin" "${bin#gofloor:}" "$mnt" 2>/dev/null & ;;
		*)
			extra=()
			if "$bin" --help 2>&1 | grep -q -- --cache-dir; then extra=(--cache-dir "$cachedir"); fi
			# shellcheck disable=SC2086 # $PIFS_ARGS is split into flags
			"$bin" --sessions-dir "$store" "${extra[@]}" ${PIFS_ARGS:-} "$mnt" 2>/dev/null &
			;;
		esac
		pid=$!
		for _ in $(seq 1200); do mountpoint -q "$mnt" && break; sleep 0.05; done
		mountpoint -q "$mnt" || { echo "walk-ab.sh: $bin did not mount" >&2; exit 1; }
		if [ -n "${WALK_SETUP:-}" ]; then (cd "$mnt" && bash -c "$WALK_SETUP" >/dev/null); fi
		load=$(cut -d' ' -f1 /proc/loadavg)
		c0=$(cpu) t0=$(now)
		lines=$(cd "$mnt" && bash -c "$command" | wc -l)
		t1=$(now) c1=$(cpu)
		(cd "$mnt" && bash -c "$command" >/dev/null)
		t2=$(now) c2=$(cpu)
		fusermount3 -u "$mnt"
		wait "$pid" || true
		pid=
		printf '%s\t%s\t%.0f\t%.0f\t%d\t%d\t%s\t%s\n' "$r" "$name" "$(echo "$c1 - $c0" | bc)" "$(echo "$c2 - $c1" | bc)" \
			$(((t1 - t0) / 1000000)) $(((t2 - t1) / 1000000)) "$lines" "$load"
	done
done
