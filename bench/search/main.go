// Command search measures the full-text index of package search on
// generated stores, against grep and rg over the raw files: the first
// build (time, MB/s, CPU, peak RSS), the index's size against the store's,
// a remount of the unchanged store (what it indexes again: nothing), an
// append's cost with the index on, queries warm (p50, p99) and on a fresh
// open (a new process: open, then the first query), and the size the
// index adds to the static pifs binary. Each build and query set runs in
// a process of its own (this binary, run again), so that its peak RSS is
// its own. It prints one table and writes it as TSV, the command first.
// bench/search.sh builds it and runs it.
//
//	search [-large] [-work DIR] [-runs N] [-only A,B] [-out FILE.tsv]
//
// The default setting is small (store A of 300 sessions, B of 1,000);
// -large makes the stores (A: 2,000 sessions, about 1 GB in 20
// projects; B: 10,000 sessions), as bench/scale does, with the same seeds.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/gen"
	"github.com/pifs/pifs/search"
	"github.com/pifs/pifs/sessions"
)

const needle = "NEEDLE-7f3a9c"

type setting struct {
	name string
	a, b gen.StoreSpec
}

var settings = map[string]setting{
	"small": {"small",
		gen.StoreSpec{Sessions: 300, Projects: 3, Seed: 1, MinEntries: 10, MaxExtra: 300, BigEvery: 100,
			BigEntries: 3000, AvgBytes: 1650, NeedleEvery: 37, Needle: needle},
		gen.StoreSpec{Sessions: 1000, Projects: 10, Seed: 2, MinEntries: 4, MaxExtra: 40, AvgBytes: 600}},
	"large": {"large",
		gen.StoreSpec{Sessions: 2000, Projects: 20, Seed: 1, MinEntries: 10, MaxExtra: 800, BigEvery: 100,
			BigEntries: 5000, AvgBytes: 1650, NeedleEvery: 97, Needle: needle},
		gen.StoreSpec{Sessions: 10000, Projects: 50, Seed: 2, MinEntries: 4, MaxExtra: 40, AvgBytes: 600}},
}

// queries are measured on both stores. Generated text draws on 28 words,
// so that a common word is in nearly every entry: those rows show what a
// query matching the whole store costs. A query named "in a project: Q"
// is Q asked in the store's first project's search/.
var queries = []struct{ q, what string }{
	{needle, "a rare string (in every 97th session)"},
	{"needle role:user", "a rare word and a filter"},
	{`"look for"`, "a rare phrase"},
	{"milestone-997", "a label's text"},
	{"label:milestone-4985", "a label filter alone"},
	{"ilesyst", "a substring of a common word (every entry)"},
	{"compiling", "a common word (every entry)"},
	{"benchmarks filesystem", "two common words"},
	{`"lazy dog"`, "a common phrase"},
	{"bench*", "a common prefix"},
	{"go", "a common short word"},
	{"compiling -tests", "a common word, another excluded"},
	{"tool:bash since:2025-03-02 until:2025-03-02", "filters alone: one day's tool calls"},
	{"in a project: compiling", "a common word in one project's search/"},
	{"in a project: " + needle, "a rare string in one project's search/"},
}

// scoped is a query as asked (see queries) and its scope in store.
func scoped(q, store string) (string, search.Scope) {
	q, ok := strings.CutPrefix(q, "in a project: ")
	if !ok {
		return q, search.Scope{}
	}
	ents, err := os.ReadDir(store)
	if err != nil {
		log.Fatal(err)
	}
	for _, e := range ents {
		if e.IsDir() {
			return q, search.Scope{Project: e.Name()}
		}
	}
	log.Fatalf("%s: no project", store)
	return "", search.Scope{}
}

func main() {
	log.SetFlags(0)
	if len(os.Args) > 1 && strings.HasPrefix(os.Args[1], "child-") {
		child(os.Args[1], os.Args[2:])
		return
	}
	large := flag.Bool("large", false, "the issue's stores: 2,000 sessions / 1 GB, 10,000 sessions")
	work := flag.String("work", "", "work folder (stores are kept there for later runs)")
	runs := flag.Int("runs", 20, "runs of each query, warm")
	only := flag.String("only", "A,B", "stores to measure")
	out := flag.String("out", "", "TSV file to write")
	flag.BoolVar(&reuse, "reuse", false, "queries only, on the index a run before built (kept in the work folder)")
	flag.Parse()
	s := settings["small"]
	if *large {
		s = settings["large"]
	}
	if *work == "" {
		*work = filepath.Join(os.TempDir(), "pifs-search-"+s.name)
	}
	var rows []row
	add := func(r row) {
		rows = append(rows, r)
		fmt.Printf("%-3s %-58s %12s %-6s %s\n", r.store, r.what, r.value, r.unit, r.notes)
	}
	for _, name := range strings.Split(*only, ",") {
		spec := s.a
		if name == "B" {
			spec = s.b
		}
		measure(name, spec, *work, *runs, add)
	}
	binarySize(add)
	if *out != "" {
		var b bytes.Buffer
		fmt.Fprintf(&b, "# command: bench/search.sh %s\n", strings.Join(os.Args[1:], " "))
		fmt.Fprintf(&b, "# date: %s   machine: %d cores, load %s   commit: %s\n", time.Now().UTC().Format(time.RFC3339), runtime.NumCPU(), loadavg(), commit())
		fmt.Fprintf(&b, "# generated text draws on 28 words: a common word is in nearly every entry\n")
		fmt.Fprintf(&b, "# the builder runs at nice 10: on a loaded machine its wall time is mostly waiting; cpu is the steadier figure\n")
		b.WriteString("store\twhat\tvalue\tunit\tnotes\n")
		for _, r := range rows {
			fmt.Fprintf(&b, "%s\t%s\t%s\t%s\t%s\n", r.store, r.what, r.value, r.unit, r.notes)
		}
		if err := os.WriteFile(*out, b.Bytes(), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

type row struct{ store, what, value, unit, notes string }

// reuse: measure the queries only, on the index built before.
var reuse bool

// store makes the generated store once (kept for later runs).
func store(spec gen.StoreSpec, dir string) (files int, size int64) {
	specPath := dir + ".spec"
	want, _ := json.Marshal(spec)
	if have, err := os.ReadFile(specPath); err != nil || !bytes.Equal(have, want) {
		os.RemoveAll(dir)
		log.Printf("generating %s", dir)
		if _, err := gen.Store(dir, spec); err != nil {
			log.Fatal(err)
		}
		if err := os.WriteFile(specPath, want, 0o644); err != nil {
			log.Fatal(err)
		}
	}
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() && strings.HasSuffix(fi.Name(), ".jsonl") {
			files++
			size += fi.Size()
		}
		return nil
	})
	return files, size
}

func measure(name string, spec gen.StoreSpec, work string, runs int, add func(row)) {
	dir := filepath.Join(work, name)
	files, size := store(spec, dir)
	mb := float64(size) / 1e6
	add(row{name, "store", fmt.Sprintf("%.1f", mb), "MB", fmt.Sprintf("%d sessions", files)})

	// The raw files, read through: grep and rg, warm.
	grep := timed("grep", "-rl", needle, dir)
	add(row{name, "grep -rl NEEDLE STORE (raw files)", ms(grep.wall), "ms", fmt.Sprintf("%.0f MB/s, cpu %s ms, peak RSS %.0f MB", mb/grep.wall.Seconds(), ms(grep.cpu), grep.rssMB)})
	if _, err := exec.LookPath("rg"); err == nil {
		rg := timed("rg", "-l", "--no-ignore", needle, dir)
		add(row{name, "rg -l NEEDLE STORE (raw files)", ms(rg.wall), "ms", fmt.Sprintf("%.0f MB/s, cpu %s ms, peak RSS %.0f MB", mb/rg.wall.Seconds(), ms(rg.cpu), rg.rssMB)})
	}

	idxDir := filepath.Join(work, name+"-index")
	if reuse {
		queryRows(name, dir, idxDir, runs, add, "", true)
		return
	}

	// The first build.
	os.RemoveAll(idxDir)
	b := self("child-build", dir, idxDir)
	add(row{name, "first build", ms(b.wall), "ms", fmt.Sprintf("%.2f MB/s (%.2f MB a second of cpu), cpu %s ms, peak RSS %.0f MB; %s", mb/b.wall.Seconds(), mb/b.cpu.Seconds(), ms(b.cpu), b.rssMB, b.out)})
	isize := dirSize(idxDir)
	add(row{name, "index size", fmt.Sprintf("%.1f", float64(isize)/1e6), "MB", fmt.Sprintf("%.2f× the store", float64(isize)/float64(size))})

	// A remount of the unchanged store.
	r := self("child-build", dir, idxDir)
	add(row{name, "remount, unchanged store", ms(r.wall), "ms", fmt.Sprintf("cpu %s ms, peak RSS %.0f MB; %s", ms(r.cpu), r.rssMB, r.out)})

	queryRows(name, dir, idxDir, runs, add, "", true)

	// Appends with the index on, then the queries again: the index as pi
	// leaves it between merges (the appended text beside the merged
	// segment; the appends are cut from the file again, their rows
	// deleted).
	a := self("child-append", dir, idxDir, "20")
	add(row{name, "append of one entry, indexed (20 appends)", strings.TrimSpace(strings.SplitN(a.out, "\t", 2)[0]), "ms", strings.SplitN(a.out+"\t", "\t", 3)[1]})
	queryRows(name, dir, idxDir, runs, add, "after the appends, ", false)
}

// queryRows measures the queries: fresh (a process of its own each, when
// fresh), then warm; label starts the rows' names.
func queryRows(name, dir, idxDir string, runs int, add func(row), label string, fresh bool) {
	for _, q := range queries {
		if fresh {
			f := self("child-query", idxDir, dir, q.q, "1")
			add(row{name, label + "fresh open + query: " + q.q, ms(f.wall), "ms", q.what + "; " + f.out})
		}
	}
	w := self("child-query", idxDir, dir, "", strconv.Itoa(runs))
	for _, l := range strings.Split(strings.TrimSpace(w.out), "\n") {
		p := strings.SplitN(l, "\t", 4)
		if len(p) == 4 {
			add(row{name, label + "warm query p50 / p99: " + p[0], p[1] + " / " + p[2], "ms", p[3]})
		}
	}
}

type result struct {
	wall, cpu time.Duration
	rssMB     float64
	out       string
}

func timed(name string, args ...string) result {
	cmd := exec.Command(name, args...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = os.Stderr
	start := time.Now()
	err := cmd.Run()
	wall := time.Since(start)
	if err != nil {
		if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() > 1 {
			log.Fatalf("%s %q: %v", name, args, err)
		}
	}
	ru := cmd.ProcessState.SysUsage().(*syscall.Rusage)
	cpu := time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	return result{wall: wall, cpu: cpu, rssMB: float64(ru.Maxrss) * 1024 / 1e6, out: strings.TrimSpace(out.String())}
}

func self(args ...string) result {
	exe, err := os.Executable()
	if err != nil {
		log.Fatal(err)
	}
	return timed(exe, args...)
}

func ms(d time.Duration) string { return fmt.Sprintf("%.0f", float64(d.Microseconds())/1000) }

func dirSize(dir string) int64 {
	var n int64
	filepath.Walk(dir, func(_ string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			n += fi.Size()
		}
		return nil
	})
	return n
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return "?"
	}
	return strings.Join(f[:3], " ")
}

func commit() string {
	out, err := exec.Command("git", "rev-parse", "--short", "HEAD").Output()
	if err != nil {
		return "?"
	}
	return strings.TrimSpace(string(out))
}

// binarySize is the size of the static binary, which links package
// search (and the SQLite engine: 5.8 MB of it when measured alone, in
// bench/results/2026-12-03-search-engines.tsv).
func binarySize(add func(row)) {
	tmp, err := os.MkdirTemp("", "pifs-binsize-")
	if err != nil {
		log.Fatal(err)
	}
	defer os.RemoveAll(tmp)
	bin := filepath.Join(tmp, "pifs")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/pifs")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		log.Fatalf("go build: %v\n%s", err, out)
	}
	fi, err := os.Stat(bin)
	if err != nil {
		log.Fatal(err)
	}
	add(row{"-", "CGO_ENABLED=0 go build ./cmd/pifs", fmt.Sprintf("%.1f", float64(fi.Size())/1e6), "MB", "package search and its SQLite engine linked"})
}

// child runs one measured part in a process of its own.
func child(mode string, args []string) {
	switch mode {
	case "child-build":
		store, dir := args[0], args[1]
		x := open(store, dir)
		start := time.Now()
		x.Start(sessions.NewIndex(store))
		<-x.Idle()
		el := time.Since(start)
		s := x.Stats()
		if err := x.Close(); err != nil {
			log.Fatal(err)
		}
		fmt.Printf("indexed whole %d, appended %d, unchanged %d, %d entries, %.0f MB read in %s", s.Full, s.Appended, s.Unchanged, s.Entries, float64(s.BytesRead)/1e6, el.Round(time.Millisecond))
	case "child-query":
		dir, store, q := args[0], args[1], args[2]
		runs, _ := strconv.Atoi(args[3])
		x := open(store, dir)
		defer x.Close()
		if q != "" {
			q, scope := scoped(q, store)
			res, err := x.SearchString(context.Background(), q, time.UTC, scope, 0)
			if err != nil {
				log.Fatal(err)
			}
			fmt.Printf("%s in %d sessions", hits(res), len(res.Sessions))
			return
		}
		for _, q := range queries {
			var lat, cpu []time.Duration
			var res *search.Result
			qq, scope := scoped(q.q, store)
			for i := 0; i < runs+1; i++ {
				start, c0 := time.Now(), cpuTime()
				r, err := x.SearchString(context.Background(), qq, time.UTC, scope, 0)
				if err != nil {
					log.Fatal(err)
				}
				if i > 0 {
					lat = append(lat, time.Since(start))
					cpu = append(cpu, cpuTime()-c0)
				}
				res = r
			}
			p := func(l []time.Duration, f float64) string {
				sort.Slice(l, func(i, j int) bool { return l[i] < l[j] })
				return fmt.Sprintf("%.1f", float64(l[int(math.Min(float64(len(l)-1), f*float64(len(l))))].Microseconds())/1000)
			}
			fmt.Printf("%s\t%s\t%s\t%s; cpu p50 %s ms; %s in %d sessions, %d listed with excerpts\n", q.q, p(lat, 0.5), p(lat, 0.99), q.what, p(cpu, 0.5), hits(res), len(res.Sessions), len(res.Hits))
		}
	case "child-append":
		store, dir := args[0], args[1]
		n, _ := strconv.Atoi(args[2])
		x := open(store, dir)
		defer x.Close()
		idx := sessions.NewIndex(store)
		x.Start(idx)
		<-x.Idle()
		// A session of the store, grown by one entry n times, then cut
		// back to its size.
		files := idx.All()
		f := files[len(files)/2]
		fi, err := os.Stat(f.Path)
		if err != nil {
			log.Fatal(err)
		}
		defer os.Truncate(f.Path, fi.Size())
		s0 := x.Stats()
		var lat []time.Duration
		for i := 0; i < n; i++ {
			// The store's own words: the segment the appends make holds
			// the common words the queries look for, as pi's would.
			line := fmt.Sprintf(`{"type":"message","id":"b%07d","parentId":null,"timestamp":"2025-06-01T00:00:00.000Z","message":{"role":"user","content":[{"type":"text","text":"appended while indexed %d: the quick brown fox jumps over the lazy dog while compiling go code with tests and benchmarks for the filesystem mount in a session tree"}]}}`+"\n", i, i)
			w, err := os.OpenFile(f.Path, os.O_WRONLY|os.O_APPEND, 0)
			if err != nil {
				log.Fatal(err)
			}
			w.WriteString(line)
			w.Close()
			// Until the append is committed (searchable): Idle would also
			// wait for the merges, which start a second after the last
			// commit.
			start := time.Now()
			x.Changed(idx.Update(f.Path))
			for !x.Progress().Complete {
				time.Sleep(50 * time.Microsecond)
			}
			lat = append(lat, time.Since(start))
		}
		<-x.Idle()
		s := x.Stats()
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		fmt.Printf("%.1f\tmedian, max %.1f ms; the session %.1f MB, %d bytes read, %d entries indexed for %d appends",
			float64(lat[len(lat)/2].Microseconds())/1000, float64(lat[len(lat)-1].Microseconds())/1000,
			float64(fi.Size())/1e6, s.BytesRead-s0.BytesRead, s.Entries-s0.Entries, n)
	}
}

// cpuTime is the CPU time the process has taken.
func cpuTime() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// hits says how many hits an answer holds, and whether more match.
func hits(r *search.Result) string {
	switch {
	case r.Visited > 0:
		return fmt.Sprintf("%d hits among the newest %d entries holding what it looks for", r.Total, r.Visited)
	case r.More:
		return fmt.Sprintf("%d hits (the newest: more match)", r.Total)
	}
	return fmt.Sprintf("%d hits", r.Total)
}

func open(store, dir string) *search.Index {
	x, err := search.Open(search.Options{Dir: dir, Store: store, Log: func(m string) { log.Print(m) }, Info: func(m string) { log.Print(m) }})
	if err != nil {
		log.Fatal(err)
	}
	return x
}
