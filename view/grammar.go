package view

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
)

// The grammar of the lines written to fork and new: what one line means,
// and the refusal that says what is wrong with it and what to write
// instead. What a line of append, leaf or name means is pi's, and package
// tree's.

// forkRequest is one line written to a session's fork: copy the session
// (From "") or its branch up to the entry From names, into a new session.
type forkRequest struct {
	// From names the entry as the user wrote it (an id, a label, a name
	// the mount shows); the caller resolves it.
	From string
	sessionOptions
}

// sessionOptions are what fork and new take besides the source: a working
// directory (absolute and cleaned; "" keeps the source's), a session id
// ("" for a new one) and a name.
type sessionOptions struct {
	Cwd, ID, Name string
	// HasName: Name was given (a session_info entry names the session).
	HasName bool
}

// parseForkLine reads one fork line: an entry id or label (pi's /clone at
// that entry), an empty line (the whole session, pi's --fork), or
// {"from","cwd","id","name"}.
func parseForkLine(line []byte) (forkRequest, error) {
	var r forkRequest
	v := jsjson.TrimWS(line)
	switch {
	case len(v) == 0:
	case v[0] == '{':
		o, err := parseObject(v)
		if err != nil {
			return r, refuse(ErrInvalid, `malformed JSON; write an entry id, a label, an empty line (the whole session), or {"from":"ID","cwd":"/dir","id":"ID","name":"NAME"}`)
		}
		o.example = `{"from":"ID","cwd":"/other/dir","name":"NAME"}`
		if r.sessionOptions, err = o.options("from", "cwd", "id", "name"); err != nil {
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

// parseNewLine reads one line written to new: at the mount root a working
// directory or {"cwd","id","name"}; in a project (inProject), whose own
// working directory the caller fills in, an empty line or {"id","name"}.
func parseNewLine(line []byte, inProject bool) (sessionOptions, error) {
	var so sessionOptions
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
			return o.options("id", "name")
		case len(v) > 0:
			return so, refuse(ErrInvalid, `write %s; for another working directory, write its path to the new file at the mount root`, usage)
		}
		return so, nil
	}
	switch {
	case o != nil:
		var err error
		if so, err = o.options("cwd", "id", "name"); err != nil {
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

// object is a JSON object written to fork or new, with a well-formed one
// for refusals.
type object struct {
	raw     []byte
	example string
}

func parseObject(v []byte) (*object, error) {
	v, err := jsjson.Parse(v)
	if err != nil {
		return nil, err
	}
	if jsjson.KindOf(v) != jsjson.Object {
		return nil, fmt.Errorf("not an object")
	}
	return &object{raw: v}, nil
}

func (o *object) has(key string) bool { return jsjson.Has(o.raw, key) }

// bad refuses a field of the wrong kind.
func (o *object) bad(key, want string) error {
	if o.example == "" {
		return refuse(ErrInvalid, `%q must be %s`, key, want)
	}
	return refuse(ErrInvalid, `%q must be %s; e.g. %s`, key, want, o.example)
}

// optString is a string field that may be missing or null ("").
func (o *object) optString(key string) (string, error) {
	v := jsjson.Get(o.raw, key)
	if v == nil || jsjson.KindOf(v) == jsjson.Null {
		return "", nil
	}
	s, ok := jsjson.Str(o.raw, key)
	if !ok {
		return "", o.bad(key, "a string")
	}
	return s, nil
}

// options reads cwd, id and name from o (those of them in fields), and
// refuses any other field.
func (o *object) options(fields ...string) (sessionOptions, error) {
	var so sessionOptions
	keys, _ := jsjson.ObjectMembers(o.raw)
	for _, k := range keys {
		if !slices.Contains(fields, k) {
			return so, refuse(ErrInvalid, `unknown field %q; the fields are: %s`, k, strings.Join(fields, ", "))
		}
	}
	var err error
	if so.Cwd, err = o.optString("cwd"); err != nil {
		return so, err
	}
	if so.ID, err = o.optString("id"); err != nil {
		return so, err
	}
	if v := jsjson.Get(o.raw, "name"); v != nil && jsjson.KindOf(v) != jsjson.Null {
		so.HasName = true
		if so.Name, err = o.optString("name"); err != nil {
			return so, err
		}
	}
	return so, nil
}
