#!/usr/bin/env bash
# memory.sh — what pifs holds in memory at its peak and once idle, for
# the two shapes of store that cost most: one session with a huge line
# (`cat info.json`), and many small sessions (`find -maxdepth 3`).
#
# Mounts a generated store with a freshly built pifs (or $PIFS), runs the
# command, and prints the pifs process's VmHWM (peak) and VmRSS (after the
# command, and again after IDLE seconds of nothing), from /proc/PID/status.
#
# Usage: bench/memory.sh line [MIB] [IDLE]     one session, a line of MIB MiB
#                                              (default 1024) between two short
#                                              ones; cat info.json
#        bench/memory.sh many [N] [IDLE]       N sessions of 7 lines in 100
#                                              projects (default 100000);
#                                              find -maxdepth 3
#        bench/memory.sh entries [N] [IDLE]    one session of N short entries
#                                              (default 2000000, 320 MB);
#                                              ls entries/
# Stores are kept in $WORK (default /tmp/pifs-memory) between runs.
set -euo pipefail
cd "$(dirname "$0")/.."
shape=${1:-line}
idle=${3:-30}
work=${WORK:-/tmp/pifs-memory}
mkdir -p "$work"
mnt=$(mktemp -d "$work/mnt.XXXXXX")
bin=$(mktemp -d)
cleanup() {
	if grep -qs " $mnt " /proc/mounts; then fusermount3 -u "$mnt" || fusermount3 -uz "$mnt" || true; fi
	rmdir "$mnt" 2>/dev/null || true
	rm -rf "$bin"
}
trap cleanup EXIT
pifs=${PIFS:-}
if [ -z "$pifs" ]; then
	go build -o "$bin/pifs" ./cmd/pifs
	pifs=$bin/pifs
fi
case "$shape" in
line)
	mib=${2:-1024}
	store=$work/line-$mib
	if [ ! -d "$store" ]; then
		mkdir -p "$store/--w--"
		python3 - "$store/--w--/2026-01-01T00-00-00-000Z_0190a000-0000-7000-8000-000000000001.jsonl" "$mib" <<'PY'
import sys
path, mib = sys.argv[1], int(sys.argv[2])
with open(path, "wb") as f:
    f.write(b'{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000001","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n')
    f.write(b'{"type":"message","id":"u1","parentId":null,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"')
    chunk = b"abcdefg " * (1 << 17)
    for _ in range(mib):
        f.write(chunk)
    f.write(b'","timestamp":1}}\n')
    f.write(b'{"type":"message","id":"u2","parentId":"u1","timestamp":"2026-01-01T00:00:02.000Z","message":{"role":"user","content":"after","timestamp":2}}\n')
PY
	fi
	cmd='cat "$0"/--w--/2026-*/info.json | wc -c'
	;;
many)
	n=${2:-100000}
	store=$work/many-$n
	if [ ! -d "$store" ]; then
		python3 - "$store" "$n" <<'PY'
import os, sys, uuid, random
root, n = sys.argv[1], int(sys.argv[2])
random.seed(1)
for i in range(n):
    p = f"{root}/--home-user-p{i % 100}--"
    os.makedirs(p, exist_ok=True)
    sid = str(uuid.UUID(int=random.getrandbits(128), version=4))
    ts = f"2025-03-{1 + i % 28:02d}T{(i // 28) % 24:02d}:{i % 60:02d}:00.000Z"
    lines = [f'{{"type":"session","version":3,"id":"{sid}","timestamp":"{ts}","cwd":"/home/user/p{i % 100}"}}']
    parent = "null"
    for k in range(6):
        eid = f"{k:08x}"
        if k % 2 == 0:
            msg = '{"role":"user","content":"%s","timestamp":%d}' % (("question %d about things " % k) * 8, 1740000000000 + k)
        else:
            msg = ('{"role":"assistant","content":[{"type":"text","text":"%s"}],"provider":"anthropic","model":"claude",'
                   '"usage":{"input":10,"output":5,"cacheRead":0,"cacheWrite":0,"totalTokens":15,"cost":{"total":0.2}},"timestamp":%d}') % (("answer %d " % k) * 20, 1740000000000 + k)
        lines.append(f'{{"type":"message","id":"{eid}","parentId":{parent},"timestamp":"{ts}","message":{msg}}}')
        parent = f'"{eid}"'
    name = ts.replace(":", "-").replace(".", "-")
    with open(f"{p}/{name}_{sid}.jsonl", "w") as f:
        f.write("\n".join(lines) + "\n")
PY
	fi
	cmd='find "$0" -maxdepth 3 | wc -l'
	;;
entries)
	n=${2:-2000000}
	store=$work/entries-$n
	if [ ! -d "$store" ]; then
		mkdir -p "$store/--w--"
		python3 - "$store/--w--/2026-01-01T00-00-00-000Z_0190a000-0000-7000-8000-000000000002.jsonl" "$n" <<'PY'
import sys
path, n = sys.argv[1], int(sys.argv[2])
with open(path, "w") as f:
    f.write('{"type":"session","version":3,"id":"0190a000-0000-7000-8000-000000000002","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/w"}\n')
    parent = "null"
    for i in range(n):
        eid = f"{i:08x}"
        f.write(f'{{"type":"message","id":"{eid}","parentId":{parent},"timestamp":"2026-01-01T00:00:01.000Z",'
                f'"message":{{"role":"user","content":"message number {i} of the session","timestamp":1767225601000}}}}\n')
        parent = f'"{eid}"'
PY
	fi
	cmd='ls "$0"/--w--/2026-*/entries | wc -l'
	;;
*)
	echo "memory.sh: unknown shape $shape (line, many or entries)" >&2
	exit 2
	;;
esac
"$pifs" --daemon --sessions-dir "$store" --log-file "$work/pifs.log" --pid-file "$work/pifs.pid" "$mnt" 2>/dev/null
pid=$(cat "$work/pifs.pid")
status() { awk -v w="$1" '$1 == w":" { printf "%d MiB", $2 / 1024 }' "/proc/$pid/status"; }
start=$(date +%s.%N)
out=$(sh -c "$cmd" "$mnt")
secs=$(echo "$(date +%s.%N) - $start" | bc)
echo "$shape $(du -sh "$store" | cut -f1): $out in ${secs}s; peak (VmHWM) $(status VmHWM), after $(status VmRSS)"
sleep "$idle"
echo "  after ${idle}s idle: VmRSS $(status VmRSS)"
