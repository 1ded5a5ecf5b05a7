#!/usr/bin/env bash
# ls-ab.sh — the first `ls -l` of every session folder (bench/scale.sh's
# figure 1 row, "ls -l MNT/--*/*/ first, fresh mount") for several pifs
# binaries, one after the other in each round, so that a machine's load
# falls on all of them alike. Each run mounts STORE afresh (with
# --cache-dir none where the binary has it), runs `ls -l ./--*/*/ | wc -l`
# twice, and reads the pifs process's CPU (user + system, /proc/PID/stat)
# around each. Prints one line a run, tab-separated: round, name, CPU of
# the first ls -l (ms), CPU of the second (ms), wall of the first (ms),
# lines, load average.
#
# Usage: bench/ls-ab.sh ROUNDS STORE NAME=BINARY...
#   e.g. bench/ls-ab.sh 3 /tmp/pifs-scale-large/A old=/path/pifs new=bin/pifs
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
rounds=$1 store=$2
shift 2
mnt=$(mktemp -d)
pid=
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then fusermount3 -uz "$mnt" || true; fi
	if [ -n "$pid" ]; then wait "$pid" 2>/dev/null || true; fi
	rmdir "$mnt" 2>/dev/null || true
}
trap cleanup EXIT
cpu() { awk '{print ($14 + $15) * 1000 / '"$(getconf CLK_TCK)"'}' "/proc/$pid/stat"; }
printf 'round\tname\tcpu_first_ms\tcpu_again_ms\twall_first_ms\tlines\tload\n'
for r in $(seq "$rounds"); do
	for nb in "$@"; do
		name=${nb%%=*} bin=${nb#*=}
		extra=()
		if "$bin" --help 2>&1 | grep -q -- --cache-dir; then extra=(--cache-dir none); fi
		"$bin" --sessions-dir "$store" "${extra[@]}" "$mnt" 2>/dev/null &
		pid=$!
		for _ in $(seq 1200); do mountpoint -q "$mnt" && break; sleep 0.05; done
		mountpoint -q "$mnt" || { echo "ls-ab.sh: $bin did not mount" >&2; exit 1; }
		load=$(cut -d' ' -f1 /proc/loadavg)
		c0=$(cpu) t0=$(date +%s%N)
		lines=$(cd "$mnt" && ls -l ./--*/*/ | wc -l)
		t1=$(date +%s%N) c1=$(cpu)
		(cd "$mnt" && ls -l ./--*/*/ | wc -l) >/dev/null
		c2=$(cpu)
		fusermount3 -u "$mnt"
		wait "$pid" || true
		pid=
		printf '%s\t%s\t%.0f\t%.0f\t%d\t%s\t%s\n' "$r" "$name" "$(echo "$c1 - $c0" | bc)" "$(echo "$c2 - $c1" | bc)" $(((t1 - t0) / 1000000)) "$lines" "$load"
	done
done
