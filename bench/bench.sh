#!/usr/bin/env bash
# bench.sh — pifs against the raw file and against pi 1.6, in one run.
#
# Generates a ~100 MB session of 60,000 entries, then times, on copies of
# the same file: reading the raw bytes; pifs parsing it and building the
# context at the leaf; pi's own SessionManager.open + buildSessionContext;
# and, for each, the cost after appending one entry. Peak memory is each
# process's max RSS. Finally runs the Go benchmarks.
#
# Usage: bench/bench.sh [ENTRIES] [AVG_LINE_BYTES]
set -euo pipefail
cd "$(dirname "$0")/.."
entries=${1:-60000}
avg=${2:-1650}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

export PIFS_ORACLE_DIR=$(internal/oracle/js/install.sh | tail -n 1)
go build -o "$work/pifs-open" ./bench/pifs-open
go run ./internal/gen/cmd -entries "$entries" -avg "$avg" > "$work/session.jsonl"

runs=3
for i in $(seq $runs); do
	cp "$work/session.jsonl" "$work/a.jsonl"
	cp "$work/session.jsonl" "$work/b.jsonl"
	"$work/pifs-open" "$work/a.jsonl" >> "$work/pifs.out"
	node bench/pi-open.mjs "$work/b.jsonl" >> "$work/pi.out"
done

# Median of each field over the runs.
med() { jq -s "map(.$2) | sort | .[length/2|floor]" "$work/$1.out"; }
bytes=$(stat -c %s "$work/session.jsonl")
raw=$(med pifs rawReadMs)
pf=$(med pifs firstMs); pr=$(med pifs rereadMs); pm=$(med pifs maxRssMB)
jf=$(med pi firstMs); jr=$(med pi rereadMs); jm=$(med pi maxRssMB)
awk -v b="$bytes" -v e="$entries" -v raw="$raw" -v pf="$pf" -v pr="$pr" -v pm="$pm" -v jf="$jf" -v jr="$jr" -v jm="$jm" 'BEGIN {
	printf "session: %.1f MB, %d entries (median of '"$runs"' runs)\n\n", b/1e6, e
	printf "%-34s %12s %12s %12s\n", "", "raw file", "pifs", "pi 1.6"
	printf "%-34s %10.1f ms %10.1f ms %10.1f ms\n", "open + context at leaf", raw, pf, jf
	printf "%-34s %12s %10.1f ms %10.1f ms\n", "again after appending one entry", "", pr, jr
	printf "%-34s %12s %10.1f MB %10.1f MB\n", "peak memory (max RSS)", "", pm, jm
	printf "\nratios: pifs/raw read %.1fx, pifs/pi time %.2f, pifs/pi memory %.2f, re-read/first %.1f%%\n", pf/raw, pf/jf, pm/jm, 100*pr/pf
}'

# Through the mount: the same session under pifs, read with cat.
go build -o "$work/pifs" ./cmd/pifs
mkdir -p "$work/store/--bench--" "$work/mnt"
cp "$work/session.jsonl" "$work/store/--bench--/big.jsonl"
"$work/pifs" --daemon --pid-file "$work/pid" --sessions-dir "$work/store" "$work/mnt"
trap 'kill $(cat "$work/pid") 2>/dev/null; sleep 0.5; rm -rf "$work"' EXIT
ms() { local s=$(date +%s%N); "$@" > /dev/null; echo $(( ($(date +%s%N) - s) / 1000000 )); }
raw_cat=$(ms cat "$work/store/--bench--/big.jsonl")
mnt_cat=$(ms cat "$work/mnt/--bench--/big/session.jsonl")
ctx_first=$(ms cat "$work/mnt/--bench--/big/context.json")
ctx_again=$(ms cat "$work/mnt/--bench--/big/context.json")
info=$(ms cat "$work/mnt/--bench--/big/info.json")
rss=$(awk '/VmHWM/ {print int($2/1024)}' /proc/$(cat "$work/pid")/status)
echo
echo "through the mount (cat, ms): raw file $raw_cat, session.jsonl $mnt_cat," \
	"context.json first $ctx_first then $ctx_again, info.json $info; pifs peak RSS ${rss} MB"

echo
go test -run '^$' -bench . -benchmem -benchtime 5x ./tree/
