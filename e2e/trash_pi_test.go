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
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// TestRestoreJoinsPiLines: pi holds a session open (its SessionManager,
// waiting on its user) while the session, quiet for a minute, is trashed
// through the mount; pi's next lines go to its old path, a file of entries
// without a header that neither pi nor pifs can open. The restore brings
// the session and those lines together: the restored file is the trashed
// one, then every line pi wrote, in order; pi opens it with all of them and
// resumes at its last; the file of pi's lines is left in the trash, and
// nothing is lost.
func TestRestoreJoinsPiLines(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOME", home)
	t.Setenv("XDG_DATA_HOME", filepath.Join(home, ".local", "share"))
	store, file := writeStore(t)
	oldStore(t, store)
	before := readText(t, file)
	dir := oracle.Dir(t)
	mnt := testMount(t, store)

	// pi opens the session and waits.
	script, err := filepath.Abs(filepath.Join("testdata", "pi_append.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	goFile := filepath.Join(t.TempDir(), "go")
	const n = 5
	node := exec.Command("node", script, file, "0", strconv.Itoa(n), goFile)
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

	// The session is trashed, then pi writes.
	run(t, mnt, "mv", "./"+fixProject+"/"+fixSession, "trash/")
	os.WriteFile(goFile, nil, 0o644)
	if err := node.Wait(); err != nil {
		t.Fatalf("node: %v\n%s", err, stderr.String())
	}
	stray := readText(t, file)
	if strings.Contains(stray, `"type":"session"`) || len(lines(stray)) != n {
		t.Fatalf("pi's lines after the trash are not %d entries without a header:\n%s", n, stray)
	}

	run(t, mnt, "mv", "trash/"+fixSession, "./"+fixProject+"/")
	got := readText(t, file)
	if got != before+stray {
		t.Fatalf("the restored file is not the trashed one, then pi's lines:\n%s", got)
	}
	entries, ctx := piOpen(t, file)
	if entries != len(fixLines)-1+n {
		t.Errorf("pi reads %d entries, want %d", entries, len(fixLines)-1+n)
	}
	var c struct {
		Messages []struct {
			Role    string
			Content json.RawMessage
		}
	}
	json.Unmarshal(ctx, &c)
	if m := c.Messages; len(m) == 0 || userText(m[len(m)-1].Content) != fmt.Sprintf("node 0 %d", n-1) {
		t.Errorf("pi resumes with the context %s, not at its last line", ctx)
	}
	eventually(t, "the restored session's leaf", func() (bool, string) {
		leaf, err := os.ReadFile(filepath.Join(mnt, fixProject, fixSession, "leaf"))
		var last struct{ ID string }
		json.Unmarshal([]byte(lines(stray)[n-1]), &last)
		return err == nil && string(leaf) == last.ID+"\n", string(leaf)
	})
	// pi's lines, as they were, are in the trash: nothing is unlinked.
	trashed, _ := filepath.Glob(filepath.Join(home, ".local", "share", "Trash", "files", "*"))
	if len(trashed) != 1 || readText(t, trashed[0]) != stray {
		t.Errorf("the trash holds %v, want the file of pi's lines", trashed)
	}
	if got := run(t, mnt, "ls", "trash"); got != "" {
		t.Errorf("trash/ after the restore: %q", got)
	}
}
