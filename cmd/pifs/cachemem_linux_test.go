package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/pifs/pifs/internal/gen"
)

// mappedRss is how many bytes of the files in dir the process pid holds
// mapped in memory, from /proc/PID/smaps.
func mappedRss(t *testing.T, pid int, dir string) int64 {
	t.Helper()
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", pid))
	if err != nil {
		t.Fatal(err)
	}
	var rss int64
	in := false
	for _, line := range strings.Split(string(data), "\n") {
		fields := strings.Fields(line)
		if len(fields) == 0 {
			continue
		}
		if !strings.HasSuffix(fields[0], ":") {
			in = len(fields) >= 6 && strings.HasPrefix(fields[5], dir+"/")
			continue
		}
		if in && fields[0] == "Rss:" {
			var kb int64
			fmt.Sscan(fields[1], &kb)
			rss += kb << 10
		}
	}
	return rss
}

// TestCacheFileNotHeld: `find -maxdepth 3` over 6,000 sessions at a
// 16 MiB budget, with the persistent cache on, twice (the second mount
// reads every folder's records from the file the first left): the cache
// file's pages pifs holds mapped in memory stay within an eighth of the
// cache's share of the budget and a few pages, though the file is several
// times that, and the process stays within the documented bound.
func TestCacheFileNotHeld(t *testing.T) {
	bin := buildPifs(t)
	store := filepath.Join(t.TempDir(), "store")
	if _, err := gen.Store(store, gen.StoreSpec{Sessions: 6000, Projects: 10, Seed: 1, MinEntries: 6, AvgBytes: 300}); err != nil {
		t.Fatal(err)
	}
	cacheDir := t.TempDir()
	const budget, fixed, perName = 16 << 20, 64 << 20, 200
	// An eighth of the cache's eighth of the budget, and what one
	// commit reads past it.
	const limit = budget/8/8 + 192<<10
	for round := range 2 {
		mnt := emptyDir(t)
		pidFile := filepath.Join(t.TempDir(), "pid")
		if out, code := pifsStatus(t, bin, nil, "--daemon", "--cache-size", "16MiB", "--cache-dir", cacheDir, "--pid-file", pidFile, "--log-file", filepath.Join(t.TempDir(), "log"), "--sessions-dir", store, mnt); code != 0 {
			t.Fatalf("pifs --daemon: %d %s", code, out)
		}
		pid := readPid(t, pidFile)
		out, err := exec.Command("sh", "-c", "find "+mnt+" -maxdepth 3 | wc -l").Output()
		if err != nil {
			t.Fatal(err)
		}
		time.Sleep(1500 * time.Millisecond) // the cache's writes, batched a second
		files, _ := filepath.Glob(filepath.Join(cacheDir, "*.db"))
		var size int64
		for _, f := range files {
			if fi, err := os.Stat(f); err == nil {
				size += fi.Size()
			}
		}
		rss := mappedRss(t, pid, cacheDir)
		peak := vm(t, pid, "VmHWM")
		syscall.Kill(pid, syscall.SIGTERM)
		waitGone(t, pid)
		t.Logf("round %d: %s names; cache file %d KiB, %d KiB of it mapped in memory; peak %d MiB", round, strings.TrimSpace(string(out)), size>>10, rss>>10, peak>>20)
		if size < 4*limit {
			t.Fatalf("round %d: a cache file of %d KiB: too small to tell", round, size>>10)
		}
		if rss > limit {
			t.Errorf("round %d: %d KiB of the %d KiB cache file mapped in memory, want at most %d KiB", round, rss>>10, size>>10, limit>>10)
		}
		if bound := int64(budget + fixed + 600*perName); peak > bound {
			t.Errorf("round %d: peak %d MiB, want at most %d MiB", round, peak>>20, bound>>20)
		}
	}
}
