// Command scale measures pifs on whole stores, side by side with the raw
// files and with pi 1.6 in the same run: figures 1–8 of the scale targets,
// a restart with the persistent cache (figure 10) and reads of large files
// against the floor (figure 9). It
// generates seeded stores (internal/gen), mounts them with the pifs binary,
// runs what a user would run through sh -c, and reads the pifs process's
// CPU, memory and I/O from /proc. It prints one table and writes the same
// as JSON. bench/scale.sh builds what it needs and runs it.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// needle is the string that a few sessions carry in their context.
const needle = "NEEDLE-7f3a9c"

// setting is the size of everything measured.
type setting struct {
	Name  string
	A     gen.StoreSpec // the walked and grepped store (figures 1, 5, 6, 8)
	B     gen.StoreSpec // the many-sessions store (figures 2, 7)
	Deep  []int         // entries of the deep sessions (figures 3, 4); the last is the big one
	Idle  time.Duration // figure 7
	Grepr time.Duration // limit of a recursive grep
}

var settings = map[string]setting{
	"small": {
		Name: "small",
		A: gen.StoreSpec{Sessions: 300, Projects: 3, MinEntries: 10, MaxExtra: 300, BigEvery: 100,
			BigEntries: 3000, AvgBytes: 1650, NeedleEvery: 37, Needle: needle},
		B:     gen.StoreSpec{Sessions: 1000, Projects: 10, MinEntries: 4, MaxExtra: 40, AvgBytes: 600},
		Deep:  []int{1000, 5000, 10000},
		Idle:  10 * time.Second,
		Grepr: 10 * time.Minute,
	},
	"large": {
		Name: "large",
		A: gen.StoreSpec{Sessions: 2000, Projects: 20, MinEntries: 10, MaxExtra: 800, BigEvery: 100,
			BigEntries: 5000, AvgBytes: 1650, NeedleEvery: 97, Needle: needle},
		B:     gen.StoreSpec{Sessions: 10000, Projects: 50, MinEntries: 4, MaxExtra: 40, AvgBytes: 600},
		Deep:  []int{1000, 10000, 60000},
		Idle:  60 * time.Second,
		Grepr: 10 * time.Minute,
	},
}

func main() {
	large := flag.Bool("large", false, "the issue's stores: 2,000 sessions / ~1 GB, 10,000 sessions, a 60,000-entry session")
	runs := flag.Int("runs", 3, "runs of each figure (min–median–max)")
	seed := flag.Int64("seed", 1, "seed of the generated stores")
	work := flag.String("work", "", "where the stores are generated and kept (default $TMPDIR/pifs-scale-SETTING)")
	out := flag.String("out", "", "JSON output (default bench/out/scale-SETTING.json)")
	pifs := flag.String("pifs", "", "the pifs binary")
	only := flag.String("only", "", "comma-separated figures to run (default all)")
	mnt := flag.String("mnt", "", "the mountpoint (default WORK/mnt-PID)")
	floor := flag.String("floor", "", "the floor server (bench/floor), to time figures 1, 2, 4 and 8 on it too")
	gofloor := flag.String("gofloor", "", "bench/gofloor, to time figures 1 (ls -l repeated), 2 (ls -l by-id fresh), 8 and 10 on it too")
	cacheMiB := flag.Int64("cache-mib", 0, "mount pifs with --cache-size of this many MiB (default: pifs's default, 256 MiB)")
	flag.Parse()
	s := settings["small"]
	if *large {
		s = settings["large"]
	}
	s.A.Seed, s.B.Seed = *seed, *seed+1
	if *work == "" {
		*work = filepath.Join(os.TempDir(), "pifs-scale-"+s.Name)
	}
	if *out == "" {
		*out = filepath.Join("bench", "out", "scale-"+s.Name+".json")
	}
	if *pifs == "" {
		log.Fatal("-pifs is required")
	}
	if *mnt == "" {
		*mnt = filepath.Join(*work, fmt.Sprintf("mnt-%d", os.Getpid()))
	}
	b := &bench{s: s, runs: *runs, work: *work, mnt: *mnt, pifs: *pifs, floor: *floor, gofloor: *gofloor, seed: *seed, figs: map[int]bool{}, manifests: map[string]bool{}, cacheMiB: *cacheMiB}
	help, _ := exec.Command(*pifs, "--help").CombinedOutput()
	b.cacheDir = bytes.Contains(help, []byte("--cache-dir"))
	for f := range strings.SplitSeq(*only, ",") {
		if n, err := strconv.Atoi(f); err == nil {
			b.figs[n] = true
		}
	}
	if err := b.run(); err != nil {
		b.unmountAll()
		log.Fatal(err)
	}
	b.print(os.Stdout)
	if err := b.writeJSON(*out); err != nil {
		log.Fatal(err)
	}
	fmt.Printf("\nJSON: %s\n", *out)
}

type bench struct {
	s     setting
	runs  int
	work  string
	mnt   string
	pifs  string
	floor string // the floor server, or ""
	// gofloor is bench/gofloor, or "": the floor of a server built on
	// go-fuse as pifs is.
	gofloor string
	seed    int64
	figs    map[int]bool
	a, b    store
	deep    []string // paths of the deep sessions, relative to deepDir
	rows    []*row
	byKey   map[string]*row
	mounts  []*mount
	info    map[string]any
	// stderr, when set, receives the next mount's log instead of pifs.log.
	stderr io.Writer
	// manifests made for the floor server in this invocation, by name.
	manifests map[string]bool
	// cacheDir tells that pifs has --cache-dir: the fresh mounts of
	// figures 1–8 are made with --cache-dir none (nothing kept from an
	// earlier mount), figure 10 with a cache of its own.
	cacheDir bool
	// cacheMiB, when not 0, is the --cache-size every mount is given.
	cacheMiB int64
}

type store struct {
	dir   string
	files []gen.File
	bytes int64
	big   int64 // the largest session's size
}

func (b *bench) want(fig int) bool { return len(b.figs) == 0 || b.figs[fig] }

func (b *bench) deepDir() string { return filepath.Join(b.work, "deep") }

func (b *bench) run() error {
	var err error
	if b.a, err = b.store("A", b.s.A); err != nil {
		return err
	}
	if b.b, err = b.store("B", b.s.B); err != nil {
		return err
	}
	if err := b.genDeep(); err != nil {
		return err
	}
	b.info = map[string]any{
		"storeA": map[string]any{"sessions": len(b.a.files), "projects": b.s.A.Projects, "bytes": b.a.bytes, "largestSession": b.a.big},
		"storeB": map[string]any{"sessions": len(b.b.files), "projects": b.s.B.Projects, "bytes": b.b.bytes},
		"deep":   b.s.Deep,
	}
	load, _ := os.ReadFile("/proc/loadavg")
	b.info["loadavgAtStart"] = strings.TrimSpace(string(load))
	b.info["cpus"] = runtime.NumCPU()
	log.Printf("store A: %d sessions, %.0f MB (largest %.1f MB); store B: %d sessions, %.0f MB",
		len(b.a.files), mb(b.a.bytes), mb(b.a.big), len(b.b.files), mb(b.b.bytes))
	// Both sides read warm files: the page cache is dropped for neither.
	for _, d := range []string{b.a.dir, b.b.dir, b.deepDir()} {
		if _, _, err := sh(context.Background(), d, "cat ./*/* > /dev/null", 0); err != nil {
			return err
		}
	}
	b.declare()
	for r := 1; r <= b.runs; r++ {
		log.Printf("run %d of %d", r, b.runs)
		if err := b.oneRun(); err != nil {
			return err
		}
	}
	if err := b.opsPass(); err != nil {
		return err
	}
	if b.want(9) {
		if err := b.fig9(); err != nil {
			return err
		}
	}
	if b.want(6) {
		if err := b.fig6(); err != nil {
			return err
		}
	}
	if b.want(7) {
		if err := b.fig7(); err != nil {
			return err
		}
	}
	b.finish()
	return nil
}

// store generates a store once and keeps it for later runs with the same spec.
func (b *bench) store(name string, p gen.StoreSpec) (store, error) {
	st := store{dir: filepath.Join(b.work, name)}
	spec, _ := json.Marshal(p)
	stamp := filepath.Join(b.work, name+".spec")
	manifest := filepath.Join(b.work, name+".json")
	if old, err := os.ReadFile(stamp); err == nil && bytes.Equal(old, spec) {
		data, err := os.ReadFile(manifest)
		if err == nil && json.Unmarshal(data, &st.files) == nil {
			return st, st.measure()
		}
	}
	log.Printf("generating store %s in %s", name, st.dir)
	os.Remove(stamp)
	if err := os.RemoveAll(st.dir); err != nil {
		return st, err
	}
	files, err := gen.Store(st.dir, p)
	if err != nil {
		return st, err
	}
	st.files = files
	data, _ := json.Marshal(files)
	if err := os.WriteFile(manifest, data, 0o644); err != nil {
		return st, err
	}
	if err := os.WriteFile(stamp, spec, 0o644); err != nil {
		return st, err
	}
	return st, st.measure()
}

func (st *store) measure() error {
	st.bytes, st.big = 0, 0
	for _, f := range st.files {
		fi, err := os.Stat(filepath.Join(st.dir, f.Path))
		if err != nil {
			return err
		}
		st.bytes += fi.Size()
		st.big = max(st.big, fi.Size())
	}
	return nil
}

// genDeep writes one deep session per size into one project.
func (b *bench) genDeep() error {
	proj := filepath.Join(b.deepDir(), gen.ProjectDir("/home/user/deep"))
	if err := os.MkdirAll(proj, 0o755); err != nil {
		return err
	}
	b.deep = nil
	for i, n := range b.s.Deep {
		s := gen.Spec{
			ID:       fmt.Sprintf("0196c3ef-e100-70f4-96f8-%012d", n),
			Cwd:      "/home/user/deep",
			Start:    time.Date(2025, 5, 12, 10, 0, i, 0, time.UTC),
			Seed:     42,
			Entries:  n,
			AvgBytes: 1650,
		}
		path := filepath.Join(filepath.Base(proj), gen.FileName(s))
		b.deep = append(b.deep, path)
		full := filepath.Join(b.deepDir(), path)
		if _, err := os.Stat(full); err == nil {
			continue
		}
		log.Printf("generating a session of %d entries", n)
		f, err := os.Create(full + ".tmp")
		if err != nil {
			return err
		}
		if err := gen.Write(f, s); err != nil {
			f.Close()
			return err
		}
		if err := f.Close(); err != nil {
			return err
		}
		if err := os.Rename(full+".tmp", full); err != nil {
			return err
		}
	}
	return nil
}

// row is one figure: samples of pifs and of what it is compared with.
type row struct {
	Fig  int    `json:"figure"`
	What string `json:"what"`
	Unit string `json:"unit"`
	// Samples, one per run.
	Pifs []float64 `json:"pifs"`
	Raw  []float64 `json:"raw,omitempty"`
	Pi   []float64 `json:"pi,omitempty"`
	// Base is what the ratio compares with when it is neither raw nor pi.
	Base     []float64 `json:"base,omitempty"`
	BaseName string    `json:"baseName,omitempty"`
	// Vs names the column of the ratio: raw, pi, or BaseName.
	Vs     string `json:"vs,omitempty"`
	Target string `json:"target"`
	// Limit applies to the ratio of the medians when Vs is set, else to
	// the median of pifs.
	Limit float64 `json:"limit,omitempty"`
	Ratio float64 `json:"ratio,omitempty"`
	Pass  *bool   `json:"pass,omitempty"`
	// Floor is the same command on the floor server (bench/floor): the
	// same names served from memory by a FUSE server that does nothing
	// else; FloorRatio compares it with what the ratio compares pifs with.
	Floor      []float64 `json:"floor,omitempty"`
	FloorRatio float64   `json:"floorRatio,omitempty"`
	// GoFloor is the same command on bench/gofloor: the same names served
	// from memory through go-fuse with pifs's mount options.
	GoFloor []float64 `json:"gofloor,omitempty"`
	PifsCPU []float64 `json:"pifsCpuMs,omitempty"`
	PifsIO  []float64 `json:"pifsReadMB,omitempty"`
	// BaseCPU is pifs's CPU during what Base times.
	BaseCPU []float64 `json:"baseCpuMs,omitempty"`
	Notes   []string  `json:"notes,omitempty"`
	Skipped string    `json:"skipped,omitempty"`
}

func (b *bench) add(r *row) *row {
	if b.byKey == nil {
		b.byKey = map[string]*row{}
	}
	if old := b.byKey[r.What]; old != nil {
		return old
	}
	b.byKey[r.What] = r
	b.rows = append(b.rows, r)
	return r
}

func (b *bench) row(what string) *row {
	r := b.byKey[what]
	if r == nil {
		panic("no row " + what)
	}
	return r
}

// note adds a note once.
func (r *row) note(s string) {
	if !slices.Contains(r.Notes, s) {
		r.Notes = append(r.Notes, s)
	}
}

// rdpName marks figures taken with READDIRPLUS off (-o noreaddirplus);
// pifs runs with it on.
func rdpName(off bool) string {
	if off {
		return " [readdirplus off]"
	}
	return ""
}

// declare creates the rows in the order they print.
func (b *bench) declare() {
	na, nb := len(b.a.files), len(b.b.files)
	for _, off := range []bool{false, true} {
		x := rdpName(off)
		if b.want(1) {
			b.add(&row{Fig: 1, What: fmt.Sprintf("find MNT -maxdepth 3 | wc -l, %d sessions, fresh mount%s", na, x), Unit: "ms", Target: "≤ 1 s", Limit: 1000})
			b.add(&row{Fig: 1, What: fmt.Sprintf("ls -l MNT/--*/*/ first, fresh mount (raw: ls -l STORE/*/)%s", x), Unit: "ms", Vs: "pi", Target: "≤ 0.5× pi", Limit: 0.5})
			b.add(&row{Fig: 1, What: fmt.Sprintf("ls -l MNT/--*/*/ repeated%s", x), Unit: "ms", Vs: "raw", Target: "≤ 10× raw", Limit: 10})
		}
		if b.want(2) {
			b.add(&row{Fig: 2, What: fmt.Sprintf("ls -l MNT/by-id, %d sessions, fresh mount%s", nb, x), Unit: "ms", Vs: "raw", Target: "≤ 3× raw", Limit: 3})
			b.add(&row{Fig: 2, What: fmt.Sprintf("ls -l MNT/by-id repeated%s", x), Unit: "ms", Vs: "raw", Target: "≤ 3× raw", Limit: 3})
		}
		if b.want(8) {
			b.add(&row{Fig: 8, What: fmt.Sprintf("tar cf - ./<project> (%d sessions), fresh mount%s", na/b.s.A.Projects, x), Unit: "ms", Vs: "raw", Target: "≤ 30× raw", Limit: 30})
		}
	}
	if b.want(3) {
		for i, n := range b.s.Deep {
			last := i == len(b.s.Deep)-1
			for _, what := range []string{"cat context.json (parse and render), fresh mount", "ls -l branches/<leaf>", "ls -l entries/", "ls -lR tree/"} {
				r := &row{Fig: 3, What: fmt.Sprintf("%s, %s entries", what, kilo(n)), Unit: "ms", Target: "—"}
				if last && !strings.HasPrefix(what, "cat") {
					r.Target, r.Limit = "≤ 1 s", 1000
				}
				b.add(r)
			}
		}
	}
	if b.want(4) {
		n := kilo(b.s.Deep[len(b.s.Deep)-1])
		b.add(&row{Fig: 4, What: fmt.Sprintf("first cat transcript.md, %s entries, fresh mount", n), Unit: "ms", Vs: "context.json", BaseName: "context.json", Target: "≤ 1.2× context.json", Limit: 1.2})
		b.add(&row{Fig: 4, What: fmt.Sprintf("first cat transcript.html, %s entries, fresh mount", n), Unit: "ms", Vs: "transcript.md", BaseName: "transcript.md", Target: "≤ 2× transcript.md", Limit: 2})
		b.add(&row{Fig: 4, What: fmt.Sprintf("first cat context.json, %s entries, fresh mount (raw: cat the file)", n), Unit: "ms", Vs: "pi", Target: "≤ 0.33× pi", Limit: 0.33})
	}
	if b.want(10) && b.cacheDir {
		for _, c := range b.restarts() {
			b.add(&row{Fig: 10, What: c.what + ", fresh mount, persistent cache left by the last mount", Unit: "ms", Vs: "warm", BaseName: "warm",
				Target: "≤ 1.5× warm", Limit: 1.5})
		}
	}
	if b.want(5) {
		b.add(&row{Fig: 5, What: fmt.Sprintf("grep -l NEEDLE MNT/--*/*/context.json, %d sessions, fresh mount", na), Unit: "ms", Vs: "pi", Target: "≤ 0.5× pi", Limit: 0.5})
		b.add(&row{Fig: 5, What: "grep -rl --include=context.json NEEDLE MNT, fresh mount", Unit: "ms", Vs: "grep -l glob", BaseName: "grep -l glob", Target: "≤ 3× glob form", Limit: 3})
	}
}

func kilo(n int) string {
	if n%1000 == 0 {
		return fmt.Sprintf("%dk", n/1000)
	}
	return strconv.Itoa(n)
}

// oneRun measures every per-run figure once.
func (b *bench) oneRun() error {
	na, nb := len(b.a.files), len(b.b.files)
	// The raw side and pi, once per run for both READDIRPLUS settings.
	var rawFind, rawLs, rawTar, rawLsB sample
	var err error
	proj := b.a.files[0].Project
	if b.want(1) {
		if rawFind, err = run(nil, b.a.dir, "find . -maxdepth 3 | wc -l"); err != nil {
			return err
		}
		if rawLs, err = run(nil, b.a.dir, "ls -l ./*/ | wc -l"); err != nil {
			return err
		}
	}
	if b.want(8) {
		if rawTar, err = run(nil, b.a.dir, "tar cf - ./"+proj+" | wc -c"); err != nil {
			return err
		}
	}
	if b.want(2) {
		if rawLsB, err = run(nil, b.b.dir, "ls -l ./*/ | wc -l"); err != nil {
			return err
		}
	}
	var piA piResult
	if b.want(1) || b.want(5) {
		if piA, err = b.piLoop(b.a.dir, b.a.files, needle); err != nil {
			return err
		}
		log.Printf("pi loop over %d sessions: %.0f ms, %d with the needle", piA.Files, piA.Ms, piA.Matched)
	}
	for _, off := range []bool{false, true} {
		x := rdpName(off)
		var opts []string
		if off {
			opts = []string{"-o", "noreaddirplus"}
		}
		if b.want(1) {
			m, err := b.mount(b.a.dir, opts...)
			if err != nil {
				return err
			}
			find, err := run(m, m.dir, "find "+m.dir+" -maxdepth 3 | wc -l")
			if err != nil {
				return err
			}
			r := b.row(fmt.Sprintf("find MNT -maxdepth 3 | wc -l, %d sessions, fresh mount%s", na, x))
			r.sample(find, rawFind, nil)
			r.note(fmt.Sprintf("lines: pifs %s, raw %s", find.out, rawFind.out))
			if err := m.unmount(); err != nil {
				return err
			}
			if m, err = b.mount(b.a.dir, opts...); err != nil {
				return err
			}
			first, err := run(m, m.dir, "ls -l ./--*/*/ | wc -l")
			if err != nil {
				return err
			}
			r = b.row(fmt.Sprintf("ls -l MNT/--*/*/ first, fresh mount (raw: ls -l STORE/*/)%s", x))
			r.sample(first, rawLs, &piA.Ms)
			r.note(fmt.Sprintf("lines: pifs %s, raw %s", first.out, rawLs.out))
			again, err := run(m, m.dir, "ls -l ./--*/*/ | wc -l")
			if err != nil {
				return err
			}
			r = b.row(fmt.Sprintf("ls -l MNT/--*/*/ repeated%s", x))
			r.sample(again, rawLs, &piA.Ms)
			if err := b.floorAfter(m, r, "A3", "find . -maxdepth 3", "ls -l ./--*/*/ | wc -l", "ls -l ./--*/*/ | wc -l", again.out); err != nil {
				return err
			}
		}
		if b.want(8) {
			m, err := b.mount(b.a.dir, opts...)
			if err != nil {
				return err
			}
			tar, err := run(m, m.dir, "tar cf - ./"+proj+" | wc -c")
			if err != nil {
				return err
			}
			r := b.row(fmt.Sprintf("tar cf - ./<project> (%d sessions), fresh mount%s", na/b.s.A.Projects, x))
			r.sample(tar, rawTar, nil)
			pb, _ := strconv.ParseFloat(tar.out, 64)
			rb, _ := strconv.ParseFloat(rawTar.out, 64)
			r.note(fmt.Sprintf("tar bytes: pifs %.0f MB, raw %.0f MB (%.1f×)", pb/1e6, rb/1e6, pb/rb))
			if err := b.floorAfter(m, r, "project", "find ./"+proj, "", "tar cf - ./"+proj+" | wc -c", tar.out); err != nil {
				return err
			}
		}
		if b.want(2) {
			m, err := b.mount(b.b.dir, opts...)
			if err != nil {
				return err
			}
			fresh, err := run(m, m.dir, "ls -l by-id | wc -l")
			if err != nil {
				return err
			}
			again, err := run(m, m.dir, "ls -l by-id | wc -l")
			if err != nil {
				return err
			}
			r := b.row(fmt.Sprintf("ls -l MNT/by-id, %d sessions, fresh mount%s", nb, x))
			r.sample(fresh, rawLsB, nil)
			r.note(fmt.Sprintf("lines: pifs %s, raw %s", fresh.out, rawLsB.out))
			r2 := b.row(fmt.Sprintf("ls -l MNT/by-id repeated%s", x))
			r2.sample(again, rawLsB, nil)
			if err := b.floorAfter(m, r, "by-id", "find by-id", "", "ls -l by-id | wc -l", fresh.out); err != nil {
				return err
			}
			if !off && b.floor != "" {
				s, err := b.floorRun(b.manifestPath("by-id"), "ls -l by-id | wc -l", "ls -l by-id | wc -l")
				if err != nil {
					return err
				}
				r2.Floor = append(r2.Floor, s.ms)
			}
		}
	}
	if b.want(5) {
		m, err := b.mount(b.a.dir)
		if err != nil {
			return err
		}
		glob, err := run(m, m.dir, "grep -l "+needle+" ./--*/*/context.json | wc -l")
		if err != nil {
			return err
		}
		r := b.row(fmt.Sprintf("grep -l NEEDLE MNT/--*/*/context.json, %d sessions, fresh mount", na))
		r.sample(glob, sample{}, &piA.Ms)
		want := 0
		for _, f := range b.a.files {
			if f.Needle {
				want++
			}
		}
		r.note(fmt.Sprintf("sessions found: pifs %s, pi %d, generated %d", glob.out, piA.Matched, want))
		if err := m.unmount(); err != nil {
			return err
		}
		if m, err = b.mount(b.a.dir); err != nil {
			return err
		}
		rec, err := runLimit(m, m.dir, "grep -rl --include=context.json "+needle+" . | wc -l", b.s.Grepr)
		r2 := b.row("grep -rl --include=context.json NEEDLE MNT, fresh mount")
		if errors.Is(err, errTimeout) {
			r2.note(fmt.Sprintf("did not finish in %v", b.s.Grepr))
			rec.ms = math.Inf(1)
		} else if err != nil {
			return err
		} else {
			r2.note(fmt.Sprintf("files found: %s (context.json of sessions and of branches/<tip>/)", rec.out))
		}
		r2.sample(rec, sample{}, nil)
		r2.Base = append(r2.Base, glob.ms)
		if err := m.unmount(); err != nil {
			return err
		}
	}
	if b.want(3) {
		for i, n := range b.s.Deep {
			if err := b.fig3(b.deep[i], n); err != nil {
				return err
			}
		}
	}
	if b.want(4) {
		if err := b.fig4(); err != nil {
			return err
		}
	}
	if b.want(10) && b.cacheDir {
		for range b.runs {
			for _, c := range b.restarts() {
				if err := b.restart(c); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// restartCase is a walk timed after a restart (figure 10).
type restartCase struct {
	what, store, cmd string
	// manifest and find name what the floor serves for it.
	manifest, find string
}

func (b *bench) restarts() []restartCase {
	return []restartCase{
		{fmt.Sprintf("ls -l MNT/by-id, %d sessions", len(b.b.files)), b.b.dir, "ls -l by-id | wc -l", "by-id", "find by-id"},
		{fmt.Sprintf("find MNT -maxdepth 3 | wc -l, %d sessions", len(b.a.files)), b.a.dir, "find . -maxdepth 3 | wc -l", "A3", "find . -maxdepth 3"},
		{"ls -l MNT/--*/*/", b.a.dir, "ls -l ./--*/*/ | wc -l", "A3", "find . -maxdepth 3"},
	}
}

// restart is figure 10: mount with a new persistent cache, walk, unmount;
// mount again and walk (timed), then walk again on that mount (warm: the
// kernel holds what the first walk looked up). The note gives the first
// walk without a cache, what pifs read during each, and the store's
// size.
func (b *bench) restart(c restartCase) error {
	cache := filepath.Join(b.work, "cache")
	if err := os.RemoveAll(cache); err != nil {
		return err
	}
	// Without the search index, which a persistent cache folder brings
	// (bench/search measures it): its first build, not done when the walk
	// is, would go on through the timed walk after the restart, and its
	// folders would not be those of the floor's manifest, made by the
	// figures before (by-file/ says in a README why it is empty).
	m, err := b.mount(c.store, "--cache-dir", cache, "--index", "none")
	if err != nil {
		return err
	}
	cold, err := run(m, m.dir, c.cmd)
	if err != nil {
		return err
	}
	if err := m.unmount(); err != nil {
		return err
	}
	if m, err = b.mount(c.store, "--cache-dir", cache, "--index", "none"); err != nil {
		return err
	}
	fresh, err := run(m, m.dir, c.cmd)
	if err != nil {
		return err
	}
	warm, err := run(m, m.dir, c.cmd)
	if err != nil {
		return err
	}
	var man string
	if b.floor != "" {
		if man, err = b.manifest(m, c.manifest, c.find); err != nil {
			m.unmount()
			return err
		}
	}
	if err := m.unmount(); err != nil {
		return err
	}
	if fresh.out != cold.out {
		return fmt.Errorf("%s after a restart gave %q, before %q", c.cmd, fresh.out, cold.out)
	}
	r := b.row(c.what + ", fresh mount, persistent cache left by the last mount")
	r.sample(fresh, sample{}, nil)
	r.Base = append(r.Base, warm.ms)
	r.BaseCPU = append(r.BaseCPU, warm.cpuMs)
	if man != "" {
		// The floor's fresh mount: what any FUSE server costs for the
		// walk when it knows everything already.
		s, err := b.floorRun(man, "", c.cmd)
		if err != nil {
			return err
		}
		if s.out != fresh.out {
			return fmt.Errorf("%s on the floor gave %q, on pifs %q", c.cmd, s.out, fresh.out)
		}
		r.Floor = append(r.Floor, s.ms)
		if err := b.goFloorRun(r, man, "", c.cmd, fresh.out); err != nil {
			return err
		}
	}
	st := b.a
	if c.store == b.b.dir {
		st = b.b
	}
	if len(r.Pifs) == 1 {
		// Once: the figures of the first run stand for the others.
		r.note(fmt.Sprintf("the first walk, without a cache: %.0f ms, pifs CPU %.0f ms, read %.0f MB; after the restart: pifs read %.1f MB of the store's %.0f MB; warm: the same walk again on that mount",
			cold.ms, cold.cpuMs, cold.readMB, fresh.readMB, mb(st.bytes)))
		if des, err := os.ReadDir(cache); err == nil {
			for _, de := range des {
				if info, err := de.Info(); err == nil && info.Size() > 0 {
					r.note(fmt.Sprintf("cache file %s: %.1f MB", de.Name(), float64(info.Size())/1e6))
				}
			}
		}
	}
	return nil
}

// fig9 is reads of large files against the floor: cat of the largest
// session's session.jsonl, context.json and transcript.md, the first (the
// parse and the rendering included) and again (what is held is served),
// beside the floor server serving the same sizes from memory with direct
// I/O as pifs does (bench/floor -d).
func (b *bench) fig9() error {
	path := b.deep[len(b.deep)-1]
	dir := strings.TrimSuffix(path, ".jsonl")
	n := kilo(b.s.Deep[len(b.s.Deep)-1])
	names := []string{"session.jsonl", "context.json", "transcript.md"}
	rows := map[string]*row{}
	for _, name := range names {
		rows[name] = b.add(&row{Fig: 9, What: fmt.Sprintf("cat %s again, %s entries (floor: bench/floor -d, same size)", name, n), Unit: "ms", Vs: "floor", BaseName: "floor", Target: "≤ 1.5× floor"})
		if b.floor != "" {
			rows[name].Limit = 1.5
		}
	}
	for r := 0; r < b.runs; r++ {
		m, err := b.mount(b.deepDir())
		if err != nil {
			return err
		}
		pifs := map[string][2]sample{}
		for _, name := range names {
			first, err := run(m, m.dir, "cat ./"+dir+"/"+name+" | wc -c")
			if err != nil {
				return err
			}
			again, err := run(m, m.dir, "cat ./"+dir+"/"+name+" | wc -c")
			if err != nil {
				return err
			}
			pifs[name] = [2]sample{first, again}
		}
		var man string
		if b.floor != "" {
			man, err = b.manifest(m, "deep", "find ./"+dir+" -maxdepth 1")
		}
		if uerr := m.unmount(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		for _, name := range names {
			row := rows[name]
			row.sample(pifs[name][1], sample{}, nil)
			row.note(fmt.Sprintf("%s bytes; the first cat on a fresh mount: %.0f ms", pifs[name][0].out, pifs[name][0].ms))
			if man == "" {
				continue
			}
			fm, err := b.start(b.floor, "-d", man, b.mnt, "-f")
			if err != nil {
				return err
			}
			s, err := run(nil, fm.dir, "cat ./"+dir+"/"+name+" | wc -c")
			if uerr := fm.unmount(); err == nil {
				err = uerr
			}
			if err != nil {
				return err
			}
			if s.out != pifs[name][1].out {
				return fmt.Errorf("%s on the floor has %s bytes, on pifs %s", name, s.out, pifs[name][1].out)
			}
			row.Base = append(row.Base, s.ms)
		}
	}
	return nil
}

func (b *bench) fig3(path string, n int) error {
	rawWc, err := run(nil, b.deepDir(), "wc -l < ./"+path)
	if err != nil {
		return err
	}
	m, err := b.mount(b.deepDir())
	if err != nil {
		return err
	}
	dir := filepath.Join(m.dir, strings.TrimSuffix(path, ".jsonl"))
	parse, err := run(m, dir, "cat context.json | wc -c")
	if err != nil {
		return err
	}
	b.row(fmt.Sprintf("cat context.json (parse and render), fresh mount, %s entries", kilo(n))).sample(parse, rawWc, nil)
	leaf, err := run(m, dir, "cat leaf")
	if err != nil {
		return err
	}
	for _, c := range []struct{ what, cmd string }{
		{"ls -l branches/<leaf>", "ls -l branches/" + leaf.out + " | wc -l"},
		{"ls -l entries/", "ls -l entries/ | wc -l"},
		{"ls -lR tree/", "ls -lR tree/ | wc -l"},
	} {
		s, err := run(m, dir, c.cmd)
		if err != nil {
			return err
		}
		r := b.row(fmt.Sprintf("%s, %s entries", c.what, kilo(n)))
		r.sample(s, rawWc, nil)
		r.note(fmt.Sprintf("lines %s", s.out))
	}
	return m.unmount()
}

func (b *bench) fig4() error {
	path := b.deep[len(b.deep)-1]
	dir := strings.TrimSuffix(path, ".jsonl")
	var first = map[string]sample{}
	for _, name := range []string{"transcript.md", "context.json", "transcript.html"} {
		m, err := b.mount(b.deepDir())
		if err != nil {
			return err
		}
		s, err := run(m, m.dir, "cat ./"+dir+"/"+name+" | wc -c")
		if err != nil {
			return err
		}
		first[name] = s
		if err := m.unmount(); err != nil {
			return err
		}
	}
	// The floor: the same two files, served from memory, their bytes
	// only.
	floor := map[string]sample{}
	if b.floor != "" {
		m, err := b.mount(b.deepDir())
		if err != nil {
			return err
		}
		man, err := b.manifest(m, "deep", "find ./"+dir+" -maxdepth 1")
		if uerr := m.unmount(); err == nil {
			err = uerr
		}
		if err != nil {
			return err
		}
		for _, name := range []string{"transcript.md", "context.json"} {
			s, err := b.floorRun(man, "", "cat ./"+dir+"/"+name+" | wc -c")
			if err != nil {
				return err
			}
			if s.out != first[name].out {
				return fmt.Errorf("%s on the floor has %s bytes, on pifs %s", name, s.out, first[name].out)
			}
			floor[name] = s
		}
	}
	raw, err := run(nil, b.deepDir(), "cat ./"+path+" | wc -c")
	if err != nil {
		return err
	}
	pi, err := b.piLoop(b.deepDir(), []gen.File{{Path: path}}, "")
	if err != nil {
		return err
	}
	n := kilo(b.s.Deep[len(b.s.Deep)-1])
	r := b.row(fmt.Sprintf("first cat transcript.md, %s entries, fresh mount", n))
	r.sample(first["transcript.md"], sample{}, nil)
	r.Base = append(r.Base, first["context.json"].ms)
	if s, ok := floor["transcript.md"]; ok {
		r.Floor = append(r.Floor, s.ms)
	}
	r.note(fmt.Sprintf("bytes: transcript.md %s, context.json %s, session.jsonl %s", first["transcript.md"].out, first["context.json"].out, raw.out))
	r = b.row(fmt.Sprintf("first cat transcript.html, %s entries, fresh mount", n))
	r.sample(first["transcript.html"], sample{}, nil)
	r.Base = append(r.Base, first["transcript.md"].ms)
	r.note(fmt.Sprintf("bytes: transcript.html %s; pifs CPU: transcript.html %.0f ms, transcript.md %.0f ms", first["transcript.html"].out, first["transcript.html"].cpuMs, first["transcript.md"].cpuMs))
	r = b.row(fmt.Sprintf("first cat context.json, %s entries, fresh mount (raw: cat the file)", n))
	r.sample(first["context.json"], raw, &pi.Ms)
	if s, ok := floor["context.json"]; ok {
		r.Floor = append(r.Floor, s.ms)
	}
	return nil
}

// fig6 is the memory after a recursive grep over everything, once.
func (b *bench) fig6() error {
	log.Printf("figure 6: grep -r over everything")
	m, err := b.mount(b.a.dir)
	if err != nil {
		return err
	}
	// The grep stops, as if timed out, should pifs grow past 6 GB.
	ctx, cancel := context.WithCancel(context.Background())
	var peak float64
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		for ctx.Err() == nil {
			if _, hwm := m.mem(); hwm > 6000 {
				peak = hwm
				cancel()
			}
			time.Sleep(100 * time.Millisecond)
		}
	}()
	s, err := runCtx(ctx, m, m.dir, "grep -rl "+needle+" . | wc -l", b.s.Grepr)
	cancel()
	<-stopped
	timedOut := errors.Is(err, errTimeout)
	if err != nil && !timedOut {
		return err
	}
	rss, hwm := m.mem()
	cache := int64(256)
	if b.cacheMiB > 0 {
		cache = b.cacheMiB
	}
	bound := float64(cache<<20)/1e6 + 1.5*mb(b.a.big) + 64
	target := fmt.Sprintf("≤ %.0f MB", bound)
	boundNote := fmt.Sprintf("bound: %d MiB cache + 1.5 × largest session (%.1f MB) + 64 MB", cache, mb(b.a.big))
	r := b.add(&row{Fig: 6, What: fmt.Sprintf("grep -rl NEEDLE MNT (everything), %d sessions, %.0f MB, fresh mount, once, cache %d MiB", len(b.a.files), mb(b.a.bytes), cache), Unit: "ms", Target: "completes"})
	r.sample(s, sample{}, nil)
	if peak > 0 {
		r.note(fmt.Sprintf("stopped when pifs reached %.0f MB", peak))
	} else if timedOut {
		r.note(fmt.Sprintf("did not finish in %v", b.s.Grepr))
		r.Pifs[len(r.Pifs)-1] = math.Inf(1)
	} else {
		r.note("files found: " + s.out)
	}
	h := b.add(&row{Fig: 6, What: "pifs VmHWM after it", Unit: "MB", Target: target, Limit: bound})
	h.Pifs = append(h.Pifs, hwm)
	h.note(boundNote)
	v := b.add(&row{Fig: 6, What: "pifs VmRSS after it", Unit: "MB", Target: target, Limit: bound})
	v.Pifs = append(v.Pifs, rss)
	return m.unmount()
}

// walkAll is the walk after which figure 7 measures the idle cost.
const walkAll = "find . > /dev/null; ls -l ./--*/*/ > /dev/null; ls -l by-id > /dev/null"

// fig7 is the idle cost after a walk, and the latency of a change, once.
func (b *bench) fig7() error {
	log.Printf("figure 7: idle and live")
	m, err := b.mount(b.b.dir)
	if err != nil {
		return err
	}
	walk, err := run(m, m.dir, walkAll)
	if err != nil {
		return err
	}
	w := b.add(&row{Fig: 7, What: fmt.Sprintf("walk: find MNT; ls -l MNT/--*/*/; ls -l by-id, %d sessions, once", len(b.b.files)), Unit: "ms", Target: "—"})
	w.sample(walk, sample{}, nil)
	cpu0 := m.cpu()
	t0 := time.Now()
	time.Sleep(b.s.Idle)
	idle := 100 * (m.cpu() - cpu0) / float64(time.Since(t0).Milliseconds())
	r := b.add(&row{Fig: 7, What: fmt.Sprintf("pifs CPU while idle %v after the walk", b.s.Idle), Unit: "% of a core", Target: "≤ 1%", Limit: 1})
	r.Pifs = append(r.Pifs, idle)
	r.note(fmt.Sprintf("clock tick 10 ms: resolution %.2f%%", 100*10/float64(b.s.Idle.Milliseconds())))
	if err := b.live(m, "", false); err != nil {
		return err
	}
	if err := m.unmount(); err != nil {
		return err
	}
	help, _ := exec.Command(b.pifs, "--help").CombinedOutput()
	if !bytes.Contains(help, []byte("--poll")) {
		b.add(&row{Fig: 7, What: "live latency with the poll fallback", Unit: "ms", Target: "≤ 1 s", Skipped: "pifs has no --poll flag"})
		return nil
	}
	// The fallback as it runs where no change events come: every 500 ms.
	if m, err = b.mount(b.b.dir, "--poll=500ms"); err != nil {
		return err
	}
	// The same walk, then idle: polling looks at the store twice a second.
	if _, err := run(m, m.dir, walkAll); err != nil {
		return err
	}
	cpu0, t0 = m.cpu(), time.Now()
	time.Sleep(b.s.Idle)
	idle = 100 * (m.cpu() - cpu0) / float64(time.Since(t0).Milliseconds())
	r = b.add(&row{Fig: 7, What: fmt.Sprintf("pifs CPU while idle %v after the walk (--poll=500ms)", b.s.Idle), Unit: "% of a core", Target: "—"})
	r.Pifs = append(r.Pifs, idle)
	r.note(fmt.Sprintf("%d sessions, polled every 500 ms", len(b.b.files)))
	if err := b.live(m, " (--poll=500ms)", true); err != nil {
		return err
	}
	if err := m.unmount(); err != nil {
		return err
	}
	if !b.cacheDir {
		return nil // a build without -o noevents (it came with --cache-dir)
	}
	// Polling alone, as a store written only by other machines sees it:
	// sessions not written in the last 10 minutes are looked at once per
	// sweep, the others at every poll.
	if m, err = b.mount(b.b.dir, "--poll=500ms", "-o", "noevents"); err != nil {
		return err
	}
	if _, err := run(m, m.dir, walkAll); err != nil {
		return err
	}
	cpu0, t0 = m.cpu(), time.Now()
	time.Sleep(b.s.Idle)
	idle = 100 * (m.cpu() - cpu0) / float64(time.Since(t0).Milliseconds())
	r = b.add(&row{Fig: 7, What: fmt.Sprintf("pifs CPU while idle %v after the walk (--poll=500ms -o noevents: polling alone)", b.s.Idle), Unit: "% of a core", Target: "≤ 1%", Limit: 1})
	r.Pifs = append(r.Pifs, idle)
	r.note(fmt.Sprintf("%d sessions, polled every 500 ms", len(b.b.files)))
	if err := b.live(m, " (--poll=500ms -o noevents)", true); err != nil {
		return err
	}
	return m.unmount()
}

// live appends 20 entries to a session with a shell's >> and measures how
// long until stat and cat through the mount show each. It restores the
// file afterwards.
func (b *bench) live(m *mount, x string, polled bool) error {
	f := b.b.files[0]
	raw := filepath.Join(b.b.dir, f.Path)
	dir := filepath.Join(m.dir, strings.TrimSuffix(f.Path, ".jsonl"))
	fi, err := os.Stat(raw)
	if err != nil {
		return err
	}
	orig := fi.Size()
	defer os.Truncate(raw, orig)
	parent, err := os.ReadFile(filepath.Join(dir, "leaf"))
	if err != nil {
		return err
	}
	prev := strings.TrimSpace(string(parent))
	if _, err := os.Stat(filepath.Join(dir, "session.jsonl")); err != nil {
		return err
	}
	var sizeMs, leafMs []float64
	timeout := 5 * time.Second
	if strings.Contains(x, "noevents") {
		timeout = time.Minute // a quiet session waits for the sweep
	}
	for i := 1; i <= 20; i++ {
		id := fmt.Sprintf("live%04d", i)
		line := fmt.Sprintf(`{"type":"message","id":"%s","parentId":"%s","timestamp":"2026-01-01T00:00:%02d.000Z","message":{"role":"user","content":"live %d","timestamp":1767225600000}}`, id, prev, i, i)
		prev = id
		if out, err := exec.Command("sh", "-c", `printf '%s\n' "$1" >> "$2"`, "sh", line, raw).CombinedOutput(); err != nil {
			return fmt.Errorf("append: %v: %s", err, out)
		}
		t0 := time.Now()
		fi, err := os.Stat(raw)
		if err != nil {
			return err
		}
		var sizeAt, leafAt time.Duration
		for (sizeAt == 0 || leafAt == 0) && time.Since(t0) < timeout {
			if sizeAt == 0 {
				if st, err := os.Stat(filepath.Join(dir, "session.jsonl")); err == nil && st.Size() == fi.Size() {
					sizeAt = time.Since(t0)
				}
			}
			if leafAt == 0 {
				if l, err := os.ReadFile(filepath.Join(dir, "leaf")); err == nil && strings.TrimSpace(string(l)) == id {
					leafAt = time.Since(t0)
				}
			}
			if sizeAt == 0 || leafAt == 0 {
				time.Sleep(5 * time.Millisecond)
			}
		}
		for _, v := range []struct {
			at  time.Duration
			dst *[]float64
		}{{sizeAt, &sizeMs}, {leafAt, &leafMs}} {
			if v.at == 0 {
				*v.dst = append(*v.dst, math.Inf(1))
			} else {
				*v.dst = append(*v.dst, float64(v.at.Microseconds())/1000)
			}
		}
	}
	if strings.Contains(x, "noevents") {
		// The first append is to a session not written for long (looked
		// at once per sweep); the others to one written a moment ago.
		for _, v := range []struct {
			what string
			ms   []float64
		}{{"stat -c %s session.jsonl", sizeMs}, {"cat leaf", leafMs}} {
			r := b.add(&row{Fig: 7, What: fmt.Sprintf("live: the first append by >> to a quiet session until %s shows it%s", v.what, x), Unit: "ms", Target: "≤ the sweep"})
			r.Pifs = v.ms[:1]
			r.note("a session not written in the last 10 minutes: looked at once per sweep (10,000 sessions: 20 s)")
			r = b.add(&row{Fig: 7, What: fmt.Sprintf("live: 19 more appends by >> until %s shows each%s", v.what, x), Unit: "ms", Target: "max ≤ 1 s"})
			r.Pifs = v.ms[1:]
			pass := slices.Max(r.Pifs) <= 1000
			r.Pass = &pass
			r.note("the samples of one run; polled every 5 ms")
		}
		return nil
	}
	for _, v := range []struct {
		what string
		ms   []float64
	}{{"stat -c %s session.jsonl", sizeMs}, {"cat leaf", leafMs}} {
		r := b.add(&row{Fig: 7, What: fmt.Sprintf("live: an append by >> until %s shows it, 20 appends%s", v.what, x), Unit: "ms", Target: "median ≤ 100 ms, max ≤ 1 s"})
		r.Pifs = v.ms
		med, mx := median(v.ms), slices.Max(v.ms)
		pass := med <= 100 && mx <= 1000
		if polled {
			// Polling every 500 ms: a change waits half of that on average.
			r.Target = "max ≤ 1 s"
			pass = mx <= 1000
		}
		r.Pass = &pass
		r.note("the 20 samples of one run; polled every 5 ms")
	}
	return nil
}

// opsPass runs the walks once more under --debug and counts the FUSE
// requests each made. Debug logging slows pifs: it gives no times.
func (b *bench) opsPass() error {
	na, nb := len(b.a.files), len(b.b.files)
	proj := b.a.files[0].Project
	deep := strings.TrimSuffix(b.deep[len(b.deep)-1], ".jsonl")
	type opsCase struct {
		fig        int
		what       string
		store      string
		off        bool
		setup, cmd string
	}
	var cases []opsCase
	for _, off := range []bool{false, true} {
		x := rdpName(off)
		cases = append(cases,
			opsCase{1, fmt.Sprintf("find MNT -maxdepth 3 | wc -l, %d sessions, fresh mount%s", na, x), b.a.dir, off, "", "find . -maxdepth 3 | wc -l"},
			opsCase{1, fmt.Sprintf("ls -l MNT/--*/*/ first, fresh mount (raw: ls -l STORE/*/)%s", x), b.a.dir, off, "", "ls -l ./--*/*/ | wc -l"},
			opsCase{1, fmt.Sprintf("ls -l MNT/--*/*/ repeated%s", x), b.a.dir, off, "ls -l ./--*/*/ | wc -l", "ls -l ./--*/*/ | wc -l"},
			opsCase{2, fmt.Sprintf("ls -l MNT/by-id, %d sessions, fresh mount%s", nb, x), b.b.dir, off, "", "ls -l by-id | wc -l"},
			opsCase{2, fmt.Sprintf("ls -l MNT/by-id repeated%s", x), b.b.dir, off, "ls -l by-id | wc -l", "ls -l by-id | wc -l"},
			opsCase{8, fmt.Sprintf("tar cf - ./<project> (%d sessions), fresh mount%s", na/b.s.A.Projects, x), b.a.dir, off, "", "tar cf - ./" + proj + " | wc -c"},
		)
	}
	n := kilo(b.s.Deep[len(b.s.Deep)-1])
	cases = append(cases,
		opsCase{3, fmt.Sprintf("ls -l branches/<leaf>, %s entries", n), b.deepDir(), false, "cat ./" + deep + "/context.json > /dev/null", "ls -l ./" + deep + "/branches/$(cat ./" + deep + "/leaf) | wc -l"},
		opsCase{5, fmt.Sprintf("grep -l NEEDLE MNT/--*/*/context.json, %d sessions, fresh mount", na), b.a.dir, false, "", "grep -l " + needle + " ./--*/*/context.json | wc -l"},
		opsCase{5, "grep -rl --include=context.json NEEDLE MNT, fresh mount", b.a.dir, false, "", "grep -rl --include=context.json " + needle + " . | wc -l"},
	)
	for _, c := range cases {
		r := b.byKey[c.what]
		if !b.want(c.fig) || r == nil {
			continue
		}
		log.Printf("counting FUSE requests: %s", c.what)
		ops := &opCounter{counts: map[string]int{}, start: ".scale-start", stop: ".scale-stop"}
		b.stderr = ops
		opts := []string{"--debug"}
		if c.off {
			opts = append(opts, "-o", "noreaddirplus")
		}
		m, err := b.mount(c.store, opts...)
		b.stderr = nil
		if err != nil {
			return err
		}
		if c.setup != "" {
			if _, err := run(nil, m.dir, c.setup); err != nil {
				return err
			}
		}
		// Lookups of names that do not exist mark where the command's
		// requests start and end in the log.
		os.Stat(filepath.Join(m.dir, ops.start))
		_, err = runLimit(nil, m.dir, c.cmd, b.s.Grepr)
		if err != nil && !errors.Is(err, errTimeout) {
			return err
		}
		os.Stat(filepath.Join(m.dir, ops.stop))
		complete := ops.wait()
		if err := m.unmount(); err != nil {
			return err
		}
		counted := ops.String()
		if !complete {
			counted += " (the log did not reach the end mark)"
		}
		r.note("FUSE requests (counted in a separate run under --debug): " + counted)
	}
	return nil
}

// opCounter counts go-fuse's debug lines "rx N: OPCODE ..." by opcode,
// between a lookup of the name start and one of stop.
type opCounter struct {
	start, stop string
	mu          sync.Mutex
	partial     []byte
	counts      map[string]int
	state       int // 0 before start, 1 counting, 2 stopped
}

func (o *opCounter) Write(p []byte) (int, error) {
	o.mu.Lock()
	defer o.mu.Unlock()
	data := append(o.partial, p...)
	for {
		i := bytes.IndexByte(data, '\n')
		if i < 0 {
			break
		}
		line := data[:i]
		data = data[i+1:]
		switch {
		case o.state == 0 && bytes.Contains(line, []byte(o.start)):
			o.state = 1
			continue
		case o.state == 1 && bytes.Contains(line, []byte(o.stop)):
			o.state = 2
		}
		if o.state != 1 {
			continue
		}
		if j := bytes.Index(line, []byte(" rx ")); j >= 0 {
			rest := line[j+4:]
			if k := bytes.Index(rest, []byte(": ")); k >= 0 {
				op, _, _ := bytes.Cut(rest[k+2:], []byte(" "))
				o.counts[string(op)]++
			}
		}
	}
	o.partial = append(o.partial[:0], data...)
	return len(p), nil
}

// wait returns once the log has reached the stop mark (or after 30 s).
func (o *opCounter) wait() bool {
	for deadline := time.Now().Add(30 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		o.mu.Lock()
		done := o.state == 2
		o.mu.Unlock()
		if done {
			return true
		}
	}
	return false
}

func (o *opCounter) String() string {
	o.mu.Lock()
	defer o.mu.Unlock()
	type kv struct {
		op string
		n  int
	}
	var all []kv
	total := 0
	for op, n := range o.counts {
		all = append(all, kv{op, n})
		total += n
	}
	slices.SortFunc(all, func(a, b kv) int { return b.n - a.n })
	parts := []string{fmt.Sprintf("%d in all", total)}
	for _, e := range all {
		parts = append(parts, fmt.Sprintf("%s %d", e.op, e.n))
	}
	return strings.Join(parts, ", ")
}

// sample is one timed command.
type sample struct {
	ms     float64
	cpuMs  float64 // pifs CPU during it
	readMB float64 // pifs rchar during it
	out    string
}

// sample adds one run's pifs sample and what it is compared with.
func (r *row) sample(p, raw sample, pi *float64) {
	r.Pifs = append(r.Pifs, p.ms)
	r.PifsCPU = append(r.PifsCPU, p.cpuMs)
	r.PifsIO = append(r.PifsIO, p.readMB)
	if raw.out != "" || raw.ms != 0 {
		r.Raw = append(r.Raw, raw.ms)
	}
	if pi != nil {
		r.Pi = append(r.Pi, *pi)
	}
}

var errTimeout = errors.New("timed out")

// run runs a command through sh -c in dir and times it; with a mount, it
// also takes the pifs process's CPU and reads during it.
func run(m *mount, dir, cmd string) (sample, error) {
	return runLimit(m, dir, cmd, 0)
}

func runLimit(m *mount, dir, cmd string, limit time.Duration) (sample, error) {
	return runCtx(context.Background(), m, dir, cmd, limit)
}

func runCtx(ctx context.Context, m *mount, dir, cmd string, limit time.Duration) (sample, error) {
	var cpu0, io0 float64
	if m != nil {
		cpu0, io0 = m.cpu(), m.rchar()
	}
	ms, out, err := sh(ctx, dir, cmd, limit)
	s := sample{ms: ms, out: strings.TrimSpace(out)}
	if m != nil {
		s.cpuMs, s.readMB = m.cpu()-cpu0, (m.rchar()-io0)/1e6
	}
	return s, err
}

// sh runs cmd in dir and returns its wall time in ms and its output.
// Errors of the command itself are logged, not returned: a pipeline's
// status is that of wc.
func sh(ctx context.Context, dir, cmd string, limit time.Duration) (float64, string, error) {
	if limit > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, limit)
		defer cancel()
	}
	c := exec.CommandContext(ctx, "sh", "-c", cmd)
	c.Dir = dir
	c.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	c.Cancel = func() error { return syscall.Kill(-c.Process.Pid, syscall.SIGKILL) }
	var out, stderr bytes.Buffer
	c.Stdout, c.Stderr = &out, &stderr
	t := time.Now()
	err := c.Run()
	ms := float64(time.Since(t).Microseconds()) / 1000
	if ctx.Err() != nil {
		return ms, out.String(), errTimeout
	}
	if err != nil {
		return ms, out.String(), fmt.Errorf("%s in %s: %v: %s", cmd, dir, err, stderr.Bytes())
	}
	if stderr.Len() > 0 {
		first, _, _ := strings.Cut(stderr.String(), "\n")
		log.Printf("%s: stderr %d bytes: %s", cmd, stderr.Len(), first)
	}
	return ms, out.String(), nil
}

type piResult struct {
	Files    int     `json:"files"`
	Entries  int     `json:"entries"`
	Matched  int     `json:"matched"`
	Ms       float64 `json:"ms"`
	MaxRssMB float64 `json:"maxRssMB"`
}

// piLoop runs pi's SessionManager.open + buildSessionContext over files;
// its time is the loop's, measured inside node (without node's start).
func (b *bench) piLoop(dir string, files []gen.File, needle string) (piResult, error) {
	var list strings.Builder
	for _, f := range files {
		list.WriteString(filepath.Join(dir, f.Path) + "\n")
	}
	lf := b.mnt + "-pi-list.txt"
	if err := os.WriteFile(lf, []byte(list.String()), 0o644); err != nil {
		return piResult{}, err
	}
	defer os.Remove(lf)
	args := []string{"bench/pi-loop.mjs", lf}
	if needle != "" {
		args = append(args, needle)
	}
	out, err := exec.Command("node", args...).Output()
	if err != nil {
		return piResult{}, fmt.Errorf("pi-loop: %v", err)
	}
	var r piResult
	return r, json.Unmarshal(out, &r)
}

// mount is one running pifs, in the foreground under us so that its log
// (stderr) is kept.
type mount struct {
	dir  string
	cmd  *exec.Cmd
	done chan error
}

func (b *bench) mount(store string, opts ...string) (*mount, error) {
	args := append([]string{"--sessions-dir", store}, opts...)
	if b.cacheDir && !slices.Contains(opts, "--cache-dir") {
		args = append(args, "--cache-dir", "none")
	}
	if b.cacheMiB > 0 {
		args = append(args, "--cache-size", fmt.Sprintf("%dMiB", b.cacheMiB))
	}
	return b.start(b.pifs, append(args, b.mnt)...)
}

// start runs a FUSE server in the foreground and returns once the
// mountpoint is its.
func (b *bench) start(bin string, args ...string) (*mount, error) {
	dir := b.mnt
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, err
	}
	logf, err := os.OpenFile(filepath.Join(b.work, "pifs.log"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	defer logf.Close()
	c := exec.Command(bin, args...)
	c.Stderr = logf
	if b.stderr != nil {
		c.Stderr = b.stderr
	}
	var before syscall.Stat_t
	if err := syscall.Stat(dir, &before); err != nil {
		return nil, err
	}
	if err := c.Start(); err != nil {
		return nil, err
	}
	m := &mount{dir: dir, cmd: c, done: make(chan error, 1)}
	go func() { m.done <- c.Wait() }()
	b.mounts = append(b.mounts, m)
	for deadline := time.Now().Add(60 * time.Second); ; {
		var st syscall.Stat_t
		if err := syscall.Stat(dir, &st); err == nil && st.Dev != before.Dev {
			return m, nil
		}
		select {
		case err := <-m.done:
			return nil, fmt.Errorf("%s %v exited before mounting: %v (see %s)", bin, args, err, logf.Name())
		case <-time.After(5 * time.Millisecond):
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("%s %v: not mounted after 60 s", bin, args)
		}
	}
}

func (m *mount) unmount() error {
	if out, err := exec.Command("fusermount3", "-u", m.dir).CombinedOutput(); err != nil {
		return fmt.Errorf("fusermount3 -u %s: %v: %s", m.dir, err, out)
	}
	select {
	case <-m.done:
		return nil
	case <-time.After(30 * time.Second):
		m.cmd.Process.Kill()
		return fmt.Errorf("%s still running 30 s after unmounting", m.cmd.Path)
	}
}

// manifest lists for the floor server the names that find reaches
// through m (a pifs mount), with their types, sizes and link targets. It
// is made once per name in an invocation, after the timed commands.
func (b *bench) manifest(m *mount, name, find string) (string, error) {
	path := b.manifestPath(name)
	if b.manifests[name] {
		return path, nil
	}
	if _, _, err := sh(context.Background(), m.dir, find+` -printf '%y\0%s\0%p\0%l\0' > `+path, 0); err != nil {
		return "", err
	}
	b.manifests[name] = true
	return path, nil
}

// floorAfter unmounts m and, when there is a floor server and m has
// READDIRPLUS on (the row's name says so), makes a manifest through m
// first, then times cmd on the floor as a sample of r. The output of cmd
// must be the same as on pifs (want): the floor serves the same names.
func (b *bench) floorAfter(m *mount, r *row, name, find, setup, cmd, want string) error {
	if b.floor == "" || strings.HasSuffix(r.What, rdpName(true)) {
		return m.unmount()
	}
	man, err := b.manifest(m, name, find)
	if err != nil {
		m.unmount()
		return err
	}
	if err := m.unmount(); err != nil {
		return err
	}
	s, err := b.floorRun(man, setup, cmd)
	if err != nil {
		return err
	}
	if s.out != want {
		return fmt.Errorf("%s on the floor gave %q, on pifs %q: the floor does not serve the same names", cmd, s.out, want)
	}
	r.Floor = append(r.Floor, s.ms)
	return b.goFloorRun(r, man, setup, cmd, want)
}

// goFloorRun times cmd on bench/gofloor serving manifest, after setup,
// into r, when the bench has it; its output must be want.
func (b *bench) goFloorRun(r *row, manifest, setup, cmd, want string) error {
	if b.gofloor == "" {
		return nil
	}
	s, err := b.serve(setup, cmd, b.gofloor, manifest, b.mnt)
	if err != nil {
		return err
	}
	if s.out != want {
		return fmt.Errorf("%s on gofloor gave %q, on pifs %q", cmd, s.out, want)
	}
	r.GoFloor = append(r.GoFloor, s.ms)
	return nil
}

func (b *bench) manifestPath(name string) string {
	return filepath.Join(b.work, "floor-"+name+".manifest")
}

// floorRun times cmd on a fresh floor mount of a manifest, after setup
// (untimed, when given).
func (b *bench) floorRun(manifest, setup, cmd string) (sample, error) {
	return b.serve(setup, cmd, b.floor, manifest, b.mnt, "-f")
}

// serve times cmd, after setup, on a fresh mount of the server bin started
// with args.
func (b *bench) serve(setup, cmd, bin string, args ...string) (sample, error) {
	m, err := b.start(bin, args...)
	if err != nil {
		return sample{}, err
	}
	if setup != "" {
		if _, err := run(nil, m.dir, setup); err != nil {
			m.unmount()
			return sample{}, err
		}
	}
	s, err := run(m, m.dir, cmd)
	if uerr := m.unmount(); err == nil {
		err = uerr
	}
	return s, err
}

func (b *bench) unmountAll() {
	for _, m := range b.mounts {
		if m.cmd.ProcessState == nil {
			exec.Command("fusermount3", "-uz", m.dir).Run()
		}
	}
}

func (m *mount) proc(name string) string {
	data, _ := os.ReadFile(fmt.Sprintf("/proc/%d/%s", m.cmd.Process.Pid, name))
	return string(data)
}

// cpu is the process's user+system time in ms (clock ticks of 10 ms).
func (m *mount) cpu() float64 {
	stat := m.proc("stat")
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(stat[i+1:])
	// Fields after the name start at field 3: utime is 14, stime 15.
	if len(f) < 13 {
		return 0
	}
	u, _ := strconv.ParseFloat(f[11], 64)
	s, _ := strconv.ParseFloat(f[12], 64)
	return (u + s) * 10
}

// rchar is the bytes the process read (any read(2), FUSE requests too).
func (m *mount) rchar() float64 {
	for l := range strings.SplitSeq(m.proc("io"), "\n") {
		if v, ok := strings.CutPrefix(l, "rchar: "); ok {
			n, _ := strconv.ParseFloat(v, 64)
			return n
		}
	}
	return 0
}

// mem is VmRSS and VmHWM in MB.
func (m *mount) mem() (rss, hwm float64) {
	for l := range strings.SplitSeq(m.proc("status"), "\n") {
		f := strings.Fields(l)
		if len(f) < 2 {
			continue
		}
		kb, _ := strconv.ParseFloat(f[1], 64)
		switch f[0] {
		case "VmRSS:":
			rss = kb * 1024 / 1e6
		case "VmHWM:":
			hwm = kb * 1024 / 1e6
		}
	}
	return rss, hwm
}

func mb(n int64) float64 { return float64(n) / 1e6 }

func median(v []float64) float64 {
	if len(v) == 0 {
		return math.NaN()
	}
	s := slices.Clone(v)
	slices.Sort(s)
	if len(s)%2 == 1 {
		return s[len(s)/2]
	}
	return (s[len(s)/2-1] + s[len(s)/2]) / 2
}

// finish computes the ratios and verdicts.
func (b *bench) finish() {
	for _, r := range b.rows {
		if r.Skipped != "" || len(r.Pifs) == 0 {
			continue
		}
		p := median(r.Pifs)
		var base []float64
		switch r.Vs {
		case "raw":
			base = r.Raw
		case "pi":
			base = r.Pi
		case "":
		default:
			base = r.Base
		}
		if len(base) > 0 {
			r.Ratio = p / median(base)
			if len(r.Floor) > 0 {
				r.FloorRatio = median(r.Floor) / median(base)
			}
		}
		if math.IsInf(r.Ratio, 0) || math.IsNaN(r.Ratio) {
			r.Ratio = 0
		}
		if math.IsInf(p, 1) {
			fail := false
			r.Pass = &fail
		}
		if r.Pass != nil || r.Limit == 0 {
			continue
		}
		v := p
		if r.Vs != "" {
			v = r.Ratio
		}
		pass := v <= r.Limit
		r.Pass = &pass
	}
	for _, r := range b.rows {
		if r.Fig == 3 && len(r.Pifs) > 0 {
			r.note(fmt.Sprintf("%.1f ms per 1k entries", median(r.Pifs)/entriesOf(r.What)*1000))
		}
	}
}

func entriesOf(what string) float64 {
	i := strings.LastIndex(what, ", ")
	s := strings.TrimSuffix(strings.TrimSuffix(what[i+2:], " entries"), "k")
	n, _ := strconv.ParseFloat(s, 64)
	if strings.HasSuffix(strings.TrimSuffix(what[i+2:], " entries"), "k") {
		n *= 1000
	}
	return n
}

func (b *bench) print(w io.Writer) {
	fmt.Fprintf(w, "\npifs scale, setting %s, seed %d, %d runs (min–median–max; ratio of medians)\n", b.s.Name, b.seed, b.runs)
	fmt.Fprintf(w, "store A: %d sessions in %d projects, %.0f MB (largest %.1f MB); store B: %d sessions in %d projects, %.0f MB; deep sessions: %v entries\n",
		len(b.a.files), b.s.A.Projects, mb(b.a.bytes), mb(b.a.big), len(b.b.files), b.s.B.Projects, mb(b.b.bytes), b.s.Deep)
	fmt.Fprintf(w, "%d CPUs, load average at start %s; raw for figure 3 is wc -l of the session file\n\n", b.info["cpus"], b.info["loadavgAtStart"])
	floors := slices.ContainsFunc(b.rows, func(r *row) bool { return len(r.Floor) > 0 })
	if floors {
		fmt.Fprintln(w, "floor: the same command on bench/floor, a FUSE server that serves the same names, sizes and link targets from memory and does nothing else (one thread, no OPEN); its ratio is against the same base as pifs's")
		fmt.Fprintln(w)
	}
	gofloors := slices.ContainsFunc(b.rows, func(r *row) bool { return len(r.GoFloor) > 0 })
	if gofloors {
		fmt.Fprintln(w, "gofloor: the same command on bench/gofloor, which serves those names from memory through go-fuse with pifs's mount options: the floor of a server built as pifs is")
		fmt.Fprintln(w)
	}
	switch {
	case gofloors:
		fmt.Fprintln(w, "| # | what | pifs | raw | pi | ratio | target | | floor | floor ratio | gofloor | pifs / gofloor |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|---|---|")
	case floors:
		fmt.Fprintln(w, "| # | what | pifs | raw | pi | ratio | target | | floor | floor ratio |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|---|---|")
	default:
		fmt.Fprintln(w, "| # | what | pifs | raw | pi | ratio | target | |")
		fmt.Fprintln(w, "|---|---|---|---|---|---|---|---|")
	}
	for _, r := range b.rows {
		if r.Skipped != "" {
			fmt.Fprintf(w, "| %d | %s | skipped: %s | | | | %s | |\n", r.Fig, cell(r.What), r.Skipped, r.Target)
			continue
		}
		ratio := ""
		if r.Ratio != 0 {
			ratio = fmt.Sprintf("%.2f× %s", r.Ratio, r.Vs)
		}
		verdict := ""
		if r.Pass != nil {
			verdict = "ok"
			if !*r.Pass {
				verdict = "**MISS**"
			}
		}
		fmt.Fprintf(w, "| %d | %s | %s | %s | %s | %s | %s | %s |", r.Fig, cell(r.What), span(r.Pifs, r.Unit), span(r.Raw, r.Unit), span(r.Pi, r.Unit), ratio, r.Target, verdict)
		if floors {
			fratio := ""
			if r.FloorRatio != 0 {
				fratio = fmt.Sprintf("%.2f× %s", r.FloorRatio, r.Vs)
			}
			fmt.Fprintf(w, " %s | %s |", span(r.Floor, r.Unit), fratio)
		}
		if gofloors {
			gratio := ""
			if len(r.GoFloor) > 0 && len(r.Pifs) > 0 {
				gratio = fmt.Sprintf("%.2f×", median(r.Pifs)/median(r.GoFloor))
			}
			fmt.Fprintf(w, " %s | %s |", span(r.GoFloor, r.Unit), gratio)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w, "\nNotes (pifs CPU and bytes read are medians over the runs):")
	for _, r := range b.rows {
		notes := slices.Clone(r.Notes)
		if len(r.PifsCPU) > 0 {
			notes = append(notes, fmt.Sprintf("pifs CPU %.0f ms, read %.0f MB", median(r.PifsCPU), median(r.PifsIO)))
		}
		if r.BaseName != "" && len(r.Base) > 0 {
			notes = append(notes, fmt.Sprintf("%s: %s", r.BaseName, span(r.Base, r.Unit)))
		}
		if len(r.BaseCPU) > 0 && len(r.PifsCPU) > 0 {
			notes = append(notes, fmt.Sprintf("pifs CPU %s against %s %s (%.2f×)", span(r.PifsCPU, "ms"), r.BaseName, span(r.BaseCPU, "ms"), median(r.PifsCPU)/max(median(r.BaseCPU), 0.001)))
		}
		if len(notes) > 0 {
			fmt.Fprintf(w, "- %s: %s\n", r.What, strings.Join(notes, "; "))
		}
	}
}

// cell escapes a table cell's pipes.
func cell(s string) string { return strings.ReplaceAll(s, "|", `\|`) }

// span formats min–median–max.
func span(v []float64, unit string) string {
	if len(v) == 0 {
		return ""
	}
	lo, med, hi := slices.Min(v), median(v), slices.Max(v)
	f := func(x float64) string {
		if math.IsInf(x, 1) {
			return "did not finish"
		}
		switch {
		case unit == "ms" && med >= 1000:
			return fmt.Sprintf("%.2f", x/1000)
		case x >= 100:
			return fmt.Sprintf("%.0f", x)
		case x >= 10:
			return fmt.Sprintf("%.1f", x)
		default:
			return fmt.Sprintf("%.2f", x)
		}
	}
	u := unit
	if unit == "ms" && med >= 1000 {
		u = "s"
	}
	if len(v) == 1 || lo == hi {
		return f(med) + " " + u
	}
	return fmt.Sprintf("%s–%s–%s %s", f(lo), f(med), f(hi), u)
}

func (b *bench) writeJSON(path string) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	type jrow struct {
		*row
		Pifs []any `json:"pifs"`
	}
	rows := make([]jrow, len(b.rows))
	for i, r := range b.rows {
		rows[i] = jrow{row: r, Pifs: jsonNums(r.Pifs)}
	}
	data, err := json.MarshalIndent(map[string]any{
		"setting": b.s.Name, "seed": b.seed, "runs": b.runs, "date": time.Now().UTC().Format(time.RFC3339),
		"stores": b.info, "rows": rows,
		"notes": "pifs, raw and pi in ms unless unit says otherwise, one sample per run; pi's time is measured inside node; the page cache is dropped for neither side; a sample of null did not finish",
	}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, append(data, '\n'), 0o644)
}

// jsonNums spells a sample that did not finish as null.
func jsonNums(v []float64) []any {
	out := make([]any, len(v))
	for i, x := range v {
		if !math.IsInf(x, 0) && !math.IsNaN(x) {
			out[i] = x
		}
	}
	return out
}
