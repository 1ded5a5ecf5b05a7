#!/usr/bin/env bash
# events.sh — MOUNT/events against tail -f of the raw session files: the
# latency from a write to the line in the reader (median, p99, max), lines
# lost, doubled or out of order, and the idle CPU of pifs and of tail with
# the readers open (bench/events/main.go).
#
# Usage: bench/events.sh [N_LINES] [RATE_PER_S] [SESSIONS] [OUT.json]
#   default: 1000 lines at 100 a second over 20 sessions, printed only.
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-1000} rate=${2:-100} sessions=${3:-20} out=${4:-}
work=$(mktemp -d)
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
"$work/pifs" --cache-dir none --sessions-dir "$work/store" "$mnt" 2>"$work/log" &
pid=$!
for _ in $(seq 50); do mountpoint -q "$mnt" && break; sleep 0.1; done
"$work/events" -mnt "$mnt" -store "$work/store" -pid "$pid" -n "$n" -rate "$rate" -sessions "$sessions" ${out:+-out "$out"} \
	-cmd "bench/events.sh $n $rate $sessions${out:+ $out}"
