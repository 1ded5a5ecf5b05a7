package sessions

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestResolveLocation(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root := t.TempDir()
	home := filepath.Join(root, "home")
	agent := filepath.Join(root, "agent")
	homeSettings := filepath.Join(home, ".pi", "agent", "settings.json")
	agentSettings := filepath.Join(agent, "settings.json")

	type tc struct {
		name     string
		flag     string
		env      map[string]string
		settings map[string]string // path → content
		want     string
		flat     bool
		reason   string // substring of Reason
		warning  string // substring of the one warning, "" for none
		err      string // substring of the error
	}
	tests := []tc{
		{name: "default", want: home + "/.pi/agent/sessions", reason: "default (~/.pi/agent/sessions"},
		{name: "agent dir", env: map[string]string{EnvAgentDir: agent}, want: agent + "/sessions", reason: "$PI_CODING_AGENT_DIR"},
		{name: "agent dir with ~", env: map[string]string{EnvAgentDir: "~/ag"}, want: home + "/ag/sessions"},
		{name: "agent dir relative", env: map[string]string{EnvAgentDir: "rel/ag"}, want: wd + "/rel/ag/sessions"},
		{name: "env", env: map[string]string{EnvSessionDir: "/s", EnvAgentDir: agent}, want: "/s", flat: true, reason: "from $PI_CODING_AGENT_SESSION_DIR"},
		{name: "env ~", env: map[string]string{EnvSessionDir: "~/s"}, want: home + "/s", flat: true},
		{name: "env bare ~", env: map[string]string{EnvSessionDir: "~"}, want: home, flat: true},
		{name: "env ~user is literal", env: map[string]string{EnvSessionDir: "~bob/s"}, want: wd + "/~bob/s", flat: true, reason: "relative to the current directory"},
		{name: "env file URL", env: map[string]string{EnvSessionDir: "file:///tmp/a%20b/"}, want: "/tmp/a b", flat: true},
		{name: "env file URL localhost", env: map[string]string{EnvSessionDir: "file://localhost/tmp/x"}, want: "/tmp/x", flat: true},
		{name: "env file URL host", env: map[string]string{EnvSessionDir: "file://host/tmp/x"}, err: "host"},
		{name: "env file URL encoded slash", env: map[string]string{EnvSessionDir: "file:///a%2Fb"}, err: "encoded /"},
		{name: "flag wins", flag: "/f", env: map[string]string{EnvSessionDir: "/s"}, want: "/f", flat: true, reason: "from --sessions-dir"},
		{name: "flag ~", flag: "~/f", want: home + "/f", flat: true},
		{name: "flag relative", flag: "f/g/", want: wd + "/f/g", flat: true},
		{name: "flag is the default store", flag: home + "/.pi/agent/sessions/", want: home + "/.pi/agent/sessions", reason: "pi's default store"},
		{name: "flag is the agent dir's store", flag: agent + "/sessions", env: map[string]string{EnvAgentDir: agent}, want: agent + "/sessions"},
		{name: "flag is not the agent dir's store", flag: home + "/.pi/agent/sessions", env: map[string]string{EnvAgentDir: agent}, want: home + "/.pi/agent/sessions", flat: true},
		{name: "flag is pi's chosen dir", flag: home + "/.pi/agent/sessions", env: map[string]string{EnvSessionDir: "~/.pi/agent/sessions"}, want: home + "/.pi/agent/sessions", flat: true, reason: "pi's chosen directory (from $PI_CODING_AGENT_SESSION_DIR)"},
		{name: "flag is the setting's dir", flag: "/set", settings: map[string]string{homeSettings: `{"sessionDir":"/set"}`}, want: "/set", flat: true, reason: "pi's chosen directory (from sessionDir in"},
		{name: "flag wins over a broken setting", flag: "/f", settings: map[string]string{homeSettings: `{"sessionDir": 5}`}, want: "/f", flat: true},
		{name: "setting", settings: map[string]string{homeSettings: `{"theme":"x","sessionDir":"/set"}`}, want: "/set", flat: true, reason: "from sessionDir in " + homeSettings},
		{name: "setting in agent dir", env: map[string]string{EnvAgentDir: agent}, settings: map[string]string{homeSettings: `{"sessionDir":"/home-one"}`, agentSettings: `{"sessionDir":"/agent-one"}`}, want: "/agent-one", flat: true, reason: agentSettings},
		{name: "setting ~", settings: map[string]string{homeSettings: `{"sessionDir":"~/set"}`}, want: home + "/set", flat: true},
		{name: "setting relative to the cwd, not the agent dir", settings: map[string]string{homeSettings: `{"sessionDir":"rel"}`}, want: wd + "/rel", flat: true, reason: "relative"},
		{name: "setting with BOM", settings: map[string]string{homeSettings: "\uFEFF{\"sessionDir\":\"/bom\"}"}, want: "/bom", flat: true},
		{name: "setting duplicate key: last wins", settings: map[string]string{homeSettings: `{"sessionDir":"/a","sessionDir":"/b"}`}, want: "/b", flat: true},
		{name: "setting escaped key", settings: map[string]string{homeSettings: `{"session\u0044ir":"/esc"}`}, want: "/esc", flat: true},
		{name: "env wins over setting", env: map[string]string{EnvSessionDir: "/s"}, settings: map[string]string{homeSettings: `{"sessionDir":"/set"}`}, want: "/s", flat: true},
		{name: "setting empty string", settings: map[string]string{homeSettings: `{"sessionDir":""}`}, want: home + "/.pi/agent/sessions"},
		{name: "setting null", settings: map[string]string{homeSettings: `{"sessionDir":null}`}, want: home + "/.pi/agent/sessions"},
		{name: "setting false", settings: map[string]string{homeSettings: `{"sessionDir":false}`}, want: home + "/.pi/agent/sessions"},
		{name: "setting number", settings: map[string]string{homeSettings: `{"sessionDir":5}`}, err: "not a string"},
		{name: "setting object", settings: map[string]string{homeSettings: `{"sessionDir":{}}`}, err: "not a string"},
		{name: "empty settings file", settings: map[string]string{homeSettings: ``}, want: home + "/.pi/agent/sessions"},
		{name: "settings array", settings: map[string]string{homeSettings: `["sessionDir"]`}, want: home + "/.pi/agent/sessions"},
		{name: "malformed settings", settings: map[string]string{homeSettings: `{"sessionDir":"/x",}`}, want: home + "/.pi/agent/sessions", warning: "ignored invalid settings file " + homeSettings},
		{name: "blank settings", settings: map[string]string{homeSettings: "  \n"}, want: home + "/.pi/agent/sessions", warning: "not JSON"},
		{name: "settings null", settings: map[string]string{homeSettings: `null`}, want: home + "/.pi/agent/sessions", warning: "not a JSON object"},
		{name: "settings is a folder", settings: map[string]string{homeSettings + "/x": `{}`}, want: home + "/.pi/agent/sessions", warning: "ignored"},
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
			env := map[string]string{"HOME": home}
			for k, v := range tt.env {
				env[k] = v
			}
			loc, err := ResolveLocation(tt.flag, func(k string) string { return env[k] })
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want one with %q (loc %+v)", err, tt.err, loc)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if loc.Dir != tt.want || loc.Flat != tt.flat {
				t.Errorf("Dir, Flat = %q, %v; want %q, %v", loc.Dir, loc.Flat, tt.want, tt.flat)
			}
			if !strings.Contains(loc.Reason, tt.reason) {
				t.Errorf("Reason = %q, want it to contain %q", loc.Reason, tt.reason)
			}
			switch {
			case tt.warning == "" && len(loc.Warnings) != 0:
				t.Errorf("Warnings = %q, want none", loc.Warnings)
			case tt.warning != "" && (len(loc.Warnings) != 1 || !strings.Contains(loc.Warnings[0], tt.warning)):
				t.Errorf("Warnings = %q, want one with %q", loc.Warnings, tt.warning)
			}
		})
	}
}

// With $HOME unset, the home directory comes from the password database,
// as Node's os.homedir() takes it.
func TestResolveLocationNoHome(t *testing.T) {
	loc, err := ResolveLocation("", func(string) string { return "" })
	if err != nil {
		t.Skipf("no home directory for this user: %v", err)
	}
	if !filepath.IsAbs(loc.Dir) || filepath.Base(loc.Dir) != "sessions" || loc.Flat {
		t.Errorf("loc = %+v, want <home>/.pi/agent/sessions", loc)
	}
}

func TestProjectFolderPure(t *testing.T) {
	home := func() (string, error) { return "/home/u", nil }
	tests := map[string]string{
		"/home/user/proj":     "--home-user-proj--",
		"/home/user/proj/":    "--home-user-proj--",
		"/home//user/./proj":  "--home-user-proj--",
		"/home/user/x/../p":   "--home-user-p--",
		"/":                   "----",
		"":                    "--wd--",
		"rel/x":               "--wd-rel-x--",
		"~":                   "--home-u--",
		"~/p":                 "--home-u-p--",
		"/a b/c.d/e:f":        "--a b-c.d-e-f--",
		`/a\b`:                "--a-b--",
		"/ünï/çødé":           "--ünï-çødé--",
		"/a--b/-c-":           "--a--b--c---",
		"file:///srv/x%20y":   "--srv-x y--",
		"//double/leading":    "--double-leading--",
		"/trailing/dots/../.": "--trailing--",
	}
	for cwd, want := range tests {
		if got := projectFolder(cwd, "/wd", home); got != want {
			t.Errorf("projectFolder(%q) = %q, want %q", cwd, got, want)
		}
	}
}

func TestNewSessionDir(t *testing.T) {
	if got := NewSessionDir("/s", true, "/home/user/proj"); got != "/s" {
		t.Errorf("flat: %q", got)
	}
	if got := NewSessionDir("/s", false, "/home/user/proj"); got != "/s/--home-user-proj--" {
		t.Errorf("default: %q", got)
	}
}

// A project folder is one file name, and every spelling of the same
// absolute path gives the same one (pi compares resolved paths).
func FuzzProjectFolder(f *testing.F) {
	for _, s := range []string{"/home/user/proj", "/", "a/b", "/a:b\\c", "~/x", "/ünï/../x/."} {
		f.Add(s)
	}
	home := func() (string, error) { return "/home/u", nil }
	f.Fuzz(func(t *testing.T, cwd string) {
		got := projectFolder(cwd, "/wd", home)
		if !strings.HasPrefix(got, "--") || !strings.HasSuffix(got, "--") || strings.Contains(got, "/") {
			t.Fatalf("projectFolder(%q) = %q", cwd, got)
		}
		if strings.HasPrefix(cwd, "/") && !strings.HasPrefix(cwd, "file://") {
			for _, same := range []string{cwd + "/", cwd + "/.", "/" + cwd, cwd + "/x/.."} {
				if g := projectFolder(same, "/wd", home); g != got {
					t.Fatalf("projectFolder(%q) = %q, projectFolder(%q) = %q", cwd, got, same, g)
				}
			}
		}
	})
}
