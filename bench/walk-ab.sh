#!/usr/bin/env bash
# walk-ab.sh — one walk over a store (ls -l, find, grep -r, ...) on a fresh
# mount, for several pifs binaries, one after the other in each round, so
# that a machine's load falls on all of them alike. Each run mounts STORE
# afresh (with --cache-dir none where the binary has it), runs COMMAND in
# the mountpoint twice, and reads the pifs process's CPU (user + system,
# /proc/PID/stat) around each. Prints one line a run, tab-separated: round,
# name, CPU of the first run (ms), CPU of the second (ms), wall of the
# first (ms), wall of the second (ms), lines the command printed, load
# average.
#
# Usage: bench/walk-ab.sh ROUNDS STORE COMMAND NAME=BINARY...
#   e.g. bench/walk-ab.sh 5 /tmp/pifs-scale-large/A 'find . -maxdepth 3' old=/path/pifs new=bin/pifs
# A pifs without some of its names, to measure what they cost:
#   git apply bench/results/2026-12-02-without-new-views.patch && go build -o /tmp/without ./cmd/pifs
set -euo pipefail
[ $# -ge 4 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
rounds=$1 store=$2 command=$3
shift 3
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
		extra=()
		if "$bin" --help 2>&1 | grep -q -- --cache-dir; then extra=(--cache-dir none); fi
		"$bin" --sessions-dir "$store" "${extra[@]}" "$mnt" 2>/dev/null &
		pid=$!
		for _ in $(seq 1200); do mountpoint -q "$mnt" && break; sleep 0.05; done
		mountpoint -q "$mnt" || { echo "walk-ab.sh: $bin did not mount" >&2; exit 1; }
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
