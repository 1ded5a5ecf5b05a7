package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions"
)

// TestSessionsDirAsPiChoosesIt: a flat store written by pi's own
// SessionManager, mounted through each way pi finds it (the flag, the
// variable, sessionDir in settings.json), shows every session pi's
// listAll gives, each in its cwd's project folder; the start-up line says
// which way was taken; and a session made through the mount's new is
// written flat and listed by pi.
func TestSessionsDirAsPiChoosesIt(t *testing.T) {
	bin := buildPifs(t)
	store := filepath.Join(t.TempDir(), "chosen")
	oracle.FlatCorpus(t, store)
	listed := oracle.ListAll(t, store)
	if len(listed) < 3 {
		t.Fatalf("pi lists %d sessions", len(listed))
	}
	agent := t.TempDir()
	os.WriteFile(filepath.Join(agent, "settings.json"), []byte(`{"sessionDir": "`+store+`"}`), 0o644)
	for _, c := range []struct {
		how    string
		env    []string
		args   []string
		reason string
	}{
		{"flag", []string{"PI_CODING_AGENT_DIR=" + t.TempDir()}, []string{"--sessions-dir", store}, "from --sessions-dir"},
		{"variable", []string{"PI_CODING_AGENT_SESSION_DIR=" + store, "PI_CODING_AGENT_DIR=" + t.TempDir()}, nil, "from $PI_CODING_AGENT_SESSION_DIR"},
		{"setting", []string{"PI_CODING_AGENT_SESSION_DIR=", "PI_CODING_AGENT_DIR=" + agent}, nil, "from sessionDir in " + filepath.Join(agent, "settings.json")},
	} {
		t.Run(c.how, func(t *testing.T) {
			mnt := emptyDir(t)
			pidFile := filepath.Join(t.TempDir(), "pid")
			env := append([]string{"XDG_STATE_HOME=" + t.TempDir()}, c.env...)
			out, code := pifsStatus(t, bin, env, append(append([]string{"--daemon", "--pid-file", pidFile}, c.args...), mnt)...)
			if code != 0 {
				t.Fatalf("pifs: %d %s", code, out)
			}
			// Read once: pifs removes its pid file as it stops.
			pid := readPid(t, pidFile)
			defer func() {
				syscall.Kill(pid, syscall.SIGTERM)
				waitGone(t, pid)
			}()
			if !strings.Contains(out, "mounted "+store) || !strings.Contains(out, c.reason) || !strings.Contains(out, "flat") {
				t.Errorf("start-up line %q does not say %q and flat", out, c.reason)
			}
			for _, l := range listed {
				name := strings.TrimSuffix(filepath.Base(l.Path), ".jsonl")
				info, err := os.ReadFile(filepath.Join(mnt, sessions.ProjectFolder(l.Cwd), name, "info.json"))
				if err != nil {
					t.Errorf("%s (cwd %s): %v", name, l.Cwd, err)
					continue
				}
				var got struct{ ID string }
				json.Unmarshal(info, &got)
				if got.ID != l.ID {
					t.Errorf("%s: id %q, pi says %q", name, got.ID, l.ID)
				}
			}
			if c.how != "variable" {
				return
			}
			// A session made through the mount is flat, and pi lists it.
			f, err := os.OpenFile(filepath.Join(mnt, "new"), os.O_RDWR, 0)
			if err != nil {
				t.Fatal(err)
			}
			f.WriteString(`{"cwd":"/home/user/made","id":"made-through-pifs"}` + "\n")
			reply := make([]byte, 512)
			n, _ := f.Read(reply)
			f.Close()
			if !strings.HasPrefix(string(reply[:n]), "--home-user-made--/") {
				t.Fatalf("new replied %q", reply[:n])
			}
			found := false
			for _, l := range oracle.ListAll(t, store) {
				if l.ID == "made-through-pifs" && filepath.Dir(l.Path) == store {
					found = true
				}
			}
			if !found {
				t.Error("pi's listAll does not find the session made through the mount at the top of the store")
			}
		})
	}
}
