package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/pifs/pifs/internal/oracle"
)

// trickyCwds are working directories whose project folder pi's encoding
// has to get exactly right.
var trickyCwds = []string{
	"/home/user/proj",
	"/home/user/proj/",
	"/",
	"//double//slash",
	"/a/./b/../c",
	"/trailing/.",
	"/with space/and  two",
	"/dots.in/..name/.hidden/...",
	"/colon:in/name:",
	"/:",
	`/back\slash\`,
	"/-lead-/--already--",
	"/ünïcødé/日本語/emoji🎉",
	"/percent%2Fslash",
	"/tab\there/new\nline",
	"/~/not-home",
	"~/in-home",
	"~",
	"relative/dir",
	"file:///srv/url%20path",
}

// ProjectFolder and NewSessionDir in the default layout against pi's own
// SessionManager.create and forkFrom (same $HOME and working directory).
func TestProjectFolderAgainstPi(t *testing.T) {
	oracle.Dir(t)
	agent := t.TempDir()
	got := oracle.Layout(t, agent, trickyCwds, "")
	if len(got) != len(trickyCwds) {
		t.Fatalf("pi answered %d cases, want %d", len(got), len(trickyCwds))
	}
	store := filepath.Join(agent, "sessions")
	for i, cwd := range trickyCwds {
		want := filepath.Dir(got[i].File)
		if f := filepath.Base(want); ProjectFolder(cwd) != f {
			t.Errorf("ProjectFolder(%q) = %q, pi: %q", cwd, ProjectFolder(cwd), f)
		}
		if d := NewSessionDir(store, false, cwd); d != want {
			t.Errorf("NewSessionDir(store, false, %q) = %q, pi creates in %q", cwd, d, want)
		}
		if d := filepath.Dir(got[i].Fork); d != want {
			t.Errorf("pi forks into %q for %q, not next to a new session (%q)", d, cwd, want)
		}
		// The header cwd pi writes lands in the same folder.
		if ProjectFolder(got[i].Cwd) != ProjectFolder(cwd) {
			t.Errorf("ProjectFolder(header cwd %q) = %q, ProjectFolder(%q) = %q", got[i].Cwd, ProjectFolder(got[i].Cwd), cwd, ProjectFolder(cwd))
		}
	}
}

// In a chosen directory pi writes every session, and every fork, flat.
func TestNewSessionDirFlatAgainstPi(t *testing.T) {
	oracle.Dir(t)
	agent := t.TempDir()
	flat := filepath.Join(t.TempDir(), "chosen")
	got := oracle.Layout(t, agent, trickyCwds, flat)
	for i, cwd := range trickyCwds {
		if d := NewSessionDir(flat, true, cwd); d != filepath.Dir(got[i].File) || d != filepath.Dir(got[i].Fork) {
			t.Errorf("NewSessionDir(flat, true, %q) = %q, pi: %q and %q", cwd, d, got[i].File, got[i].Fork)
		}
	}
	if _, err := os.Stat(filepath.Join(agent, "sessions")); err == nil {
		t.Errorf("pi made its default store although a directory was chosen")
	}
}

// ResolveLocation against pi's main.js choice, in the same working
// directory and environment, judged by where pi then creates a session.
func TestResolveLocationAgainstPi(t *testing.T) {
	oracle.Dir(t)
	root := t.TempDir()
	wd := filepath.Join(root, "wd")
	home := filepath.Join(root, "home")
	agent := filepath.Join(root, "agent")
	if err := os.MkdirAll(wd, 0o755); err != nil {
		t.Fatal(err)
	}
	t.Chdir(wd)
	homeSettings := filepath.Join(home, ".pi", "agent", "settings.json")
	agentSettings := filepath.Join(agent, "settings.json")

	type tc struct {
		name     string
		flag     string
		env      map[string]string
		settings map[string]string
	}
	tests := []tc{
		{name: "default"},
		{name: "agent dir", env: map[string]string{EnvAgentDir: agent}},
		{name: "agent dir ~", env: map[string]string{EnvAgentDir: "~/ag"}},
		{name: "agent dir relative", env: map[string]string{EnvAgentDir: "ag"}},
		{name: "env", env: map[string]string{EnvSessionDir: root + "/env"}},
		{name: "env ~", env: map[string]string{EnvSessionDir: "~/env"}},
		{name: "env relative", env: map[string]string{EnvSessionDir: "env/x"}},
		{name: "env ~user", env: map[string]string{EnvSessionDir: "~nobody/x"}},
		{name: "env file URL", env: map[string]string{EnvSessionDir: "file://" + root + "/url%20dir/"}},
		{name: "env file URL encoded slash", env: map[string]string{EnvSessionDir: "file://" + root + "/a%2Fb"}},
		{name: "flag", flag: root + "/flag", env: map[string]string{EnvSessionDir: root + "/env"}},
		{name: "flag ~", flag: "~/flag"},
		{name: "flag relative", flag: "flag/"},
		{name: "setting", settings: map[string]string{homeSettings: `{"sessionDir":"` + root + `/set"}`}},
		{name: "setting ~", settings: map[string]string{homeSettings: `{"sessionDir":"~/set"}`}},
		{name: "setting relative", settings: map[string]string{homeSettings: `{"sessionDir":"set/rel"}`}},
		{name: "setting in agent dir", env: map[string]string{EnvAgentDir: agent}, settings: map[string]string{homeSettings: `{"sessionDir":"/nope"}`, agentSettings: `{"sessionDir":"` + root + `/agentset"}`}},
		{name: "setting under env", env: map[string]string{EnvSessionDir: root + "/env"}, settings: map[string]string{homeSettings: `{"sessionDir":"/nope"}`}},
		{name: "setting with BOM", settings: map[string]string{homeSettings: "\uFEFF{\"sessionDir\":\"" + root + "/bom\"}"}},
		{name: "setting empty", settings: map[string]string{homeSettings: `{"sessionDir":""}`}},
		{name: "setting null", settings: map[string]string{homeSettings: `{"sessionDir":null}`}},
		{name: "setting 0", settings: map[string]string{homeSettings: `{"sessionDir":0}`}},
		{name: "setting number", settings: map[string]string{homeSettings: `{"sessionDir":5}`}},
		{name: "setting true", settings: map[string]string{homeSettings: `{"sessionDir":true}`}},
		{name: "setting array", settings: map[string]string{homeSettings: `{"sessionDir":["/x"]}`}},
		{name: "settings empty file", settings: map[string]string{homeSettings: ``}},
		{name: "settings blank", settings: map[string]string{homeSettings: " \n"}},
		{name: "settings malformed", settings: map[string]string{homeSettings: `{"sessionDir":"/x",}`}},
		{name: "settings null", settings: map[string]string{homeSettings: `null`}},
		{name: "settings string", settings: map[string]string{homeSettings: `"x"`}},
		{name: "settings array", settings: map[string]string{homeSettings: `[1]`}},
		{name: "settings duplicate key", settings: map[string]string{homeSettings: `{"sessionDir":"/a","sessionDir":"` + root + `/last"}`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, p := range []string{homeSettings, agentSettings} {
				if err := os.RemoveAll(p); err != nil {
					t.Fatal(err)
				}
			}
			for p, content := range tt.settings {
				if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			env := map[string]string{"HOME": home, EnvAgentDir: "", EnvSessionDir: ""}
			for k, v := range tt.env {
				env[k] = v
			}
			var envList []string
			for k, v := range env {
				envList = append(envList, k+"="+v)
			}
			pi := oracle.Resolve(t, wd, envList, tt.flag)
			loc, err := ResolveLocation(tt.flag, func(k string) string { return env[k] })
			if pi.Error != nil {
				if err == nil {
					t.Fatalf("pi fails (%s), ResolveLocation gives %+v", *pi.Error, loc)
				}
				return
			}
			if err != nil {
				t.Fatalf("ResolveLocation: %v; pi creates %s", err, *pi.File)
			}
			if loc.Flat != pi.Flat {
				t.Errorf("Flat = %v, pi's sessionDir = %#v", loc.Flat, pi.SessionDir)
			}
			if got, want := NewSessionDir(loc.Dir, loc.Flat, wd), filepath.Dir(*pi.File); got != want {
				t.Errorf("%+v: a new session goes to %s, pi puts it in %s", loc, got, want)
			}
			if (len(loc.Warnings) > 0) != (len(pi.Warnings) > 0) {
				t.Errorf("warnings %q, pi's %q", loc.Warnings, pi.Warnings)
			}
		})
	}
}

// pi also takes sessionDir from the project settings (<cwd>/.pi/settings.json
// of the directory it starts in, no parent is searched), over the global
// one. pifs, started from no project, reads only the global settings.
func TestProjectSettingsArePi(t *testing.T) {
	oracle.Dir(t)
	root := t.TempDir()
	wd := filepath.Join(root, "proj")
	home := filepath.Join(root, "home")
	for p, content := range map[string]string{
		filepath.Join(wd, ".pi", "settings.json"):            `{"sessionDir":"` + root + `/project"}`,
		filepath.Join(home, ".pi", "agent", "settings.json"): `{"sessionDir":"` + root + `/global"}`,
	} {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	env := []string{"HOME=" + home, EnvAgentDir + "=", EnvSessionDir + "="}
	pi := oracle.Resolve(t, wd, env, "")
	if pi.File == nil || filepath.Dir(*pi.File) != root+"/project" {
		t.Fatalf("pi: %+v, want a session in %s/project", pi, root)
	}
	sub := filepath.Join(wd, "sub")
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if pi := oracle.Resolve(t, sub, env, ""); pi.File == nil || filepath.Dir(*pi.File) != root+"/global" {
		t.Fatalf("pi in a sub-directory: %+v, want a session in %s/global", pi, root)
	}
	t.Chdir(wd)
	loc, err := ResolveLocation("", func(k string) string {
		if k == "HOME" {
			return home
		}
		return ""
	})
	if err != nil || loc.Dir != root+"/global" || !strings.Contains(loc.Reason, "settings.json") {
		t.Errorf("ResolveLocation = %+v, %v; want the global setting", loc, err)
	}
}
