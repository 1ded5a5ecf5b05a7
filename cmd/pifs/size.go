package main

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// sizeUnits are the suffixes --cache-size accepts, as dd(1) and df(1)
// read them: K, M, G, T and KiB… are powers of 1024, KB, MB… of 1000.
var sizeUnits = map[string]float64{
	"": 1, "b": 1,
	"k": 1 << 10, "kib": 1 << 10, "kb": 1e3,
	"m": 1 << 20, "mib": 1 << 20, "mb": 1e6,
	"g": 1 << 30, "gib": 1 << 30, "gb": 1e9,
	"t": 1 << 40, "tib": 1 << 40, "tb": 1e12,
}

// parseSize reads a size in bytes: "256MiB", "1GiB", "500M", "1.5G",
// "4096". Units are case-insensitive; a space before the unit is allowed.
func parseSize(s string) (int64, error) {
	t := strings.TrimSpace(s)
	i := 0
	for i < len(t) && (t[i] >= '0' && t[i] <= '9' || t[i] == '.') {
		i++
	}
	num, unit := t[:i], strings.ToLower(strings.TrimSpace(t[i:]))
	mult, ok := sizeUnits[unit]
	if num == "" || !ok {
		return 0, fmt.Errorf("invalid size %q: want a number of bytes with an optional unit (KiB, MiB, GiB, K, M, G, KB, MB, GB), like 256MiB", s)
	}
	if !strings.Contains(num, ".") {
		n, err := strconv.ParseInt(num, 10, 64)
		if err == nil && n <= math.MaxInt64/int64(mult) {
			return n * int64(mult), nil
		}
		if err != nil && !errors.Is(err, strconv.ErrRange) {
			return 0, fmt.Errorf("invalid size %q", s)
		}
		return 0, fmt.Errorf("size %q is too large", s)
	}
	f, err := strconv.ParseFloat(num, 64)
	if err != nil {
		return 0, fmt.Errorf("invalid size %q", s)
	}
	v := math.Round(f * mult)
	if v >= math.MaxInt64 {
		return 0, fmt.Errorf("size %q is too large", s)
	}
	return int64(v), nil
}

// formatSize writes n with the largest binary unit that divides it.
func formatSize(n int64) string {
	for _, u := range []struct {
		name string
		size int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if n != 0 && n%u.size == 0 {
			return strconv.FormatInt(n/u.size, 10) + u.name
		}
	}
	return strconv.FormatInt(n, 10)
}
