// Command sizes times what stat of a session folder's computed views costs
// over the first N sessions of a store (in path order): parse, then the
// sizes of context.json, transcript.md, transcript.html, info.json and the
// six /tree views (tree*.txt and prompts.txt, together), either by
// rendering each view and taking its length (-mode render, what pifs did)
// or by counting it (-mode count). -mode cat renders the views as
// cat does now (context.json by render.ContextJSON); -mode check compares
// sizes and renderings for every session. It only reads the store. Run each mode in its own
// process, so that one's garbage does not cost the other:
//
//	go run ./bench/sizes -mode render -n 300 DIR
//	go run ./bench/sizes -mode count -n 300 DIR
package main

import (
	"flag"
	"fmt"
	"io/fs"
	"log"
	"os"
	"path/filepath"
	"runtime"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/render"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// home is the home directory the /tree views write as "~".
const home = "/home/user"

// step is one measured part of the work, summed over the sessions.
type step struct {
	name  string
	wall  time.Duration
	cpu   time.Duration // the process's, on every core
	alloc uint64        // bytes allocated
	bytes int64         // the sizes found
}

func main() {
	mode := flag.String("mode", "count", "render, count, cat or check")
	n := flag.Int("n", 300, "sessions")
	cpuprofile := flag.String("cpuprofile", "", "write a CPU profile of the measured work to this file")
	flag.Parse()
	if flag.NArg() != 1 {
		log.Fatal("usage: sizes [-mode render|count|cat|check] [-n N] STORE")
	}
	var files []string
	filepath.WalkDir(flag.Arg(0), func(p string, d fs.DirEntry, err error) error {
		if err == nil && !d.IsDir() && strings.HasSuffix(p, ".jsonl") && len(files) < *n {
			files = append(files, p)
		}
		return nil
	})

	steps := []*step{{name: "parse"}, {name: "context.json"}, {name: "transcript.md"}, {name: "transcript.html"}, {name: "info.json"}, {name: "tree views (6)"}}
	var ms runtime.MemStats
	cpuNow := func() time.Duration {
		var ru syscall.Rusage
		syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
		return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
	}
	measure := func(s *step, fn func() int64) {
		runtime.ReadMemStats(&ms)
		a := ms.TotalAlloc
		start, cpu := time.Now(), cpuNow()
		s.bytes += fn()
		s.wall += time.Since(start)
		s.cpu += cpuNow() - cpu
		runtime.ReadMemStats(&ms)
		s.alloc += ms.TotalAlloc - a
	}

	runtime.GC()
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	runtime.ReadMemStats(&ms)
	gc0, pause0 := ms.NumGC, ms.PauseTotalNs
	if *cpuprofile != "" {
		f, err := os.Create(*cpuprofile)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	for _, p := range files {
		var t *tree.Tree
		var mtime time.Time
		measure(steps[0], func() int64 {
			l, err := sessions.Open(p)
			if err != nil {
				log.Fatal(err)
			}
			t = tree.New(l)
			fi, _ := os.Stat(p)
			mtime = fi.ModTime()
			return l.Size()
		})
		path := t.LeafPath()
		type view struct {
			render func() int
			count  func() int64
		}
		views := []view{
			{func() int { return len(render.Indent(nil, t.Context().JSON())) }, func() int64 { return render.ContextSize(t.Context()) }},
			{func() int { return len(render.Transcript(path)) }, func() int64 { return render.TranscriptSize(path) }},
			{func() int { return len(render.SessionHTML(t)) }, func() int64 { return render.SessionHTMLSize(t, home) }},
			{func() int { return len(render.Info(p, t, mtime)) }, func() int64 { return int64(len(render.Info(p, t, mtime))) }},
			{func() int {
				n := len(render.Prompts(t))
				for _, f := range tree.Filters {
					n += len(render.TreeText(t, t.FileLeafID(), f, home))
				}
				return n
			}, func() int64 {
				n := render.PromptsSize(t)
				for _, k := range render.TreeTextSizes(t, t.FileLeafID(), home) {
					n += k
				}
				return n
			}},
		}
		for i, v := range views {
			switch *mode {
			case "render":
				measure(steps[i+1], func() int64 { return int64(v.render()) })
			case "count":
				measure(steps[i+1], v.count)
			case "cat":
				if i == 0 {
					measure(steps[1], func() int64 { return int64(len(render.ContextJSON(t.Context()))) })
				} else {
					measure(steps[i+1], func() int64 { return int64(v.render()) })
				}
			case "check":
				if r, c := v.render(), v.count(); int64(r) != c {
					log.Fatalf("%s: %s: rendered %d bytes, counted %d", p, steps[i+1].name, r, c)
				}
				if i == 0 && string(render.ContextJSON(t.Context())) != string(render.Indent(nil, t.Context().JSON())) {
					log.Fatalf("%s: ContextJSON differs", p)
				}
			default:
				log.Fatalf("unknown mode %q", *mode)
			}
		}
	}
	wall := time.Since(start)
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	runtime.ReadMemStats(&ms)
	cpu := time.Duration(ru.Utime.Nano()+ru.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano()) * time.Nanosecond

	fmt.Printf("%d sessions, %.0f MB, mode %s\n", len(files), float64(steps[0].bytes)/1e6, *mode)
	if *mode == "check" {
		fmt.Println("every size is its rendering's length; ContextJSON is Indent(JSON())")
		return
	}
	fmt.Printf("%-16s %9s %9s %12s %12s\n", "step", "wall", "cpu", "allocated", "view bytes")
	for _, s := range steps {
		fmt.Printf("%-16s %8.3fs %8.3fs %10.1f MB %10.1f MB\n", s.name, s.wall.Seconds(), s.cpu.Seconds(), float64(s.alloc)/1e6, float64(s.bytes)/1e6)
	}
	fmt.Printf("total wall %.3fs, cpu %.3fs (the collector's share on other cores included), %d GCs, pauses %.1f ms\n",
		wall.Seconds(), cpu.Seconds(), ms.NumGC-gc0, float64(ms.PauseTotalNs-pause0)/1e6)
}
