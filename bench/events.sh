#!/usr/bin/env bash
# events.sh — MOUNT/events against tail -f of the raw session files: the
# latency from a write to the line in the reader (median, p99, max), lines
# lost, doubled or out of order, and the idle CPU of pifs and of tail with
# the readers open (bench/events/main.go).
#
# Usage: bench/events.sh [--shared] [N_LINES] [RATE_PER_S] [SESSIONS] [OUT.json]
#   default: 1000 lines at 100 a second over 20 sessions, printed only.
#   --shared: pifs with --allow-other, every other session 0600, and a
#   third reader as user 65534 (needs root), who must get the others only.
set -euo pipefail
cd "$(dirname "$0")/.."
shared=
if [ "${1:-}" = --shared ]; then shared=--shared; shift; fi
n=${1:-1000} rate=${2:-100} sessions=${3:-20} out=${4:-}
work=$(mktemp -d)
[ -n "$shared" ] && chmod 755 "$work"
mnt=$work/mnt
cleanup() {
	if mountpoint -q "$mnt" 2>/dev/null; then fusermount3 -uz "$mnt" || true; fi
	[ -n "${pid:-}" ] && kill "$pid" 2>/dev/null || true
	rm -rf "$work"
}
trap cleanup EXIT
go build -o "$work/pifs" ./cmd/pifs
go build -o "$work/events" ./bench/events
mkdir -p "$work/store" "$mnt"
"$work/pifs" --cache-dir none ${shared:+--allow-other} --sessions-dir "$work/store" "$mnt" 2>"$work/log" &
pid=$!
for _ in $(seq 50); do mountpoint -q "$mnt" && break; sleep 0.1; done
"$work/events" -mnt "$mnt" -store "$work/store" -pid "$pid" -n "$n" -rate "$rate" -sessions "$sessions" ${out:+-out "$out"} \
	${shared:+-shared} -cmd "bench/events.sh ${shared:+$shared }$n $rate $sessions${out:+ $out}"
