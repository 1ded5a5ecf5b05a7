package view

import (
	"fmt"
	iofs "io/fs"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/internal/spill"
	"github.com/pifs/pifs/internal/txn"
	"github.com/pifs/pifs/sessions"
	"github.com/pifs/pifs/tree"
)

// The commands of each control: what a line of name, leaf or append means
// is tree's (pi's append schema), and a line of fork or new the grammar's;
// here the names the mount shows and the sessions of the store are
// resolved.

// asIs prepares a line of name or leaf: it is taken as it is.
func asIs(line []byte) ([]byte, error) { return line, nil }

// nameControl is name: each line sets the session's name (pi's /name); an
// empty line clears it.
func nameControl(s sessionRef) sessionControl[[]byte] {
	return sessionControl[[]byte]{s, nameName, asIs, func(ss *session, b *tree.Builder, line []byte) error {
		return b.NameLine(line)
	}}
}

// leafControl is leaf: each line moves the leaf to an entry id, label or
// name the mount shows (pi's /tree); an empty line moves it before the
// first entry.
func leafControl(s sessionRef) sessionControl[[]byte] {
	return sessionControl[[]byte]{s, leafName, asIs, func(ss *session, b *tree.Builder, line []byte) error {
		return b.LeafLine(line, func(ref string) (string, bool) { return ss.Tree.ResolveShown(b, ref) })
	}}
}

// appendControl is append: each line adds one entry at the leaf. A line is
// parsed, checked and encoded before the session is locked
// (tree.PrepareAppend); under the lock, only what needs the session is
// done (tree.Builder.AppendPrepared).
func appendControl(s sessionRef) sessionControl[*tree.PreparedLine] {
	return sessionControl[*tree.PreparedLine]{s, appendName, prepareAppend, appendPrepared}
}

func prepareAppend(line []byte) (*tree.PreparedLine, error) {
	return tree.PrepareAppend(line, float64(time.Now().UnixMilli()))
}

func appendPrepared(ss *session, b *tree.Builder, p *tree.PreparedLine) error {
	return b.AppendPrepared(p)
}

// newSession is a session file about to be created by fork or new: in
// folder dir of the store, shown in project.
type newSession struct {
	project, dir, file string
	lines              [][]byte
}

// create writes the planned sessions and returns their paths relative to
// the mount root, one a line.
func (v *View) create(c Caller, plans []newSession) ([]byte, error) {
	var reply []byte
	for _, p := range plans {
		path, err := v.createFor(c, p)
		if err != nil {
			return nil, err
		}
		v.update(filepath.Dir(path)) // a new project folder
		v.update(path)
		reply = append(reply, p.project+"/"+strings.TrimSuffix(p.file, ".jsonl")+"\n"...)
	}
	return reply, nil
}

// createFor creates a planned session file for caller c, with the
// folders it needs, and gives them to the caller. The folders it is made
// in are checked again as they are opened (sessions.CreateAs), so that a
// link swapped in after the check leads nowhere the caller may not write.
func (v *View) createFor(c Caller, p newSession) (string, error) {
	if _, err := v.mayCreateIn(c, p.dir); err != nil {
		return "", err
	}
	uid, gid := -1, -1
	if v.uid == 0 && (c.Uid != 0 || c.Gid != 0) {
		uid, gid = int(c.Uid), int(c.Gid)
	}
	w := c.Who()
	return sessions.CreateAs(p.dir, p.file, uid, gid, func(fi iofs.FileInfo) error {
		st, ok := fi.Sys().(*syscall.Stat_t)
		if !ok {
			return fmt.Errorf("%s: no owner", p.dir)
		}
		if o := (Owner{Uid: st.Uid, Gid: st.Gid, Perm: uint32(fi.Mode().Perm())}); !w.Allows(o, access.Write|access.Search) {
			at, _ := filepath.EvalSymlinks(p.dir)
			return access.Errorf("user %d may not create files in %s (mode %04o, owner %d:%d): pifs creates for a user only what the user could create in the store", w.Uid, at, o.Perm, o.Uid, o.Gid)
		}
		return nil
	}, p.lines...)
}

// placeFor is where pi creates a new session for a working directory
// (SessionManager.create, forkFrom): flat in a directory the user chose,
// else in the cwd's own folder; and the project folder the mount shows it
// in.
func (v *View) placeFor(cwd string) (project, dir string) {
	return sessions.ProjectFolder(cwd), sessions.NewSessionDir(v.opts.SessionsDir, v.opts.Flat, cwd)
}

// sessionID returns the id for a new session: the one given, checked as pi
// checks it and not taken by another session (nor earlier in the batch), or
// a new UUIDv7.
func (v *View) sessionID(id string, taken map[string]bool) (string, error) {
	if id == "" {
		return sessions.NewSessionID(), nil
	}
	if err := sessions.ValidSessionID(id); err != nil {
		return "", refuse(ErrInvalid, `%v; or leave "id" out for a new one`, err)
	}
	if _, found := v.sessionByID(id); found || taken[id] {
		return "", refuse(ErrExists, `session id %q is taken (see by-id/); choose another, or leave "id" out for a new one`, id)
	}
	taken[id] = true
	return id, nil
}

// forkControl is a session's fork: each line makes a new session from it.
type forkControl struct{ s sessionRef }

func (c forkControl) Name() string { return forkName }

func (c forkControl) Refused(err error) { c.s.refused(err) }

// mayOpen: a fork reads the session (where the copy goes is checked per
// line).
func (c forkControl) mayOpen(who Caller) error {
	f, err := c.s.meta()
	if err != nil {
		return err
	}
	return c.s.v.mayReadFile(who, f.Path)
}

// Check plans the fork lines, after the transaction's earlier ones (the
// session ids they take), creating nothing.
func (c forkControl) Check(x *Txn, state any, first int, lines [][]byte) (any, error) {
	who := x.Caller
	if c.s.v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	taken, _ := state.(map[string]bool)
	if taken == nil {
		taken = map[string]bool{}
	}
	err := c.s.v.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		for i, l := range lines {
			if _, err := c.plan(who, ss, l, taken); err != nil {
				return txn.LineError("fork", first+i+1, err)
			}
		}
		return nil
	})
	return taken, err
}

func (c forkControl) Run(x *Txn, _ any, lines *spill.Lines) ([]byte, error) {
	if c.s.v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	who := x.Caller
	var plans []newSession
	err := c.s.v.withFreshSession(c.s.project, c.s.name, func(ss *session) error {
		taken := map[string]bool{}
		return lines.Each(func(i int, l []byte) error {
			p, err := c.plan(who, ss, l, taken)
			if err != nil {
				return txn.LineError("fork", i+1, err)
			}
			plans = append(plans, p)
			return nil
		})
	})
	if err != nil {
		return nil, err
	}
	return c.s.v.create(who, plans)
}

// plan reads one fork line: an entry id or label (pi's /clone at that
// entry), an empty line (the whole session, pi's --fork), or
// {"from","cwd","id","name"}.
func (c forkControl) plan(who Caller, ss *session, line []byte, taken map[string]bool) (newSession, error) {
	req, err := tree.ParseForkLine(line)
	if err != nil {
		return newSession{}, err
	}
	// A copy in the same working directory goes next to its source, as
	// pi's clone does; one into another cwd where pi would create it.
	project, dir, cwd := c.s.project, filepath.Dir(ss.Path), ss.Tree.Header.Cwd
	if req.Cwd != "" {
		cwd = req.Cwd
		project, dir = c.s.v.placeFor(cwd)
	}
	if _, err := c.s.v.mayCreateIn(who, dir); err != nil {
		return newSession{}, err
	}
	id, err := c.s.v.sessionID(req.ID, taken)
	if err != nil {
		return newSession{}, err
	}
	ts := sessions.Now()
	var out [][]byte
	if req.From == "" {
		out = ss.Tree.ForkLines(id, ts, cwd, ss.Path)
	} else {
		at, ok := ss.Tree.ResolveShown(nil, req.From)
		if !ok {
			return newSession{}, refuse(ErrNotFound, `no entry or label %q; write an entry id (ls entries/), a label (ls labels/), or an empty line to copy the whole session`, req.From)
		}
		if out, err = ss.Tree.BranchedLines(at, id, ts, cwd, ss.Path); err != nil {
			return newSession{}, err
		}
	}
	if req.HasName {
		if out, err = tree.WithName(out, req.Name); err != nil {
			return newSession{}, err
		}
	}
	return newSession{project, dir, sessions.FileName(ts, id), out}, nil
}

// newControl is new: each line creates an empty session, in a project or,
// at the root, for any working directory.
type newControl struct {
	inProject // "" at the root
}

func (c newControl) Name() string { return newName }

func (c newControl) Refused(err error) {
	where := "new"
	if c.project != "" {
		where = c.project + "/new"
	}
	c.v.log.Warn(fmt.Sprintf("%s: write refused: %v", where, err))
}

// Check plans the new lines, after the transaction's earlier ones,
// creating nothing.
func (c newControl) Check(x *Txn, state any, first int, lines [][]byte) (any, error) {
	who := x.Caller
	if c.v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	taken, _ := state.(map[string]bool)
	if taken == nil {
		taken = map[string]bool{}
	}
	for i, l := range lines {
		if _, err := c.plan(who, l, taken); err != nil {
			return nil, txn.LineError("new", first+i+1, err)
		}
	}
	return taken, nil
}

func (c newControl) Run(x *Txn, _ any, lines *spill.Lines) ([]byte, error) {
	if c.v.opts.ReadOnly {
		return nil, ErrReadOnly
	}
	who := x.Caller
	var plans []newSession
	taken := map[string]bool{}
	err := lines.Each(func(i int, l []byte) error {
		p, err := c.plan(who, l, taken)
		if err != nil {
			return txn.LineError("new", i+1, err)
		}
		plans = append(plans, p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return c.v.create(who, plans)
}

func (c newControl) plan(who Caller, line []byte, taken map[string]bool) (newSession, error) {
	so, err := tree.ParseNewLine(line, c.project != "")
	if err != nil {
		return newSession{}, err
	}
	if c.project != "" {
		cwd, err := c.v.projectCwd(c.project, nil)
		if err != nil {
			return newSession{}, err
		}
		if cwd == "" {
			return newSession{}, refuse(ErrInvalid, `no session of this project names its working directory; write the directory to the new file at the mount root instead`)
		}
		so.Cwd = cwd
	}
	project, dir := c.v.placeFor(so.Cwd)
	if c.project != "" {
		project = c.project
		if folder, ok := c.v.x.ProjectFolder(c.project); ok && !c.v.opts.Flat {
			dir = folder
		}
	}
	if _, err := c.v.mayCreateIn(who, dir); err != nil {
		return newSession{}, err
	}
	id, err := c.v.sessionID(so.ID, taken)
	if err != nil {
		return newSession{}, err
	}
	ts := sessions.Now()
	lines := [][]byte{sessions.HeaderLine(id, ts, so.Cwd, "")}
	if so.HasName {
		if lines, err = tree.WithName(lines, so.Name); err != nil {
			return newSession{}, err
		}
	}
	return newSession{project, dir, sessions.FileName(ts, id), lines}, nil
}

var (
	_ control = forkControl{}
	_ control = newControl{}
)

// newFile is the control that creates sessions: in a project, or at the
// root for any working directory. Reading the same open file after a write
// gives the new sessions' paths.
type newFile struct {
	inProject // "" at the root
}

func newNewFile(v *View, project string) *newFile { return &newFile{inProject{v, project}} }

func (f *newFile) control() control { return newControl{f.inProject} }

func (f *newFile) content() ([]byte, time.Time, error) {
	if f.project == "" {
		mt, err := dirMtime(f.v.opts.SessionsDir)
		return nil, mt, err
	}
	mt, err := f.v.projectMtime(f.project)
	return nil, mt, err
}
