#!/usr/bin/env bash
# largeline.sh — how long a large line takes to append through the mount,
# and how long readers of the same session wait meanwhile.
#
# Mounts a throwaway store holding one session (ENTRIES entries), writes one
# message line of MIB MiB to its append (one write(2), then close) and, all
# the while, reads context.json and name of the same session, each in a
# loop. Prints the append's time (write: until the line is checked; close:
# until it is committed) and, for each reader, the longest read that started
# before, while the line was written, and while it was committed (a read of
# context.json after the commit also renders the new message). SHAPE is
# "string" (one long string) or "blocks" (many small text blocks with
# escapes).
#
# Usage: bench/largeline.sh [MIB] [SHAPE] [ENTRIES]   (PIFS=binary to use one)
set -euo pipefail
cd "$(dirname "$0")/.."
mib=${1:-60}
shape=${2:-string}
entries=${3:-2000}
work=$(mktemp -d /tmp/pifs-largeline.XXXXXX)
mnt=$work/mnt
cleanup() {
	if grep -qs " $mnt " /proc/mounts; then fusermount3 -u "$mnt" || true; fi
	rm -rf "$work"
}
trap cleanup EXIT
pifs=${PIFS:-}
if [ -z "$pifs" ]; then
	go build -o "$work/pifs" ./cmd/pifs
	pifs=$work/pifs
fi
mkdir -p "$work/store/--w--" "$mnt"
go run ./internal/gen/cmd -entries "$entries" -avg 1650 > "$work/store/--w--/2026-01-01T00-00-00-000Z_s.jsonl"
"$pifs" --daemon --sessions-dir "$work/store" --log-file "$work/pifs.log" "$mnt"
session=$(ls -d "$mnt"/--w--/*/ | head -n 1)
python3 - "$session" "$mib" "$shape" <<'PY'
import os, sys, threading, time
session, mib, shape = sys.argv[1], int(sys.argv[2]), sys.argv[3]
size = mib << 20
if shape == "string":
    body = b'"' + b"abcdefg " * (size // 8) + b'"'
else:
    block = b'{"type":"text","text":"a \\"quoted\\" line\\n\\tand more"},'
    body = b"[" + block * (size // len(block)) + b'{"type":"text","text":"end"}]'
line = b'{"role":"user","content":' + body + b'}\n'

def read(name):
    with open(os.path.join(session, name), "rb") as f:
        while f.read(1 << 20):
            pass

views = ("context.json", "name")
for v in views:
    read(v)  # parsed and rendered once before
reads, done = {v: [] for v in views}, threading.Event()
def reader(name):
    while not done.is_set():
        t0 = time.monotonic()
        read(name)
        reads[name].append((t0, time.monotonic() - t0))
        time.sleep(0.005)
threads = [threading.Thread(target=reader, args=(v,)) for v in views]
for th in threads:
    th.start()
time.sleep(0.1)
t0 = time.monotonic()
fd = os.open(os.path.join(session, "append"), os.O_WRONLY)
os.write(fd, line)
t1 = time.monotonic()
os.close(fd)
t2 = time.monotonic()
time.sleep(0.3)
done.set()
for th in threads:
    th.join()
ms = lambda s: "%4.0f ms" % (s * 1000)
def worst(r, a, b):
    return ms(max([d for s, d in r if a <= s < b] or [0]))
print("line %.1f MiB (%s): append %s = write %s + close %s" % (len(line) / 2**20, shape, ms(t2 - t0), ms(t1 - t0), ms(t2 - t1)))
for v in views:
    r = reads[v]
    print("  %-12s %3d reads, before: longest %s; started during the write: longest %s; during the close: longest %s" % (
        v, len(r), worst(r, 0, t0), worst(r, t0, t1), worst(r, t1, t2)))
PY
