#!/usr/bin/env bash
# search-mount.sh — a query through a mount's search/ (ls of the query's
# folder, then cat of its hits), against grep -rl over the raw store.
# Each run spells the query in another case, so that it is a new folder
# the mount answers anew (the answer is kept per spelling); the cat after
# it reads what the ls made. Prints TSV rows: query, what, ms (p50, max).
#
# Usage: bench/search-mount.sh MOUNT STORE [RUNS] [QUERY...]
#   the mount must be made with an index and be idle (search/status:
#   index complete).
set -euo pipefail
mnt=$1 store=$2 runs=${3:-7}
shift $(($# < 3 ? $# : 3))
queries=("$@")
[ ${#queries[@]} -gt 0 ] || queries=(NEEDLE-7f3a9c '"look for"' milestone-997 'needle role:user' compiling)
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
# spell QUERY N: QUERY with the case of its letters drawn from N.
spell() {
	local q=$1 n=$2 out="" c i
	for ((i = 0; i < ${#q}; i++)); do
		c=${q:i:1}
		if (( (n >> (i % 16)) & 1 )); then out+=${c^^}; else out+=${c,,}; fi
	done
	printf '%s' "$out"
}
stats() { sort -n | awk '{a[NR]=$1} END {printf "%d\t%d", a[int((NR+1)/2)], a[NR]}'; }
printf 'query\twhat\tp50 ms\tmax ms\tnotes\n'
for q in "${queries[@]}"; do
	lsf=$(mktemp) catf=$(mktemp)
	for ((r = 0; r < runs; r++)); do
		name=$(spell "$q" $((r * 7919 + 1)))
		t=$(date +%s%N); ls "$mnt/search/$name/" >/dev/null; ms "$t" >>"$lsf"
		t=$(date +%s%N); cat "$mnt/search/$name/hits" >/dev/null; ms "$t" >>"$catf"
	done
	hits=$(grep -vc '^#' "$mnt/search/$q/hits" || true)
	sessions=$(find "$mnt/search/$q/" -maxdepth 1 -type l | wc -l)
	printf '%s\tls search/Q/ (runs the query)\t%s\t%d runs; %s hits listed, %s sessions\n' "$q" "$(stats <"$lsf")" "$runs" "$hits" "$sessions"
	printf '%s\tcat search/Q/hits after it\t%s\t%d runs\n' "$q" "$(stats <"$catf")" "$runs"
	rm -f "$lsf" "$catf"
done
word=${queries[0]}
g=$(mktemp)
for ((r = 0; r < 3; r++)); do
	t=$(date +%s%N); grep -rl -- "$word" "$store" >/dev/null || true; ms "$t" >>"$g"
done
printf '%s\tgrep -rl over the raw store\t%s\t3 runs, %s files\n' "$word" "$(stats <"$g")" "$(grep -rl -- "$word" "$store" | wc -l)"
rm -f "$g"
f=$(mktemp)
for ((r = 0; r < runs; r++)); do
	t=$(date +%s%N); cat /etc/hostname >/dev/null; ms "$t" >>"$f"
done
printf -- '-\tcat /etc/hostname (the floor: starting a process now)\t%s\t%d runs\n' "$(stats <"$f")" "$runs"
rm -f "$f"
