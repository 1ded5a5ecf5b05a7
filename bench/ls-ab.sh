#!/usr/bin/env bash
# ls-ab.sh — the first `ls -l` of every session folder (bench/scale.sh's
# figure 1 row, "ls -l MNT/--*/*/ first, fresh mount") for several pifs
# binaries taken in turn in each round: bench/walk-ab.sh with that command.
#
# Usage: bench/ls-ab.sh ROUNDS STORE NAME=BINARY...
#   e.g. bench/ls-ab.sh 3 /tmp/pifs-scale-large/A old=/path/pifs new=bin/pifs
set -euo pipefail
[ $# -ge 3 ] || { sed -n '2,/^set -e/p' "$0" | sed '$d; s/^# \{0,1\}//'; exit 2; }
exec "$(dirname "$0")/walk-ab.sh" "$1" "$2" 'ls -l ./--*/*/' "${@:3}"
