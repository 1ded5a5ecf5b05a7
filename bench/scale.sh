#!/usr/bin/env bash
# scale.sh — pifs on whole stores, side by side with the raw files and with
# pi 1.6 in the same run: every figure of issue 7 (1–8).
#
# Generates seeded stores (kept in the work folder for later runs), mounts
# them with a freshly built pifs, runs what a user runs (find, ls -l, cat,
# grep, tar) through sh -c, and reads the pifs process's CPU, memory and
# reads from /proc. Prints one table (min–median–max over the runs) and
# writes the same as JSON. Both sides read warm files: the page cache is
# dropped for neither. Needs root or FUSE access, fusermount3, node.
#
# Usage: bench/scale.sh [--large] [--runs N] [--out FILE.json] [--work DIR]
#                       [--seed N] [--only 1,2,...] [--floor] [--cache-mib N]
#   default: a small setting that runs in a few minutes;
#   --large: the issue's stores (2,000 sessions / ~1 GB in 20 projects,
#            10,000 sessions, a ~100 MB session of 60,000 entries);
#   --floor: time figures 1, 2, 4 and 8 on bench/floor too, a FUSE server
#            that serves the same names from memory and does nothing else
#            (the least any FUSE server costs here), and figure 9 (cat of
#            large files again) on it with direct I/O as pifs reads (-d).
#            Builds it with gcc and libfuse3 (installed with apt when
#            missing, as root). Figures 1 (ls -l repeated), 2 (ls -l by-id
#            fresh), 8 and 10 also run on bench/gofloor, the same names served through go-fuse with
#            pifs's mount options (the floor of a server built as pifs is).
# Figure 10 mounts with a persistent cache (--cache-dir WORK/cache, the
# search index off: bench/search.sh measures it), walks, mounts again and
# walks; figures 1–8 mount with --cache-dir none. Figure
# 7 measures polling with change events and alone (-o noevents).
set -euo pipefail
cd "$(dirname "$0")/.."
bin=$(mktemp -d)
work_default=
floor=
args=()
while [ $# -gt 0 ]; do
	case "$1" in
	--large) args+=(-large); work_default=large ;;
	--runs | --out | --work | --seed | --only | --cache-mib) args+=("-${1#--}" "$2"); shift ;;
	--floor) floor=1 ;;
	-h | --help) sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 0 ;;
	*) echo "scale.sh: unknown argument $1" >&2; exit 2 ;;
	esac
	shift
done
work=${TMPDIR:-/tmp}/pifs-scale-${work_default:-small}
for ((i = 0; i < ${#args[@]}; i++)); do
	[ "${args[i]}" = -work ] && work=${args[i + 1]}
done
mnt=$work/mnt-$$
cleanup() {
	# A run stopped half-way leaves its mount behind: take it down.
	if mountpoint -q "$mnt" 2>/dev/null; then fusermount3 -uz "$mnt" || true; fi
	rmdir "$mnt" 2>/dev/null || true
	rm -rf "$bin"
}
trap cleanup EXIT

export PIFS_ORACLE_DIR=$(internal/oracle/js/install.sh | tail -n 1)
go build -o "$bin/pifs" ./cmd/pifs
go build -o "$bin/scale" ./bench/scale
if [ -n "$floor" ]; then
	if ! command -v gcc >/dev/null || ! pkg-config --exists fuse3 2>/dev/null; then
		if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null; then
			apt-get update -qq
			DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc pkg-config libfuse3-dev >/dev/null
		else
			echo "scale.sh: --floor needs gcc, pkg-config and libfuse3-dev" >&2
			exit 1
		fi
	fi
	# shellcheck disable=SC2046 # pkg-config's flags are words
	gcc -O2 -Wall -o "$bin/floor" bench/floor/floor.c $(pkg-config --cflags --libs fuse3)
	args+=(-floor "$bin/floor")
	go build -o "$bin/gofloor" ./bench/gofloor
	args+=(-gofloor "$bin/gofloor")
fi
"$bin/scale" -pifs "$bin/pifs" -work "$work" -mnt "$mnt" "${args[@]}"
