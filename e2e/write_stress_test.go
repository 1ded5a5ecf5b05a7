package e2e

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// checkWholeEntries checks that a session file holds only whole lines, each
// a JSON object, and returns the texts of its user messages.
func checkWholeEntries(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	if len(data) == 0 || data[len(data)-1] != '\n' {
		t.Fatalf("the file does not end in a newline: %q", tail([]byte(data), 80))
	}
	var texts []string
	for i, line := range bytes.Split(data[:len(data)-1], []byte{'\n'}) {
		var e struct {
			Type    string
			Message struct {
				Role    string
				Content json.RawMessage
			}
		}
		if err := json.Unmarshal(line, &e); err != nil || e.Type == "" {
			t.Fatalf("line %d is not a whole entry (%v): %.200q", i+1, err, line)
		}
		if e.Type == "message" && e.Message.Role == "user" {
			var s string
			if json.Unmarshal(e.Message.Content, &s) != nil {
				var blocks []struct{ Text string }
				json.Unmarshal(e.Message.Content, &blocks)
				if len(blocks) > 0 {
					s = blocks[0].Text
				}
			}
			texts = append(texts, s)
		}
	}
	return texts
}

// TestWriteConcurrent: three pi processes append through pi's own
// SessionManager while three shell loops append through the mount, to the
// same session. No line is lost, none is torn.
func TestWriteConcurrent(t *testing.T) {
	store, file := writeStore(t)
	dir := oracle.Dir(t)
	mnt := testMount(t, store)
	s := sessionPath(mnt)
	script, err := filepath.Abs(filepath.Join("testdata", "pi_append.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	const writers, n = 3, 50

	var wg sync.WaitGroup
	errs := make(chan string, 2*writers)
	for k := 0; k < writers; k++ {
		node := exec.Command("node", script, file, strconv.Itoa(k), strconv.Itoa(n), goFile)
		node.Env = append(os.Environ(), "PIFS_ORACLE_DIR="+dir)
		var stderr bytes.Buffer
		node.Stderr = &stderr
		out, _ := node.StdoutPipe()
		if err := node.Start(); err != nil {
			t.Fatal(err)
		}
		if line, err := bufio.NewReader(out).ReadString('\n'); line != "ready\n" {
			node.Wait()
			t.Fatalf("node: %q %v\n%s", line, err, stderr.String())
		}
		wg.Add(1)
		go func() {
			defer wg.Done()
			if err := node.Wait(); err != nil {
				errs <- fmt.Sprintf("node: %v\n%s", err, stderr.String())
			}
		}()
		shell := command(s, "sh", "-c", `
			while [ ! -e "$1" ]; do sleep 0.01; done
			i=0
			while [ $i -lt $2 ]; do echo "shell $0 $i" >> append || exit 1; i=$((i+1)); done`,
			strconv.Itoa(k), goFile, strconv.Itoa(n))
		wg.Add(1)
		go func() {
			defer wg.Done()
			if out, err := shell.CombinedOutput(); err != nil {
				errs <- fmt.Sprintf("shell: %v\n%s", err, out)
			}
		}()
	}
	os.WriteFile(goFile, nil, 0o644)
	wg.Wait()
	close(errs)
	for e := range errs {
		t.Error(e)
	}

	texts := checkWholeEntries(t, file)
	seen := map[string]int{}
	switches := 0
	for i, txt := range texts {
		seen[txt]++
		if i > 0 && txt[:4] != texts[i-1][:4] {
			switches++
		}
	}
	t.Logf("the file switches %d times between pi's and the mount's lines", switches)
	for k := 0; k < writers; k++ {
		for i := 0; i < n; i++ {
			for _, who := range []string{"node", "shell"} {
				if txt := fmt.Sprintf("%s %d %d", who, k, i); seen[txt] != 1 {
					t.Errorf("%q appears %d times", txt, seen[txt])
				}
			}
		}
	}
	if entries, _ := piOpen(t, file); entries != len(fixLines)-1+2*writers*n {
		t.Errorf("pi reads %d entries, want %d", entries, len(fixLines)-1+2*writers*n)
	}
}

// TestWriteKilled kills pifs (the built binary, its own process) with
// SIGKILL in the middle of a large transaction written to append: nothing
// of it reaches the file, which pi still opens.
func TestWriteKilled(t *testing.T) {
	if _, err := os.Stat("/dev/fuse"); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") == "1" {
			t.Fatal(err)
		}
		t.Skip(err)
	}
	tmp := t.TempDir()
	bin := filepath.Join(tmp, "pifs")
	if out, err := exec.Command("go", "build", "-o", bin, "github.com/pifs/pifs/cmd/pifs").CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	store, file := writeStore(t)
	mnt := filepath.Join(tmp, "mnt")
	os.Mkdir(mnt, 0o755)
	pidFile := filepath.Join(tmp, "pid")
	if out, err := exec.Command(bin, "--daemon", "--sessions-dir", store, "--pid-file", pidFile, mnt).CombinedOutput(); err != nil {
		if os.Getenv("PIFS_REQUIRE_FUSE") != "1" {
			t.Skipf("pifs --daemon: %v\n%s", err, out)
		}
		t.Fatalf("pifs --daemon: %v\n%s", err, out)
	}
	data, _ := os.ReadFile(pidFile)
	pid, err := strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil {
		t.Fatalf("pid file: %q", data)
	}
	unmount := func() {
		syscall.Kill(pid, syscall.SIGKILL)
		exec.Command("fusermount3", "-u", "-z", mnt).Run()
	}
	t.Cleanup(unmount)

	// 20 MB of messages, written by this process (pifs is another one)
	// in writes of 128 KiB; pifs is killed after 2 MB.
	const count = 40000
	var big bytes.Buffer
	pad := strings.Repeat("y", 480)
	for i := 0; i < count; i++ {
		fmt.Fprintf(&big, "{\"role\":\"user\",\"content\":\"kill %d %s\"}\n", i, pad)
	}
	before := readText(t, file)
	f, err := os.OpenFile(filepath.Join(sessionPath(mnt), "append"), os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		t.Fatal(err)
	}
	written, killed := 0, false
	var werr error
	for off := 0; off < big.Len() && werr == nil; off += 128 << 10 {
		if !killed && written > 2<<20 {
			if err := syscall.Kill(pid, syscall.SIGKILL); err != nil {
				t.Fatal(err)
			}
			killed = true
		}
		var n int
		n, werr = f.Write(big.Bytes()[off:min(off+128<<10, big.Len())])
		written += n
	}
	cerr := f.Close()
	if werr == nil && cerr == nil {
		t.Fatalf("the transaction went through although pifs was killed")
	}
	unmount()
	if mounts, _ := os.ReadFile("/proc/self/mounts"); bytes.Contains(mounts, []byte(" "+mnt+" ")) {
		t.Error("the mount is still there after fusermount3 -u -z")
	}
	if readText(t, file) != before {
		t.Fatal("the file changed: part of a transaction that never committed reached it")
	}
	checkWholeEntries(t, file)
	if entries, _ := piOpen(t, file); entries != len(fixLines)-1 {
		t.Errorf("pi reads %d entries, want %d", entries, len(fixLines)-1)
	}
	t.Logf("killed after %d bytes written; write: %v; close: %v", written, werr, cerr)
}
