#!/usr/bin/env bash
# search-mount.sh — a query through a mount's search/: the listing of the
# query's folder (which runs the query), then the read of its hits, timed
# inside one process (python3: os.listdir, then open and read), so that
# the figures hold no process start; against grep -rl over the raw store,
# timed from the shell (one process, as a user runs it). Each run spells
# the query in another case, so that it is a new folder the mount answers
# anew (an answer is kept per spelling). Prints TSV rows: query, what, p50
# and max in ms, notes.
#
# Usage: bench/search-mount.sh MOUNT STORE [RUNS] [QUERY...]
#   the mount must be made with an index and be idle (search/status:
#   index complete).
set -euo pipefail
mnt=$1 store=$2 runs=${3:-7}
shift $(($# < 3 ? $# : 3))
[ $# -gt 0 ] || set -- NEEDLE-7f3a9c '"look for"' milestone-997 'needle role:user' compiling
printf 'query\twhat\tp50 ms\tmax ms\tnotes\n'
python3 - "$mnt" "$runs" "$@" <<'EOF'
import os, sys, time
mnt, runs, queries = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
seed = int(time.time())  # spellings no earlier run asked
def spell(q, n):
    return "".join(c.upper() if (n >> (i % 16)) & 1 else c.lower() for i, c in enumerate(q))
def row(q, what, ts, note):
    ts = sorted(ts)
    print(f"{q}\t{what}\t{ts[(len(ts) - 1) // 2] * 1000:.1f}\t{ts[-1] * 1000:.1f}\t{note}")
for q in queries:
    ls, cat, ls2 = [], [], []
    for r in range(runs):
        d = os.path.join(mnt, "search", spell(q, seed + r * 7919))
        t = time.perf_counter(); names = os.listdir(d); ls.append(time.perf_counter() - t)
        t = time.perf_counter()
        with open(os.path.join(d, "hits"), "rb") as f:
            data = f.read()
        cat.append(time.perf_counter() - t)
        t = time.perf_counter(); os.listdir(d); ls2.append(time.perf_counter() - t)
    hits = sum(1 for l in data.split(b"\n") if l and not l.startswith(b"#"))
    row(q, "ls search/Q/ (runs the query)", ls, f"{runs} runs; {hits} hits listed, {len(names) - 2} sessions")
    row(q, "cat search/Q/hits after it", cat, f"{runs} runs; {len(data)} bytes")
    row(q, "ls search/Q/ again", ls2, f"{runs} runs")
EOF
word=$1
ms() { echo $(( ($(date +%s%N) - $1) / 1000000 )); }
stats() { sort -n | awk '{a[NR]=$1} END {printf "%d\t%d", a[int((NR+1)/2)], a[NR]}'; }
g=$(mktemp) f=$(mktemp)
for ((r = 0; r < 3; r++)); do
	t=$(date +%s%N); grep -rl -- "$word" "$store" >/dev/null || true; ms "$t" >>"$g"
done
printf '%s\tgrep -rl over the raw store (from the shell)\t%s\t3 runs, %s files\n' "$word" "$(stats <"$g")" "$(grep -rl -- "$word" "$store" | wc -l)"
for ((r = 0; r < runs; r++)); do
	t=$(date +%s%N); cat /etc/hostname >/dev/null; ms "$t" >>"$f"
done
printf -- '-\tcat /etc/hostname from the shell (starting a process now)\t%s\t%d runs\n' "$(stats <"$f")" "$runs"
rm -f "$g" "$f"
