// Command events measures MOUNT/events against `tail -f` of the raw
// session files: the latency from a write (one O_APPEND write of one line,
// as pi's appendFileSync makes it) to the line in the reader (median, p99,
// max), whether every line reached every reader once and in order, and
// the CPU of pifs and of tail while idle with readers open.
//
// With -shared (pifs mounted with --allow-other) every other session is
// 0600 and a third reader reads events as user 65534: it must get the
// lines of the others only, as fast.
//
// bench/events.sh builds pifs, mounts a fresh store and runs it.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"
)

type reader struct {
	name string
	// only, when set, is the sessions whose lines the reader may get.
	only map[string]bool
	mu   sync.Mutex
	at   map[string]time.Time // line id → when read
	seen map[string][]string  // session → ids, in the order read
	dup  int
}

func newReader(name string) *reader {
	return &reader{name: name, at: map[string]time.Time{}, seen: map[string][]string{}}
}

// take reads JSON lines and notes each entry's arrival.
func (r *reader) take(sc *bufio.Scanner) {
	for sc.Scan() {
		now := time.Now()
		var l struct{ ID, Session, Path string }
		if json.Unmarshal(sc.Bytes(), &l) != nil || !strings.HasPrefix(l.ID, "b") {
			continue
		}
		r.mu.Lock()
		if _, ok := r.at[l.ID]; ok {
			r.dup++
		} else {
			r.at[l.ID] = now
		}
		s := strings.SplitN(l.ID, "-", 2)[0]
		r.seen[s] = append(r.seen[s], l.ID)
		r.mu.Unlock()
	}
}

func cpuTicks(pid int) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	u, _ := strconv.ParseInt(f[11], 10, 64)
	s, _ := strconv.ParseInt(f[12], 10, 64)
	return u + s
}

func main() {
	mnt := flag.String("mnt", "", "the pifs mount")
	store := flag.String("store", "", "its store")
	pid := flag.Int("pid", 0, "the pifs process")
	n := flag.Int("n", 1000, "lines to write")
	rate := flag.Int("rate", 100, "lines per second")
	sessions := flag.Int("sessions", 20, "sessions written")
	idle := flag.Duration("idle", 10*time.Second, "idle time measured")
	out := flag.String("out", "", "JSON results")
	command := flag.String("cmd", "", "the command to record (default this one)")
	shared := flag.Bool("shared", false, "odd sessions 0600, and a reader as user 65534 (pifs with --allow-other)")
	flag.Parse()

	proj := filepath.Join(*store, "--bench--")
	os.MkdirAll(proj, 0o755)
	var files []string
	for s := 0; s < *sessions; s++ {
		f := filepath.Join(proj, fmt.Sprintf("2026-01-01T00-00-%02d-000Z_%08d-0000-4000-8000-000000000000.jsonl", s, s))
		mode := os.FileMode(0o644)
		if *shared && s%2 == 1 {
			mode = 0o600
		}
		os.WriteFile(f, []byte(fmt.Sprintf(`{"type":"session","version":3,"id":"%08d-0000-4000-8000-000000000000","cwd":"/bench"}`+"\n", s)), mode)
		os.Chmod(f, mode)
		files = append(files, f)
	}
	time.Sleep(time.Second) // the watcher takes the new files in

	readers := []*reader{newReader("events (read by a program)"), newReader("events, a second reader")}
	var procs []*exec.Cmd
	for _, r := range readers {
		f, err := os.Open(filepath.Join(*mnt, "events"))
		if err != nil {
			panic(err)
		}
		go r.take(bufio.NewScanner(f))
	}
	if *shared {
		other := newReader("events as another user (uid 65534), the 0600 half hidden")
		other.only = map[string]bool{}
		for s := 0; s < *sessions; s += 2 {
			other.only[fmt.Sprintf("b%02d", s)] = true
		}
		cmd := exec.Command("setpriv", "--reuid=65534", "--regid=65534", "--clear-groups", "cat", filepath.Join(*mnt, "events"))
		op, _ := cmd.StdoutPipe()
		if err := cmd.Start(); err != nil {
			panic(err)
		}
		procs = append(procs, cmd)
		readers = append(readers, other)
		go other.take(bufio.NewScanner(op))
	}
	tailR := newReader("tail -f of the raw files")
	tail := exec.Command("tail", append([]string{"-q", "-n0", "-f"}, files...)...)
	tp, _ := tail.StdoutPipe()
	tail.Start()
	procs = append(procs, tail)
	go tailR.take(bufio.NewScanner(tp))
	time.Sleep(time.Second)

	// The writer: n lines at rate, round-robin over the sessions.
	wrote := map[string]time.Time{}
	tick := time.Second / time.Duration(*rate)
	start := time.Now()
	prev := make([]string, *sessions)
	for i := 0; i < *n; i++ {
		s := i % *sessions
		id := fmt.Sprintf("b%02d-%05d", s, i)
		parent := "null"
		if prev[s] != "" {
			parent = `"` + prev[s] + `"`
		}
		line := fmt.Sprintf(`{"type":"message","id":"%s","parentId":%s,"timestamp":"2026-01-01T00:00:01.000Z","message":{"role":"user","content":"line %d"}}`+"\n", id, parent, i)
		prev[s] = id
		time.Sleep(time.Until(start.Add(time.Duration(i) * tick)))
		f, _ := os.OpenFile(files[s], os.O_WRONLY|os.O_APPEND, 0)
		wrote[id] = time.Now()
		f.WriteString(line)
		f.Close()
	}
	time.Sleep(3 * time.Second)

	type fig struct {
		Reader                        string
		Lines, Lost, Doubled, Unorder int
		// Leaked is lines of sessions the reader may not see.
		Leaked                 int `json:",omitempty"`
		MedianMs, P99Ms, MaxMs float64
	}
	var figs []fig
	for _, r := range append(readers, tailR) {
		r.mu.Lock()
		var lat []float64
		want, leaked := 0, 0
		for id, w := range wrote {
			if r.only != nil && !r.only[strings.SplitN(id, "-", 2)[0]] {
				if _, ok := r.at[id]; ok {
					leaked++
				}
				continue
			}
			want++
			if a, ok := r.at[id]; ok {
				lat = append(lat, float64(a.Sub(w).Microseconds())/1000)
			}
		}
		slices.Sort(lat)
		unorder := 0
		for _, ids := range r.seen {
			if !slices.IsSorted(ids) {
				unorder++
			}
		}
		f := fig{Reader: r.name, Lines: len(r.at), Lost: want - len(lat), Doubled: r.dup, Unorder: unorder, Leaked: leaked}
		if len(lat) > 0 {
			f.MedianMs, f.P99Ms, f.MaxMs = lat[len(lat)/2], lat[len(lat)*99/100], lat[len(lat)-1]
		}
		r.mu.Unlock()
		figs = append(figs, f)
	}

	// Idle: nothing written, the readers still open.
	if *command == "" {
		*command = strings.Join(os.Args, " ")
	}
	load, _ := os.ReadFile("/proc/loadavg") // the machine is shared
	p0, t0 := cpuTicks(*pid), cpuTicks(tail.Process.Pid)
	time.Sleep(*idle)
	p1, t1 := cpuTicks(*pid), cpuTicks(tail.Process.Pid)
	pct := func(ticks int64) float64 { return float64(ticks) / 100 / idle.Seconds() * 100 }
	res := map[string]any{
		"command":        *command,
		"loadavg":        strings.TrimSpace(string(load)),
		"date":           time.Now().UTC().Format(time.RFC3339),
		"lines":          *n,
		"rate":           *rate,
		"sessions":       *sessions,
		"shared":         *shared,
		"latency":        figs,
		"idleSeconds":    idle.Seconds(),
		"idleCpuPifs":    pct(p1 - p0),
		"idleCpuTailRaw": pct(t1 - t0),
	}
	for _, p := range procs {
		p.Process.Kill()
		p.Wait()
	}
	b, _ := json.MarshalIndent(res, "", "  ")
	fmt.Println(string(b))
	if *out != "" {
		os.WriteFile(*out, append(b, '\n'), 0o644)
	}
}
