// Command gen writes a large pi session for benchmarks.
package main

import (
	"flag"
	"log"
	"os"

	"github.com/pifs/pifs/internal/gen"
)

func main() {
	n := flag.Int("entries", 60000, "number of entries")
	avg := flag.Int("avg", 1650, "rough line size in bytes")
	flag.Parse()
	if err := gen.Session(os.Stdout, *n, *avg); err != nil {
		log.Fatal(err)
	}
}
