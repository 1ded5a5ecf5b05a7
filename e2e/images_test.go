package e2e

import (
	"bytes"
	"encoding/base64"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestImagesThroughMount: every image block is a file in images/, its
// size in ls -l exact, its bytes the base64 decoded (cmp); broken base64
// has no file; transcript.md's links lead to the files from the session
// folder and from a branch; the sizes of both transcripts are what cat
// reads.
func TestImagesThroughMount(t *testing.T) {
	pic := image.NewRGBA(image.Rect(0, 0, 30, 20))
	for i := range pic.Pix {
		pic.Pix[i] = uint8(i * 7)
	}
	pic.Set(0, 0, color.White)
	var p, j bytes.Buffer
	if png.Encode(&p, pic) != nil || jpeg.Encode(&j, pic, nil) != nil {
		t.Fatal("encoding")
	}
	b64 := base64.StdEncoding.EncodeToString
	// The JPEG's base64 written with every "/" escaped and a line break
	// in it, as JSON allows: the same bytes.
	jpegData := b64(j.Bytes())
	jpegData = jpegData[:40] + `\n` + jpegData[40:]
	jpegData = strings.ReplaceAll(jpegData, "/", `\/`)
	want := map[string][]byte{"u1-1.png": p.Bytes(), "u1-2.jpg": j.Bytes(), "t1-1.png": p.Bytes()}
	lines := []string{
		`{"type":"session","version":3,"id":"img-session","timestamp":"2025-01-01T00:00:00.000Z","cwd":"/work/img"}`,
		`{"type":"message","id":"u1","parentId":null,"timestamp":"2025-01-01T00:00:01.000Z","message":{"role":"user","content":[{"type":"text","text":"look"},{"type":"image","data":"` + b64(p.Bytes()) + `","mimeType":"image/png"},{"type":"image","data":"` + jpegData + `","mimeType":"image/jpeg"},{"type":"image","data":"@@not base64@@","mimeType":"image/png"}]}}`,
		`{"type":"message","id":"a1","parentId":"u1","timestamp":"2025-01-01T00:00:02.000Z","message":{"role":"assistant","content":[{"type":"toolCall","id":"c1","name":"shot","arguments":{}}],"provider":"p","model":"m","usage":{"input":1,"output":1}}}`,
		`{"type":"message","id":"t1","parentId":"a1","timestamp":"2025-01-01T00:00:03.000Z","message":{"role":"toolResult","toolCallId":"c1","toolName":"shot","content":[{"type":"text","text":"done"},{"type":"image","data":"` + b64(p.Bytes()) + `","mimeType":"image/png"}],"isError":false}}`,
	}
	store := t.TempDir()
	proj := filepath.Join(store, "--work-img--")
	if err := os.MkdirAll(proj, 0o755); err != nil {
		t.Fatal(err)
	}
	name := "2025-01-01T00-00-00-000Z_img-session"
	if err := os.WriteFile(filepath.Join(proj, name+".jsonl"), []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	mnt := testMount(t, store)
	dir := filepath.Join(mnt, "--work-img--", name)

	out, err := exec.Command("ls", "-l", "--time-style=+", filepath.Join(dir, "images")).CombinedOutput()
	if err != nil {
		t.Fatalf("ls -l: %v\n%s", err, out)
	}
	sizes := map[string]int{}
	for _, m := range regexp.MustCompile(`(?m)^-r\S+\s+\d+\s+\S+\s+\S+\s+(\d+)\s+(\S+)$`).FindAllStringSubmatch(string(out), -1) {
		sizes[m[2]], _ = strconv.Atoi(m[1])
	}
	if len(sizes) != len(want) {
		t.Errorf("ls -l images/ lists %v, want %d files:\n%s", sizes, len(want), out)
	}
	tmp := t.TempDir()
	for n, data := range want {
		if sizes[n] != len(data) {
			t.Errorf("ls -l shows %s as %d bytes, want %d", n, sizes[n], len(data))
		}
		ref := filepath.Join(tmp, n)
		if err := os.WriteFile(ref, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := exec.Command("cmp", ref, filepath.Join(dir, "images", n)).CombinedOutput(); err != nil {
			t.Errorf("cmp %s: %v %s", n, err, out)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "images", "u1-3.png")); !os.IsNotExist(err) {
		t.Errorf("the broken image has a file (%v)", err)
	}

	// The links of both transcripts lead to the files.
	link := regexp.MustCompile(`!\[[^\]]*\]\(([^)]+)\)`)
	for _, md := range []string{filepath.Join(dir, "transcript.md"), filepath.Join(dir, "branches", "t1", "transcript.md"), filepath.Join(dir, "current", "transcript.md")} {
		text, err := os.ReadFile(md)
		if err != nil {
			t.Fatal(err)
		}
		links := link.FindAllSubmatch(text, -1)
		if len(links) != 3 {
			t.Errorf("%s: %d image links, want 3", md, len(links))
		}
		for _, l := range links {
			got, err := os.ReadFile(filepath.Join(filepath.Dir(md), string(l[1])))
			if err != nil || !bytes.Equal(got, want[filepath.Base(string(l[1]))]) {
				t.Errorf("%s: link %s does not lead to its image (%v)", md, l[1], err)
			}
		}
	}
	// Sizes stat gives are what cat reads.
	for _, f := range []string{"transcript.md", "transcript.html", "branches/t1/transcript.md", "branches/t1/transcript.html", "branches/a1/transcript.html"} {
		fi, err := os.Stat(filepath.Join(dir, f))
		if err != nil {
			t.Fatal(err)
		}
		data, err := exec.Command("cat", filepath.Join(dir, f)).Output()
		if err != nil || int64(len(data)) != fi.Size() {
			t.Errorf("%s: stat %d, cat %d bytes (%v)", f, fi.Size(), len(data), err)
		}
	}
	page, _ := os.ReadFile(filepath.Join(dir, "transcript.html"))
	if n := bytes.Count(page, []byte(`<img src="data:image/`)); n != 3 {
		t.Errorf("transcript.html shows %d images inline, want 3", n)
	}
}
