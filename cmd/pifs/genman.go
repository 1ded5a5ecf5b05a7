//go:build ignore

// genman writes pifs.1 from docs/reference.md; go generate runs it.
package main

import (
	"fmt"
	"os"

	"github.com/pifs/pifs/internal/mangen"
)

func main() {
	md, err := os.ReadFile("../../docs/reference.md")
	if err == nil {
		var page []byte
		if page, err = mangen.Reference(md); err == nil {
			err = os.WriteFile("../../pifs.1", page, 0o644)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "genman:", err)
		os.Exit(1)
	}
}
