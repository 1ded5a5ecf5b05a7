package sessions

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestResolveOrder(t *testing.T) {
	env := map[string]string{"HOME": "/home/u"}
	getenv := func(k string) string { return env[k] }
	check := func(flag, want string) {
		t.Helper()
		if loc, err := ResolveLocation(flag, getenv); err != nil || loc.Dir != want {
			t.Errorf("ResolveLocation(%q) with %v = %q, %v; want %q", flag, env, loc.Dir, err, want)
		}
	}
	check("", "/home/u/.pi/agent/sessions")
	env["PI_CODING_AGENT_DIR"] = "/agent"
	check("", "/agent/sessions")
	env["PI_CODING_AGENT_SESSION_DIR"] = "/sess"
	check("", "/sess")
	check("/flag", "/flag")
}

// rchar is the number of bytes this process has read through syscalls.
func rchar(t *testing.T) int64 {
	f, err := os.Open("/proc/self/io")
	if err != nil {
		t.Skip("no /proc/self/io")
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if v, ok := strings.CutPrefix(sc.Text(), "rchar: "); ok {
			n, _ := strconv.ParseInt(v, 10, 64)
			return n
		}
	}
	t.Skip("no rchar")
	return 0
}

// TestListingReadsHeadersOnly lists a project of 5,000 sessions whose
// bodies are 1 MiB each (sparse) and checks, by the kernel's count of bytes
// read, that no body was read.
func TestListingReadsHeadersOnly(t *testing.T) {
	store := NewIndex(t.TempDir())
	proj := filepath.Join(store.Dir(), "--home-u-big--")
	if err := os.Mkdir(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	const n = 5000
	for i := 0; i < n; i++ {
		p := filepath.Join(proj, fmt.Sprintf("2026-01-01T00-00-00-000Z_%05d.jsonl", i))
		h := fmt.Sprintf(`{"type":"session","version":3,"id":"s%05d","timestamp":"2026-01-01T00:00:00.000Z","cwd":"/home/u/big"}`+"\n", i)
		if err := os.WriteFile(p, []byte(h), 0o644); err != nil {
			t.Fatal(err)
		}
		if err := os.Truncate(p, 1<<20); err != nil {
			t.Fatal(err)
		}
	}
	// Not sessions: listed files must be filtered out.
	os.WriteFile(filepath.Join(proj, "notes.txt"), []byte("x"), 0o644)
	os.WriteFile(filepath.Join(proj, "bad.jsonl"), []byte(`{"type":"message"}`+"\n"), 0o644)
	before := rchar(t)
	list, err := store.Sessions("--home-u-big--")
	if err != nil {
		t.Fatal(err)
	}
	read := rchar(t) - before
	if len(list) != n {
		t.Fatalf("%d sessions listed, want %d", len(list), n)
	}
	if list[0].Header.ID != "s00000" || list[0].Sig.Size != 1<<20 {
		t.Errorf("first: %+v", list[0])
	}
	if limit := int64(n * 8192); read > limit {
		t.Errorf("listing read %d bytes, more than %d: bodies were read", read, limit)
	}
	t.Logf("listing %d sessions of 1 MiB read %d bytes (%.0f per file)", n, read, float64(read)/n)
}

func TestProjects(t *testing.T) {
	dir := t.TempDir()
	os.Mkdir(filepath.Join(dir, "b"), 0o755)
	os.Mkdir(filepath.Join(dir, "a"), 0o755)
	os.WriteFile(filepath.Join(dir, "file"), nil, 0o644)
	os.Symlink(filepath.Join(dir, "a"), filepath.Join(dir, "link"))
	os.Symlink(filepath.Join(dir, "file"), filepath.Join(dir, "filelink"))
	if got := NewIndex(dir).Projects(); strings.Join(got, ",") != "a,b,link" {
		t.Errorf("projects %v", got)
	}
}

func TestReadHeader(t *testing.T) {
	dir := t.TempDir()
	long := `{"type":"session","version":3,"id":"long","cwd":"` + strings.Repeat("x", 20000) + `"}`
	cases := map[string]string{
		"plain":    hdr + "\n",
		"nonl":     hdr,
		"skipped":  "\n  \n{broken\n" + hdr + "\n",
		"long":     long + "\n" + entryLine("a", "") + "\n",
		"crlf":     hdr + "\r\n",
		"afterbig": strings.Repeat("\n", 10000) + hdr + "\n",
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		os.WriteFile(p, []byte(c), 0o644)
		h, err := ReadHeader(p)
		if err != nil {
			t.Errorf("%s: %v", name, err)
			continue
		}
		if !bytes.Contains([]byte(c), h.Raw) || h.ID == "" {
			t.Errorf("%s: header %s", name, h.Raw)
		}
	}
}

// TestReadTail: the last activity and the leaf from the file's end.
func TestReadTail(t *testing.T) {
	dir := t.TempDir()
	tail := `{"type":"message","id":"b","parentId":"a","timestamp":"2026-01-02T00:00:00.000Z","message":{"role":"user","content":"x"}}`
	cases := map[string]struct {
		content string
		ok      bool
	}{
		"last":      {hdr + "\n" + entryLine("a", "") + "\n" + tail + "\n", true},
		"nonl":      {hdr + "\n" + tail, true},
		"long":      {hdr + "\n" + tail + "\n" + strings.Repeat(`{"broken"`, 3000) + "\n", true},
		"header":    {hdr + "\n", false},
		"notime":    {hdr + "\n" + `{"type":"custom","id":"c"}` + "\n", false},
		"malformed": {hdr + "\n{oops\n", false},
	}
	for name, c := range cases {
		p := filepath.Join(dir, name)
		writeFile(t, p, c.content)
		tail, err := ReadTail(p, CurrentVersion)
		if err != nil || tail.HasActivity != c.ok || (c.ok && tail.Activity != 1767312000000) {
			t.Errorf("%s: %+v %v", name, tail, err)
		}
		if c.ok && (!tail.LeafKnown || (name != "long" && tail.Leaf != "b")) {
			t.Errorf("%s: leaf %+v", name, tail)
		}
	}
}
