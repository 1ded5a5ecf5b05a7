package main

import (
	"math"
	"strings"
	"testing"
)

func TestParseSize(t *testing.T) {
	for in, want := range map[string]int64{
		"256MiB": 256 << 20, "1GiB": 1 << 30, "500M": 500 << 20, "4096": 4096, "1.5G": 3 << 29,
		"10kb": 10000, "2 MB": 2e6, "0": 0, "64k": 64 << 10, "1TiB": 1 << 40, "7B": 7,
		"9223372036854775807": math.MaxInt64,
	} {
		got, err := parseSize(in)
		if err != nil || got != want {
			t.Errorf("parseSize(%q) = %d, %v; want %d", in, got, err, want)
		}
	}
	for _, in := range []string{"", "MiB", "12XB", "-1", "1..2M", "9223372036854775808", "9000000TiB", "1e3", "1.5.5G"} {
		if got, err := parseSize(in); err == nil {
			t.Errorf("parseSize(%q) = %d, want an error", in, got)
		}
	}
}

// FuzzParseSize: any input parses to a size that is not negative or is
// refused, and what formatSize writes reads back the same.
func FuzzParseSize(f *testing.F) {
	for _, s := range []string{"256MiB", "1GiB", "500M", "4096", "1.5G", "10kb", "9223372036854775807", "0.0001K"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		n, err := parseSize(s)
		if err != nil {
			if !strings.Contains(err.Error(), "size") {
				t.Errorf("error without context: %v", err)
			}
			return
		}
		if n < 0 {
			t.Fatalf("parseSize(%q) = %d", s, n)
		}
		back, err := parseSize(formatSize(n))
		if err != nil || back != n {
			t.Fatalf("formatSize(%d) = %q reads back as %d, %v", n, formatSize(n), back, err)
		}
	})
}
