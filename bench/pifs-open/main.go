// Command pifs-open times what pifs does to show a session: parse the file,
// build the tree and the context at the leaf; then append one entry and do
// it again incrementally. It prints one JSON line, like bench/pi-open.mjs.
package main

import (
	"encoding/json"
	"fmt"
	"log"
	"os"
	"runtime"
	"syscall"
	"time"

	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

func main() {
	if len(os.Args) != 2 {
		log.Fatal("usage: pifs-open SESSION.jsonl (the file gets one entry appended)")
	}
	path := os.Args[1]
	// The floor: reading the raw bytes, with no parsing at all.
	start := time.Now()
	raw, err := os.ReadFile(path)
	if err != nil {
		log.Fatal(err)
	}
	rawRead := time.Since(start)
	rawLen := len(raw)
	raw = nil
	runtime.GC()
	start = time.Now()
	l, err := sessions.Open(path)
	if err != nil {
		log.Fatal(err)
	}
	tr := tree.New(l)
	ctx := tr.Context().JSON()
	first := time.Since(start)

	b := tr.NewBuilder()
	b.UserText("one more", float64(time.Now().UnixMilli()))
	if err := sessions.Append(path, b.Lines...); err != nil {
		log.Fatal(err)
	}
	start = time.Now()
	reset, err := l.Refresh()
	if err != nil {
		log.Fatal(err)
	}
	if reset {
		tr = tree.New(l)
	} else {
		tr.Add(l.Entries[tr.Len():]...)
	}
	ctx2 := tr.Context().JSON()
	again := time.Since(start)

	var ru syscall.Rusage
	_ = syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	var ms runtime.MemStats
	runtime.ReadMemStats(&ms)
	out, _ := json.Marshal(map[string]any{
		"tool": "pifs", "entries": len(l.Entries), "bytes": l.Size(),
		"firstMs": ms3(first), "rereadMs": ms3(again), "rawReadMs": ms3(rawRead), "rawBytes": rawLen,
		"contextBytes": len(ctx), "contextBytesAfter": len(ctx2),
		"maxRssMB": float64(ru.Maxrss) / 1024,
	})
	fmt.Println(string(out))
}

func ms3(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
