// Command poll measures polling (bench/poll.sh): pifs mounted with
// --poll and -o noevents over a store, walked once; then the pifs
// process's CPU while idle, and how long an append to a session nobody
// wrote for hours (a quiet one) takes to show through the mount.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"
)

func main() {
	pifs := flag.String("pifs", "", "the pifs binary")
	store := flag.String("store", "", "the sessions directory (it is appended to)")
	mnt := flag.String("mnt", "", "the mountpoint")
	interval := flag.Duration("interval", 500*time.Millisecond, "--poll")
	idle := flag.Duration("idle", 30*time.Second, "how long idle CPU is measured")
	changes := flag.Int("changes", 20, "appends to quiet sessions timed")
	out := flag.String("out", "", "write the result as JSON here")
	seed := flag.Uint64("seed", uint64(time.Now().UnixNano()), "which sessions are appended to")
	flag.Parse()
	if *pifs == "" || *store == "" || *mnt == "" {
		log.Fatal("-pifs, -store and -mnt are required")
	}
	cmd := exec.Command(*pifs, "--sessions-dir", *store, "--cache-dir", "none", "--poll", interval.String(), "-o", "noevents", *mnt)
	logf, err := os.Create(filepath.Join(filepath.Dir(*mnt), "poll-pifs.log"))
	if err != nil {
		log.Fatal(err)
	}
	cmd.Stderr = logf
	if err := cmd.Start(); err != nil {
		log.Fatal(err)
	}
	defer func() {
		exec.Command("fusermount3", "-u", *mnt).Run()
		cmd.Wait()
	}()
	for i := 0; ; i++ {
		if mounted(*mnt) {
			break
		}
		if i > 200 {
			log.Fatal("pifs did not mount")
		}
		time.Sleep(50 * time.Millisecond)
	}
	pid := cmd.Process.Pid
	// A walk: every project read, every session known.
	walk := exec.Command("sh", "-c", "ls -l by-id >/dev/null && find . -maxdepth 3 >/dev/null")
	walk.Dir = *mnt
	if err := walk.Run(); err != nil {
		log.Fatalf("walk: %v", err)
	}
	time.Sleep(5 * time.Second)
	c0, t0 := cpu(pid), time.Now()
	time.Sleep(*idle)
	idlePct := (cpu(pid) - c0).Seconds() / time.Since(t0).Seconds() * 100
	log.Printf("idle: %.2f%% of a core over %v", idlePct, *idle)

	// Quiet sessions: not written in the last hour.
	var quiet []string
	projects, _ := os.ReadDir(*store)
	for _, p := range projects {
		files, _ := os.ReadDir(filepath.Join(*store, p.Name()))
		for _, f := range files {
			if fi, err := f.Info(); err == nil && strings.HasSuffix(f.Name(), ".jsonl") && time.Since(fi.ModTime()) > time.Hour {
				quiet = append(quiet, filepath.Join(p.Name(), f.Name()))
			}
		}
	}
	r := rand.New(rand.NewPCG(*seed, 1))
	r.Shuffle(len(quiet), func(i, j int) { quiet[i], quiet[j] = quiet[j], quiet[i] })
	var delays []float64
	for _, rel := range quiet[:min(*changes, len(quiet))] {
		// Start at a random point of the poll's cycle.
		time.Sleep(time.Duration(r.Int64N(int64(*interval))))
		view := filepath.Join(*mnt, strings.TrimSuffix(rel, ".jsonl"), "session.jsonl")
		before, err := os.Stat(view)
		if err != nil {
			log.Fatal(err)
		}
		line := fmt.Sprintf(`{"type":"custom","customType":"bench","data":{},"id":"%08x","parentId":null,"timestamp":"%s"}`+"\n",
			r.Uint32(), time.Now().UTC().Format("2006-01-02T15:04:05.000Z"))
		f, err := os.OpenFile(filepath.Join(*store, rel), os.O_WRONLY|os.O_APPEND, 0)
		if err != nil {
			log.Fatal(err)
		}
		start := time.Now()
		if _, err := f.WriteString(line); err != nil {
			log.Fatal(err)
		}
		f.Close()
		want := before.Size() + int64(len(line))
		for {
			if fi, err := os.Stat(view); err == nil && fi.Size() == want {
				break
			}
			if time.Since(start) > 2*time.Minute {
				log.Fatalf("%s: the append did not show in 2 minutes", rel)
			}
			time.Sleep(2 * time.Millisecond)
		}
		d := float64(time.Since(start).Microseconds()) / 1000
		delays = append(delays, d)
		log.Printf("%s: shown after %.0f ms", rel, d)
	}
	slices.Sort(delays)
	res := map[string]any{
		"interval":       interval.String(),
		"sessions":       countSessions(*store),
		"idleSeconds":    idle.Seconds(),
		"idleCpuPercent": round(idlePct),
		"delaysMs":       delays,
		"delayMedianMs":  delays[len(delays)/2],
		"delayMaxMs":     delays[len(delays)-1],
		"loadavg":        loadavg(),
		"cpus":           numCPU(),
	}
	fmt.Printf("idle CPU %.2f%% of a core; an append to a quiet session shown after %.0f ms median, %.0f ms max (%d appends; poll every %v, %.1f× the interval at most)\n",
		idlePct, delays[len(delays)/2], delays[len(delays)-1], len(delays), *interval, delays[len(delays)-1]/float64(interval.Milliseconds()))
	if *out != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*out, append(b, '\n'), 0o644); err != nil {
			log.Fatal(err)
		}
	}
}

func round(v float64) float64 { return float64(int(v*100+0.5)) / 100 }

func mounted(mnt string) bool {
	b, _ := os.ReadFile("/proc/mounts")
	return strings.Contains(string(b), " "+mnt+" fuse.pifs ")
}

// cpu is a process's user and system time.
func cpu(pid int) time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return 0
	}
	s := string(b)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+2:])
	u, _ := strconv.ParseInt(f[11], 10, 64)
	k, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(u+k) * time.Second / 100 // USER_HZ
}

func countSessions(store string) int {
	n := 0
	filepath.WalkDir(store, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".jsonl") {
			n++
		}
		return nil
	})
	return n
}

func loadavg() string {
	b, _ := os.ReadFile("/proc/loadavg")
	return strings.TrimSpace(string(b))
}

func numCPU() int {
	f, err := os.Open("/proc/cpuinfo")
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	s := bufio.NewScanner(f)
	for s.Scan() {
		if strings.HasPrefix(s.Text(), "processor") {
			n++
		}
	}
	return n
}
