package tree

import (
	"path/filepath"

	"github.com/pifs/pifs/internal/jsjson"
)

// The grammar of the lines written to the mount's fork and new controls:
// what one line asks for, and the refusal that says what is wrong with it
// and what to write instead.

// ForkRequest is one line written to a session's fork: copy the session
// (From "") or its branch up to the entry From names, into a new session.
type ForkRequest struct {
	// From names the entry as the user wrote it (an id, a label, a name
	// the mount shows); the caller resolves it.
	From string
	SessionOptions
}

// SessionOptions are what fork and new take besides the source: a working
// directory (absolute and cleaned; "" keeps the source's), a session id
// ("" for a new one) and a name.
type SessionOptions struct {
	Cwd, ID, Name string
	// HasName: Name was given (a session_info entry names the session).
	HasName bool
}

// ParseForkLine reads one fork line: an entry id or label (pi's /clone at
// that entry), an empty line (the whole session, pi's --fork), or
// {"from","cwd","id","name"}.
func ParseForkLine(line []byte) (ForkRequest, error) {
	var r ForkRequest
	v := jsjson.TrimWS(line)
	switch {
	case len(v) == 0:
	case v[0] == '{':
		o, err := parseObject(v)
		if err != nil {
			return r, refuse(ErrInvalid, `malformed JSON; write an entry id, a label, an empty line (the whole session), or {"from":"ID","cwd":"/dir","id":"ID","name":"NAME"}`)
		}
		o.example = `{"from":"ID","cwd":"/other/dir","name":"NAME"}`
		if r.SessionOptions, err = o.sessionOptions("from", "cwd", "id", "name"); err != nil {
			return r, err
		}
		if r.From, err = o.optString("from"); err != nil {
			return r, err
		}
	default:
		r.From = jsjson.ValidText(string(line))
	}
	if r.Cwd != "" {
		var err error
		if r.Cwd, err = checkCwd(r.Cwd); err != nil {
			return r, err
		}
	}
	return r, nil
}

// ParseNewLine reads one line written to new: at the mount root a working
// directory or {"cwd","id","name"}; in a project (inProject), whose own
// working directory the caller fills in, an empty line or {"id","name"}.
func ParseNewLine(line []byte, inProject bool) (SessionOptions, error) {
	var so SessionOptions
	usage := newUsage(inProject)
	v := jsjson.TrimWS(line)
	var o *object
	if len(v) > 0 && v[0] == '{' {
		var err error
		if o, err = parseObject(v); err != nil {
			return so, refuse(ErrInvalid, `malformed JSON; write %s`, usage)
		}
		o.example = usage
	}
	if inProject {
		switch {
		case o != nil && o.has("cwd"):
			return so, refuse(ErrInvalid, `a project's new creates sessions for the project's own working directory; write {"cwd":...} to the new file at the mount root instead`)
		case o != nil:
			return o.sessionOptions("id", "name")
		case len(v) > 0:
			return so, refuse(ErrInvalid, `write %s; for another working directory, write its path to the new file at the mount root`, usage)
		}
		return so, nil
	}
	switch {
	case o != nil:
		var err error
		if so, err = o.sessionOptions("cwd", "id", "name"); err != nil {
			return so, err
		}
		if so.Cwd == "" {
			return so, o.bad("cwd", "the working directory, an absolute path")
		}
	case len(v) == 0:
		return so, refuse(ErrInvalid, `empty line; write %s`, usage)
	default:
		so.Cwd = jsjson.ValidText(string(v))
	}
	cwd, err := checkCwd(so.Cwd)
	if err != nil {
		return so, err
	}
	so.Cwd = cwd
	return so, nil
}

// newUsage says what new takes, at the mount root or in a project.
func newUsage(inProject bool) string {
	if inProject {
		return `an empty line, or {"id":"ID","name":"NAME"}`
	}
	return `a working directory (an absolute path), or {"cwd":"/dir","id":"ID","name":"NAME"}`
}

// checkCwd requires an absolute working directory and cleans it as pi's
// resolve() does.
func checkCwd(cwd string) (string, error) {
	if !filepath.IsAbs(cwd) {
		return "", refuse(ErrInvalid, `the working directory %q is not an absolute path; write one such as "/home/me/project"`, cwd)
	}
	return filepath.Clean(cwd), nil
}

// sessionOptions reads cwd, id and name from o (those of them in fields),
// and refuses any other field.
func (o *object) sessionOptions(fields ...string) (SessionOptions, error) {
	var so SessionOptions
	if err := o.only(fields...); err != nil {
		return so, err
	}
	var err error
	if so.Cwd, err = o.optString("cwd"); err != nil {
		return so, err
	}
	if so.ID, err = o.optString("id"); err != nil {
		return so, err
	}
	if v := o.get("name"); v != nil && jsjson.KindOf(v) != jsjson.Null {
		so.HasName = true
		if so.Name, err = o.optString("name"); err != nil {
			return so, err
		}
	}
	return so, nil
}
