#!/usr/bin/env bash
# poll.sh — what polling costs and how soon it sees a change: pifs mounted
# with --poll INTERVAL -o noevents (a store only other machines write, as
# on NFS) over a copy of a store, walked once; then the pifs process's CPU
# over IDLE while nothing changes, and CHANGES appends (one O_APPEND write
# each) to sessions not written for an hour, each timed until stat of its
# session.jsonl through the mount shows the new size.
#
# Usage: bench/poll.sh [--store DIR] [--interval 500ms] [--idle 30s]
#                      [--changes 20] [--out FILE.json]
#   --store: the store copied and measured (default: store B of
#            bench/scale.sh --large, 10,000 sessions, which that script
#            generates in $TMPDIR/pifs-scale-large/B).
set -euo pipefail
cd "$(dirname "$0")/.."
store=${TMPDIR:-/tmp}/pifs-scale-large/B
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--store) store=$2; shift ;;
	--interval | --idle | --changes | --out) args+=("-${1#--}" "$2"); shift ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "poll.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
if [ ! -d "$store" ]; then
	echo "poll.sh: no store at $store: make it with bench/scale.sh --large --only 2, or give --store" >&2
	exit 1
fi
work=$(mktemp -d)
cleanup() {
	if mountpoint -q "$work/mnt" 2>/dev/null; then fusermount3 -uz "$work/mnt" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
mkdir "$work/mnt"
cp -a "$store" "$work/store" # appended to: a copy, its times kept
go build -o "$work/pifs" ./cmd/pifs
go build -o "$work/poll" ./bench/poll
"$work/poll" -pifs "$work/pifs" -store "$work/store" -mnt "$work/mnt" "${args[@]}"
