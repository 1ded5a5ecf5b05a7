#!/usr/bin/env bash
# byfile-check.sh — a check of by-file/ on a large store, not a timed test:
# every touched file's folder, through a mount, against an independent scan
# of the raw session files.
#
# 1. Generates, with a fixed seed, a store of 2,000 pi sessions (format v3)
#    in 10 projects (cwd /work/p0 … /work/p9, folders --work-p0-- …), each
#    with about 20 read/write/edit tool calls and their tool results: paths
#    relative (src/d7/f11.go, ./src/…, src/dA/../dB/f.go, ../p3/src/…),
#    absolute (the project's, another project's, /etc, /usr, /tmp) and from
#    the home directory (~/notes/…); some calls on an abandoned branch (an
#    entry whose parentId is not the entry before it), some results with
#    isError true (and per project five files that only failed edits name),
#    and calls that name a path but touch no file (bash, ls, grep, a read
#    with an empty path).
# 2. Builds pifs and mounts the store with --cache-dir none --index DIR
#    (HOME set to a folder of the run: pi's tools, and pifs, take "~" as
#    $HOME), and waits until search/status says "index complete".
# 3. Scans the raw JSONL in Python (not through the mount) for every touched
#    absolute path: the sessions that touched it, and those that wrote or
#    edited it. What the scan assumes (from docs/reference.md, by-file/ and
#    files.json, and pi's file lists as pifs's tree/files.go follows them):
#    - a touch is a toolCall block of an assistant message, named read,
#      write or edit, whose arguments.path is a non-empty string; other
#      tools (bash, ls, grep) touch nothing, even with a path argument;
#    - every entry counts, on any branch (abandoned ones too);
#    - a call counts whatever its result: an edit whose result has isError
#      true still makes the session one that modified the file (pi's
#      file lists count it; files.txt counts it under ERRORS);
#    - a relative path is joined to the header's cwd and cleaned ("..",
#      "."); "~" and "~/…" are $HOME (as pi's resolveToCwd does).
# 4. Lists MNT/by-file<path>/ and its modified/ for every touched path and
#    compares the link names with the scan, checks that every link resolves
#    (stat through it) to MNT/<project>/<session> and that each session
#    folder reached has a session.jsonl equal to the raw file; lists every
#    folder above a touched file (its names: those leading to touched
#    files); and checks a sample of each project's by-file/<relative>/.
# 5. Reads MNT/.pifs/stats before and after one lookup of a file touched by
#    about 10 sessions (the listing, an lstat of each name as ls -l does,
#    the modified/ listing): the index's statements and rows each cost,
#    first on the fresh mount, before the walk, then after the walk (when
#    the kernel still holds the folder's listing); then pifs's VmHWM and
#    VmRSS from /proc/PID/status.
# 6. Unmounts (fusermount3 -u, else -u -z on exit) and prints the summary
#    as TSV: what, value, notes. Exit status 1 when a mismatch or a link
#    that does not resolve was found (each one is printed as a row).
#
# Usage: bench/byfile-check.sh [SEED]      (default 20261204)
#   $PIFS: a pifs binary to use instead of building one.
#   Takes 30 s on a quiet 2-core machine, about 5 minutes under load; the
#   store is 31 MB.
set -euo pipefail
cd "$(dirname "$0")/.."
seed=${1:-20261204}
tmp=$(mktemp -d "${TMPDIR:-/tmp}/pifs-byfile.XXXXXX")
store=$tmp/store mnt=$tmp/mnt idx=$tmp/idx home=$tmp/home
mkdir -p "$store" "$mnt" "$idx" "$home"
pid=
cleanup() {
	if grep -qs " $mnt fuse" /proc/mounts; then fusermount3 -u -z "$mnt" || true; fi
	if [ -n "$pid" ]; then
		for _ in $(seq 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
		kill "$pid" 2>/dev/null || true
		wait "$pid" 2>/dev/null || true
	fi
	rm -rf "$tmp"
}
trap cleanup EXIT

cat >"$tmp/check.py" <<'EOF'
import hashlib, json, os, posixpath, random, sys, time

def gen(store, seed):
    """Writes the store: 10 projects of 200 sessions."""
    rng = random.Random(seed)
    base = 1735689600.0  # 2025-01-01T00:00:00Z
    used_ids = set()
    def uuid():
        while True:
            h = "%032x" % rng.getrandbits(128)
            u = f"{h[:8]}-{h[8:12]}-4{h[13:16]}-8{h[17:20]}-{h[20:]}"
            if u not in used_ids:
                used_ids.add(u)
                return u
    def ms(t):
        return int(t * 1000)
    def iso(t, sep=":"):
        return time.strftime(f"%Y-%m-%dT%H{sep}%M{sep}%S", time.gmtime(ms(t) // 1000)) + (".%03dZ" if sep == ":" else "-%03dZ") % (ms(t) % 1000)
    ops = ["read"] * 50 + ["edit"] * 30 + ["write"] * 20
    extra = ["/etc/hosts", "/etc/passwd", "/usr/include/stdio.h", "/usr/lib/go/src/fmt/print.go"] + [f"/tmp/build-{k}.log" for k in range(6)]
    for p in range(10):
        cwd = f"/work/p{p}"
        proj = os.path.join(store, "--work-p%d--" % p)
        os.mkdir(proj)
        for s in range(200):
            start = base + rng.uniform(0, 300 * 86400)
            sid = uuid()
            name = iso(start, "-") + "_" + sid
            eids = set()
            def eid():
                while True:
                    e = "%08x" % rng.getrandbits(32)
                    if e not in eids:
                        eids.add(e)
                        return e
            t = start
            lines = [json.dumps({"type": "session", "version": 3, "id": sid, "timestamp": iso(t), "cwd": cwd}, separators=(",", ":"))]
            def entry(parent, msg):
                nonlocal t
                t += rng.uniform(1, 40)
                i = eid()
                msg["timestamp"] = ms(t)
                lines.append(json.dumps({"type": "message", "id": i, "parentId": parent, "timestamp": iso(t), "message": msg}, separators=(",", ":")))
                return i
            last = entry(None, {"role": "user", "content": "work on the code"})
            results = [last]  # entries a new branch may start from
            ncalls = rng.randint(16, 24)
            branch_at = rng.randint(6, ncalls - 4) if rng.random() < 0.35 else -1
            done = 0
            while done < ncalls:
                if done == branch_at:
                    # Back to an earlier result: the calls since are an abandoned branch.
                    back = results[rng.randint(max(0, len(results) - 8), len(results) - 3)]
                    last = entry(back, {"role": "user", "content": "no, try another way"})
                    results.append(last)
                    branch_at = -1
                n = 2 if rng.random() < 0.15 else 1
                blocks, calls = [], []
                if rng.random() < 0.3:
                    blocks.append({"type": "text", "text": "Let me look at that."})
                for _ in range(n):
                    cid = "call_%06x" % rng.getrandbits(24)
                    r = rng.random()
                    err = rng.random() < 0.03
                    if r < 0.04:  # a tool that names a path but is not a file touch
                        tool = rng.choice(["bash", "ls", "grep"])
                        d = f"src/d{rng.randrange(20)}"
                        args = {"command": f"go test ./{d}/..."} if tool == "bash" else ({"path": d} if tool == "ls" else {"pattern": "func", "path": d})
                    elif r < 0.045:
                        tool, args = "read", {"path": ""}
                        err = True
                    elif r < 0.055:  # a file only failed edits name
                        tool, args = "edit", {"path": f"src/broken/e{rng.randrange(5)}.go", "edits": [{"oldText": "a", "newText": "b"}]}
                        err = True
                    else:
                        tool = rng.choice(ops)
                        d, f = rng.randrange(20), rng.randrange(20)
                        rel = f"src/d{d}/f{f}.go"
                        k = rng.random()
                        if k < 0.70:
                            path = rel
                        elif k < 0.80:
                            path = f"{cwd}/{rel}"
                        elif k < 0.84:
                            path = "./" + rel
                        elif k < 0.86:
                            path = f"src/d{rng.randrange(20)}/../d{d}/f{f}.go"
                        elif k < 0.90:
                            path = f"../p{rng.randrange(10)}/{rel}"
                        elif k < 0.94:
                            path = f"/work/p{rng.randrange(10)}/{rel}"
                        elif k < 0.97:
                            path = f"~/notes/n{rng.randrange(20)}.md"
                        else:
                            path = rng.choice(extra)
                        args = {"path": path}
                        if tool == "write":
                            args["content"] = "package x\n\nfunc F%d() {}\n" % rng.randrange(1000)
                        elif tool == "edit":
                            args["edits"] = [{"oldText": "old %d" % rng.randrange(100), "newText": "new"}]
                        elif rng.random() < 0.2:
                            args["offset"], args["limit"] = 1, 200
                    blocks.append({"type": "toolCall", "id": cid, "name": tool, "arguments": args})
                    calls.append((cid, tool, err))
                last = entry(last, {"role": "assistant", "content": blocks, "api": "anthropic-messages", "provider": "p", "model": "m",
                                    "usage": {"input": 100, "output": 20, "cacheRead": 0, "cacheWrite": 0, "totalTokens": 120,
                                              "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                                    "stopReason": "toolUse"})
                for cid, tool, err in calls:
                    text = "Error: could not apply the edit" if err else ("package x\n" if tool == "read" else "ok")
                    last = entry(last, {"role": "toolResult", "toolCallId": cid, "toolName": tool,
                                        "content": [{"type": "text", "text": text}], "isError": err})
                results.append(last)
                done += n
            last = entry(last, {"role": "assistant", "content": [{"type": "text", "text": "Done."}], "api": "anthropic-messages",
                                "provider": "p", "model": "m", "usage": {"input": 100, "output": 5, "cacheRead": 0, "cacheWrite": 0,
                                "totalTokens": 105, "cost": {"input": 0, "output": 0, "cacheRead": 0, "cacheWrite": 0, "total": 0}},
                                "stopReason": "stop"})
            fn = os.path.join(proj, name + ".jsonl")
            with open(fn, "w") as fh:
                fh.write("\n".join(lines) + "\n")
            os.utime(fn, (t, t))

def resolve(p, cwd, home):
    """A tool call's path as the scan takes it (see the script's header)."""
    if p == "~":
        p = home
    elif p.startswith("~/"):
        p = home + p[1:]
    if not p.startswith("/"):
        p = cwd.rstrip("/") + "/" + p
    p = posixpath.normpath(p)
    return "/" + p.lstrip("/")

def scan(store, home):
    """For each absolute path: {session key: modified}; and the sessions."""
    touched, sessions = {}, {}
    stats = {"calls": 0, "errored_calls": 0, "abandoned_calls": 0, "non_touch_calls": 0, "entries": 0}
    # For the notes: the links that only calls off the leaf's path justify,
    # and those only calls with an error result do.
    seen = {}
    for proj in sorted(os.listdir(store)):
        for fn in sorted(os.listdir(os.path.join(store, proj))):
            if not fn.endswith(".jsonl"):
                continue
            path = os.path.join(store, proj, fn)
            key = (proj, fn[:-6])
            sessions[key] = path
            with open(path) as fh:
                lines = [json.loads(l) for l in fh if l.strip()]
            cwd = lines[0]["cwd"]
            ents = lines[1:]
            stats["entries"] += len(ents)
            # The leaf's path, to count the calls off it (the scan itself
            # takes every entry).
            byid = {e["id"]: e for e in ents}
            on = set()
            e = ents[-1]
            while e is not None:
                on.add(e["id"])
                e = byid.get(e.get("parentId"))
            errored = set()
            for e in ents:
                m = e.get("message") or {}
                if e.get("type") == "message" and m.get("role") == "toolResult" and m.get("isError"):
                    errored.add(m.get("toolCallId"))
            for e in ents:
                m = e.get("message") or {}
                if e.get("type") != "message" or m.get("role") != "assistant" or not isinstance(m.get("content"), list):
                    continue
                for b in m["content"]:
                    if not isinstance(b, dict) or b.get("type") != "toolCall":
                        continue
                    args = b.get("arguments") or {}
                    p = args.get("path") if isinstance(args, dict) else None
                    if b.get("name") not in ("read", "write", "edit") or not isinstance(p, str) or p == "":
                        stats["non_touch_calls"] += 1
                        continue
                    stats["calls"] += 1
                    stats["errored_calls"] += b.get("id") in errored
                    stats["abandoned_calls"] += e["id"] not in on
                    a = resolve(p, cwd, home)
                    t = touched.setdefault(a, {})
                    t[key] = t.get(key, False) or b["name"] != "read"
                    f = seen.setdefault((a, key), [False, False])
                    f[0] = f[0] or e["id"] in on
                    f[1] = f[1] or b.get("id") not in errored
    stats["abandoned_only"] = sum(1 for f in seen.values() if not f[0])
    stats["errored_only"] = sum(1 for f in seen.values() if not f[1])
    return touched, sessions, stats

def read_stats(mnt):
    with open(os.path.join(mnt, ".pifs", "stats")) as fh:
        return json.load(fh)

def search_counts(st):
    """The index's statements and rows, the view's lookups and listings."""
    s, v = st.get("search", {}), st.get("view", {})
    return s["statements"], s["rows"], v["lookups"], v["listings"]

def check(store, mnt, home, pid, seed):
    out = []  # (what, value, notes)
    problems = []
    t0 = time.time()
    touched, sessions, sst = scan(store, home)
    scan_s = time.time() - t0
    size = sum(os.path.getsize(p) for p in sessions.values())
    out.append(("store", len(sessions), f"sessions in 10 projects, {size / 1e6:.1f} MB, {sst['entries']} entries, seed {seed}"))
    out.append(("file calls", sst["calls"], f"read/write/edit calls with a path (scan of the raw JSONL, {scan_s:.1f} s): "
                f"{sst['errored_calls']} with an error result, {sst['abandoned_calls']} off the leaf's path; "
                f"{sst['non_touch_calls']} other calls (bash, ls, grep, empty path) touch nothing"))
    nmod = sum(1 for t in touched.values() if any(t.values()))
    nlinks = sum(len(t) for t in touched.values())
    nmodlinks = sum(sum(t.values()) for t in touched.values())
    out.append(("touched paths", len(touched), f"absolute paths; {nmod} modified by some session; {nlinks} links expected, {nmodlinks} in modified/; "
                f"{sst['abandoned_only']} links only calls off the leaf's path justify, {sst['errored_only']} only calls with an error result"))
    out.append(("scan assumes", "-", "a touch is a read/write/edit toolCall of an assistant message with a non-empty string arguments.path; "
                "every branch counts; a call counts whatever its result (an errored write/edit modifies); relative paths joined to the "
                "header's cwd and cleaned; ~ is $HOME of the pifs process"))
    mbf = os.path.join(mnt, "by-file")
    # One lookup of a file's folder: a file under a project touched by
    # about 10 sessions, some of which modified it; taken first on the
    # fresh mount (pifs lists it), then again after the walk (the kernel
    # keeps a folder's listing until the index changes, FOPEN_CACHE_DIR:
    # only the lookups of the path's names reach pifs).
    cands = sorted((abs(len(t) - 10), a) for a, t in touched.items()
                   if a.startswith("/work/p") and "/src/d" in a and any(t.values()))
    lk = cands[0][1]
    lkd = mbf + lk
    def step(when, label, fn):
        s0 = search_counts(read_stats(mnt))
        t = time.perf_counter()
        r = fn()
        ms_ = (time.perf_counter() - t) * 1000
        s1 = search_counts(read_stats(mnt))
        out.append((f"lookup {when}: {label}", f"{s1[0] - s0[0]} statements, {s1[1] - s0[1]} rows",
                    f"{ms_:.1f} ms; {r}; {s1[2] - s0[2]} lookups, {s1[3] - s0[3]} listings (.pifs/stats view)"))
    def lookup(when):
        step(when, f"ls by-file{lk}/", lambda: f"{len(os.listdir(lkd))} names ({len(touched[lk])} sessions and modified/)")
        step(when, "lstat of each name (ls -l)", lambda: f"{len([os.lstat(os.path.join(lkd, n)) for n in os.listdir(lkd)])} names, with the listing")
        step(when, f"ls by-file{lk}/modified/", lambda: f"{len(os.listdir(lkd + '/modified'))} names ({sum(touched[lk].values())} sessions)")
    lookup("first (before the walk)")

    mismatches = unresolved = 0
    targets = set()
    lat = []
    def links(dirpath, want_names, want_mod_folder, what):
        """Lists dirpath (through a dir fd), compares names, checks links."""
        nonlocal mismatches, unresolved
        t = time.perf_counter()
        try:
            fd = os.open(dirpath, os.O_RDONLY | os.O_DIRECTORY)
        except OSError as e:
            mismatches += 1
            problems.append((what, dirpath, f"expected {len(want_names)} sessions", f"got {e}"))
            return
        try:
            got = set(os.listdir(fd))
            lat.append(time.perf_counter() - t)
            want = set(want_names) | ({"modified"} if want_mod_folder else set())
            if got != want:
                mismatches += 1
                problems.append((what, dirpath, "expected " + " ".join(sorted(want - got)) + " (missing)",
                                 "got " + " ".join(sorted(got - want)) + " (extra)"))
            for n in sorted(got & set(want_names)):
                proj = want_names[n]
                try:
                    to = os.readlink(n, dir_fd=fd)
                    os.stat(n, dir_fd=fd)  # resolves (readlink -e)
                except OSError as e:
                    unresolved += 1
                    problems.append((what, f"{dirpath}/{n}", "a link that resolves", f"got {e}"))
                    continue
                real = posixpath.normpath(posixpath.join(dirpath, to))
                if real != posixpath.join(mnt, proj, n):
                    unresolved += 1
                    problems.append((what, f"{dirpath}/{n}", f"-> {proj}/{n}", f"-> {to}"))
                    continue
                targets.add((proj, n))
        finally:
            os.close(fd)

    t0 = time.time()
    for path in sorted(touched):
        t = touched[path]
        names = {s: p for (p, s) in t}
        mod = {s: p for (p, s), m in t.items() if m}
        d = mbf + path
        links(d, names, bool(mod), "by-file")
        if mod:
            links(d + "/modified", mod, False, "by-file modified/")
        elif os.path.lexists(d + "/modified"):
            mismatches += 1
            problems.append(("by-file modified/", d + "/modified", "absent (no session changed it)", "present"))
    walk_s = time.time() - t0
    lat.sort()
    out.append(("file folders listed", len(lat), f"by-file<path>/ and <path>/modified/ in {walk_s:.1f} s "
                f"(listing p50 {lat[len(lat) // 2] * 1000:.1f} ms, max {lat[-1] * 1000:.0f} ms)"))
    # The folders above the touched files: the names that lead to them.
    above = {}
    for path in touched:
        d = path
        while d != "/":
            parent = posixpath.dirname(d)
            above.setdefault(parent, set()).add(posixpath.basename(d))
            d = parent
    for d, want in sorted(above.items()):
        try:
            got = set(os.listdir(mbf + (d if d != "/" else "")))
        except OSError as e:
            got = {f"<{e}>"}
        if got != want:
            mismatches += 1
            problems.append(("by-file folder", mbf + d, "expected " + " ".join(sorted(want - got)), "got " + " ".join(sorted(got - want))))
    out.append(("folders above listed", len(above), "by-file/<folder>/ of every folder above a touched file, names compared"))
    # Each project's by-file/<relative>/: a sample of 20 files under its cwd.
    rng = random.Random(seed + 1)
    nproj = 0
    for p in range(10):
        proj, cwd = f"--work-p{p}--", f"/work/p{p}"
        under = sorted(a for a, t in touched.items() if a.startswith(cwd + "/") and any(k[0] == proj for k in t))
        for a in rng.sample(under, 20):
            t = {k: m for k, m in touched[a].items() if k[0] == proj}
            names = {s: pj for (pj, s) in t}
            mod = {s: pj for (pj, s), m in t.items() if m}
            d = os.path.join(mnt, proj, "by-file", a[len(cwd) + 1:])
            links(d, names, bool(mod), "project by-file")
            if mod:
                links(d + "/modified", mod, False, "project by-file modified/")
            nproj += 1
    out.append(("project files sampled", nproj, "<project>/by-file/<relative>/ and modified/, 20 files under each project's cwd"))
    # Every session folder a link reached: its session.jsonl is the raw file.
    wrong = 0
    for proj, n in sorted(targets):
        with open(os.path.join(mnt, proj, n, "session.jsonl"), "rb") as fh:
            a = hashlib.sha256(fh.read()).digest()
        with open(sessions[(proj, n)], "rb") as fh:
            b = hashlib.sha256(fh.read()).digest()
        if a != b:
            wrong += 1
            problems.append(("session.jsonl", f"{proj}/{n}", "the raw file's bytes", "other bytes"))
    out.append(("sessions reached", len(targets), f"session folders the links lead to; {wrong} whose session.jsonl differs from the raw file"))
    mismatches += wrong
    out.append(("mismatches", mismatches, "listings whose names differ from the scan (must be 0)"))
    out.append(("links not resolving", unresolved, "links that do not resolve to MNT/<project>/<session> (must be 0)"))
    lookup("after the walk")
    st = read_stats(mnt)
    s = st["search"]
    out.append(("index", f"{s['full']} files, {s['entries']} entries", f"{s['bytesRead'] / 1e6:.1f} MB read to build it (.pifs/stats search)"))
    mem = {}
    with open(f"/proc/{pid}/status") as fh:
        for l in fh:
            k, _, v = l.partition(":")
            if k in ("VmHWM", "VmRSS"):
                mem[k] = v.strip()
    out.append(("pifs VmHWM", mem.get("VmHWM"), "peak, /proc/PID/status at the end"))
    out.append(("pifs VmRSS", mem.get("VmRSS"), "at the end"))
    print("what\tvalue\tnotes")
    for r in out:
        print("\t".join(str(x) for x in r))
    for what, where, exp, got in problems[:200]:
        print(f"problem\t{what} {where}\t{exp}; {got}")
    if len(problems) > 200:
        print(f"problem\t…\t{len(problems) - 200} more")
    return 1 if mismatches or unresolved else 0

if __name__ == "__main__":
    if sys.argv[1] == "gen":
        gen(sys.argv[2], int(sys.argv[3]))
    else:
        sys.exit(check(sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])))
EOF

log() { echo "byfile-check: $*" >&2; }
start=$(date +%s)
log "generating the store (seed $seed) in $store"
python3 "$tmp/check.py" gen "$store" "$seed"
pifs=${PIFS:-} built=
if [ -z "$pifs" ]; then
	log "building pifs"
	built=$(git describe --always --dirty 2>/dev/null || echo unknown)
	go build -o "$tmp/pifs" ./cmd/pifs
	pifs=$tmp/pifs
fi
printf 'pifs\t%s\t%s\n' "${built:-$pifs}" "${built:+built from this working tree (git describe --always --dirty)}" >"$tmp/build.tsv"
HOME=$home "$pifs" --sessions-dir "$store" --cache-dir none --index "$idx" "$mnt" 2>"$tmp/pifs.log" &
pid=$!
for _ in $(seq 600); do
	grep -qs " $mnt fuse" /proc/mounts && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/pifs.log" >&2; exit 1; }
	sleep 0.1
done
t=$(date +%s)
until grep -q '^index complete' "$mnt/search/status" 2>/dev/null; do
	if [ $(($(date +%s) - t)) -gt 600 ]; then
		log "the index is not complete after 600 s: $(cat "$mnt/search/status")"
		exit 1
	fi
	sleep 0.5
done
log "index complete after $(($(date +%s) - t)) s; walking by-file/"
rc=0
python3 "$tmp/check.py" check "$store" "$mnt" "$home" "$pid" "$seed" || rc=$?
fusermount3 -u "$mnt" || fusermount3 -u -z "$mnt"
wait "$pid" || true
pid=
cat "$tmp/build.tsv"
printf 'total\t%d s\tgeneration, build, index, walk and unmount; exit %d\n' $(($(date +%s) - start)) "$rc"
exit "$rc"
