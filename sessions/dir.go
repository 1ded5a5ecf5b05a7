package sessions

import (
	"bytes"
	"errors"
	"fmt"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
)

// Environment variables pi 1.6 reads (config.js: ENV_AGENT_DIR, ENV_SESSION_DIR).
const (
	EnvAgentDir   = "PI_CODING_AGENT_DIR"
	EnvSessionDir = "PI_CODING_AGENT_SESSION_DIR"
)

// Location is the sessions directory pi would use, and how pi lays it out.
type Location struct {
	// Dir is the absolute path of the sessions directory.
	Dir string
	// Flat is true when the user chose the directory (--sessions-dir, the
	// variable, the setting): pi then writes every session straight into
	// Dir, all working directories mixed. Otherwise Dir is pi's default
	// store, one folder per working directory (ProjectFolder).
	Flat bool
	// Reason says where Dir came from, for the start-up log line, e.g.
	// "from sessionDir in /root/.pi/agent/settings.json".
	Reason string
	// Warnings are problems pi would warn about and get past, such as a
	// settings.json that does not parse (pi then ignores the whole file).
	Warnings []string
}

// ResolveLocation chooses the sessions directory as pi 1.6 does (main.js),
// first that is set:
//
//  1. flag (pifs --sessions-dir, pi --session-dir), flat unless it names
//     the directory pi would take without it (2-4) and pi keeps that one
//     in its default layout;
//  2. $PI_CODING_AGENT_SESSION_DIR;
//  3. "sessionDir" in <agent dir>/settings.json, the agent dir being
//     $PI_CODING_AGENT_DIR or else ~/.pi/agent;
//  4. <agent dir>/sessions, the default, per-cwd layout.
//
// An empty value counts as unset, as in pi. Each value is expanded as pi's
// normalizePath does: "~" and a leading "~/" become the home directory
// ($HOME, else the password database; "~user" is left alone), a "file://"
// URL becomes its path. A relative result is taken relative to the current
// directory: pi resolves it against the directory it runs in.
//
// settings.json is read only when 1 and 2 are unset. As in pi, a missing or
// empty file is no setting; a file that cannot be read or does not parse
// as JSON is ignored with a warning; a falsy sessionDir ("", null, false, 0)
// is unset; any other non-string value is an error (pi crashes on it).
//
// pi also reads sessionDir from the project settings, <cwd>/.pi/settings.json
// of the directory it starts in, which wins over the global one. That is a
// store of that one project: pifs, started from no project, does not look
// there (mount it with --sessions-dir).
func ResolveLocation(flag string, getenv func(string) string) (Location, error) {
	home := func() (string, error) { return homeDir(getenv) }
	choose := func(raw, reason string, flat bool) (Location, error) {
		p, err := expandPath(raw, home)
		if err != nil {
			return Location{}, fmt.Errorf("%s: %w", reason, err)
		}
		abs, err := filepath.Abs(p)
		if err != nil {
			return Location{}, err
		}
		if !filepath.IsAbs(p) {
			reason += " (relative to the current directory, as pi takes it)"
		}
		return Location{Dir: abs, Flat: flat, Reason: reason}, nil
	}
	if flag != "" {
		loc, err := choose(flag, "from --sessions-dir", true)
		if err != nil {
			return Location{}, err
		}
		// The flag says where the store is (fstab and mount(8) always give
		// one), not how pi writes there: take the layout pi itself uses
		// for that directory. pi reaches any other directory only through
		// its own --session-dir, which is flat.
		if pi, err := resolveLocation(getenv, choose); err == nil && pi.Dir == loc.Dir {
			loc.Flat = pi.Flat
			if pi.Flat {
				loc.Reason += ", pi's chosen directory (" + pi.Reason + ")"
			} else {
				loc.Reason += ", pi's default store (one folder per working directory)"
			}
		}
		return loc, nil
	}
	return resolveLocation(getenv, choose)
}

// resolveLocation is ResolveLocation without the flag: pi's own choice.
func resolveLocation(getenv func(string) string, choose func(raw, reason string, flat bool) (Location, error)) (Location, error) {
	if v := getenv(EnvSessionDir); v != "" {
		return choose(v, "from $"+EnvSessionDir, true)
	}

	agentDir, agentReason, err := resolveAgentDir(getenv)
	if err != nil {
		return Location{}, err
	}
	settings := filepath.Join(agentDir, "settings.json")
	dir, warning, err := settingsSessionDir(settings)
	if err != nil {
		return Location{}, err
	}
	var loc Location
	if dir != "" {
		loc, err = choose(dir, "from sessionDir in "+settings, true)
		if err != nil {
			return Location{}, err
		}
	} else {
		loc = Location{Dir: filepath.Join(agentDir, "sessions"), Reason: agentReason}
	}
	if warning != "" {
		loc.Warnings = append(loc.Warnings, warning)
	}
	return loc, nil
}

// resolveAgentDir is pi's getAgentDir(), made absolute as pi's
// SettingsManager makes it.
func resolveAgentDir(getenv func(string) string) (dir, reason string, err error) {
	if v := getenv(EnvAgentDir); v != "" {
		p, err := expandPath(v, func() (string, error) { return homeDir(getenv) })
		if err != nil {
			return "", "", fmt.Errorf("$%s: %w", EnvAgentDir, err)
		}
		dir, err := filepath.Abs(p)
		return dir, "default for $" + EnvAgentDir + " (" + "$" + EnvAgentDir + "/sessions, one folder per working directory)", err
	}
	h, err := homeDir(getenv)
	if err != nil {
		return "", "", err
	}
	dir, err = filepath.Abs(filepath.Join(h, ".pi", "agent"))
	return dir, "default (~/.pi/agent/sessions, one folder per working directory)", err
}

// settingsSessionDir reads "sessionDir" from a pi settings file as pi's
// SettingsManager does. It returns "" when the file or the setting is
// missing or falsy, and a warning (pi's wording) when the file is ignored.
func settingsSessionDir(path string) (dir, warning string, err error) {
	data, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return "", "", nil
	}
	invalid := func(why string) (string, string, error) {
		return "", "ignored invalid settings file " + path + ": " + why, nil
	}
	if err != nil {
		return invalid(err.Error())
	}
	if len(data) == 0 {
		return "", "", nil // pi: `if (!content) return {}`
	}
	data = bytes.TrimPrefix(data, []byte("\uFEFF"))
	v, err := jsjson.Parse(data)
	if err != nil {
		return invalid("not JSON")
	}
	// pi's migrateSettings uses `in` on the value, which throws on
	// anything but an object or an array; an array has no sessionDir.
	switch jsjson.KindOf(v) {
	case jsjson.Object:
	case jsjson.Array:
		return "", "", nil
	default:
		return invalid("not a JSON object")
	}
	raw := jsjson.Get(v, "sessionDir")
	if raw == nil || !jsjson.Truthy(raw) {
		return "", "", nil
	}
	if jsjson.KindOf(raw) != jsjson.String {
		return "", "", fmt.Errorf("sessionDir in %s is %s, not a string", path, raw)
	}
	s, err := jsjson.Unquote(raw)
	if err != nil {
		return "", "", fmt.Errorf("sessionDir in %s: %w", path, err)
	}
	return s, "", nil
}

// homeDir is Node's os.homedir(): $HOME, else the password database.
func homeDir(getenv func(string) string) (string, error) {
	if h := getenv("HOME"); h != "" {
		return h, nil
	}
	u, err := user.Current()
	if err != nil {
		return "", fmt.Errorf("no home directory: $HOME is unset and %w", err)
	}
	if u.HomeDir == "" {
		return "", errors.New("no home directory: $HOME is unset and the user has none")
	}
	return u.HomeDir, nil
}

// expandPath is pi's normalizePath (utils/paths.js) on POSIX: "~" and a
// leading "~/" become the home directory; a string starting with "file://"
// is a file URL and becomes its path (Node's fileURLToPath). Nothing else
// changes: relative paths stay relative.
func expandPath(p string, home func() (string, error)) (string, error) {
	if p == "~" || strings.HasPrefix(p, "~/") {
		h, err := home()
		if err != nil {
			return "", err
		}
		if p == "~" {
			return h, nil
		}
		return filepath.Join(h, p[2:]), nil
	}
	if strings.HasPrefix(p, "file://") {
		return fileURLPath(p)
	}
	return p, nil
}

// fileURLPath is Node's fileURLToPath on POSIX: the host must be empty or
// localhost, and the path may not hold an encoded "/".
func fileURLPath(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil {
		return "", fmt.Errorf("invalid file URL %q: %w", s, err)
	}
	if h := strings.ToLower(u.Host); h != "" && h != "localhost" {
		return "", fmt.Errorf("file URL host must be \"localhost\" or empty: %q", s)
	}
	if strings.Contains(strings.ToLower(u.EscapedPath()), "%2f") {
		return "", fmt.Errorf("file URL path must not include encoded / characters: %q", s)
	}
	if u.Path == "" {
		return "/", nil
	}
	return u.Path, nil
}
