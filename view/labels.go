package view

import (
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/tree"
)

// labelsDir is labels/: one symlink per label to the labelled entry. When
// two entries carry the same label, the one labelled last has the name.
type labelsDir struct{ inSession }

var (
	_ symlinker = (*labelsDir)(nil)
	_ unlinker  = (*labelsDir)(nil)
)

func newLabelsDir(s sessionRef) *labelsDir { return &labelsDir{inSession{s}} }

func (d *labelsDir) mtime() (time.Time, error) { return d.s.activity() }

func (d *labelsDir) list() ([]Child, error) {
	var out []Child
	err := d.s.with(func(ss *session) error {
		names, texts := ss.Tree.ShownLabels()
		for _, n := range names {
			out = append(out, d.label(ss, n, texts[n]))
		}
		return nil
	})
	return out, err
}

func (d *labelsDir) lookup(name string) (Child, error) {
	var c Child
	err := d.s.with(func(ss *session) error {
		_, texts := ss.Tree.ShownLabels()
		text, ok := texts[name]
		if !ok {
			return ErrNotFound
		}
		c = d.label(ss, name, text)
		return nil
	})
	return c, err
}

// label is the link of a label text. Its inode number includes the entry
// it points at, so that a label moved to another entry is a new link to
// the kernel, which keeps link targets.
func (d *labelsDir) label(ss *session, name, text string) Child {
	s := d.s
	to, _ := ss.Tree.LabelTarget(text)
	return Child{name, syscall.S_IFLNK, s.ino(labelsName, text, to), func() Node { return newLabelLink(s, text) }}
}

// Symlink labels an entry: `ln -s ID labels/NAME` (or a path ending in
// ID.json) gives the entry the label NAME spells (pi's /label).
func (d *labelsDir) symlink(target, name string, c Caller) (Child, error) {
	text, ok := names.Decode(name)
	if !ok {
		err := refuse(ErrInvalid, `labels: %q does not spell a label (%%, / and NUL are written %%25, %%2F and %%00); rename the link`, name)
		d.s.refused(err)
		return Child{}, err
	}
	if err := d.s.mayChange(c); err != nil {
		d.s.refused(err)
		return Child{}, err
	}
	err := d.s.change(func(ss *session, b *tree.Builder) error {
		id, ok := ss.Tree.ResolveShown(b, target)
		if !ok {
			return refuse(ErrNotFound, `labels: %s: no entry %q; link to an entry id (ls entries/) or a path ending in ID.json`, name, target)
		}
		_, err := b.Label(id, text)
		return err
	})
	if err != nil {
		d.s.refused(err)
		return Child{}, err
	}
	return d.lookup(name)
}

// Unlink clears a label: `rm labels/NAME` clears it on every entry that
// carries it, so that the name goes away.
func (d *labelsDir) unlink(name string, c Caller) error {
	if d.s.v.removals.removing(c, d.s.key()) {
		err := refuse(ErrReadOnly, `labels: %s: not cleared, as this process is removing the session folder (rm -r); the session is never removed through the mount, and a label is cleared with rm labels/NAME alone`, name)
		d.s.refused(err)
		return err
	}
	if err := d.s.mayChange(c); err != nil {
		d.s.refused(err)
		return err
	}
	err := d.s.change(func(ss *session, b *tree.Builder) error {
		_, texts := ss.Tree.ShownLabels()
		text, ok := texts[name]
		if !ok {
			return refuse(ErrNotFound, `labels: no label %q; ls labels/ shows the labels`, name)
		}
		for _, id := range ss.Tree.LabelOrder() {
			if l, _ := ss.Tree.Label(id); l.Text == text {
				if _, err := b.Label(id, ""); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err != nil {
		d.s.refused(err)
	}
	return err
}

// labelLink is labels/<label> -> ../entries/<id>.json.
type labelLink struct {
	inSession
	text string
}

func newLabelLink(s sessionRef, text string) *labelLink { return &labelLink{inSession{s}, text} }

func (l *labelLink) target() (string, time.Time, error) {
	var target string
	var mt time.Time
	err := l.s.with(func(ss *session) error {
		id, ok := ss.Tree.LabelTarget(l.text)
		if !ok {
			return ErrNotFound
		}
		lab, _ := ss.Tree.Label(id)
		target = "../" + entriesName + "/" + entryFileName(id)
		mt = tree.DateTime(lab.Timestamp)
		return nil
	})
	if err == nil && mt.IsZero() {
		mt, err = l.s.activity()
	}
	return target, mt, err
}
