package view

// What a folder does with the changes a user asks of it: the mount only
// reads, but for labels/ (ln -s, rm), and every other change is refused
// with EROFS (ErrReadOnly); a refusal inside a session says why in its
// errors file where the user may not know (an editor saving a new file).
//
// How `rm -rf` of a session folder changes nothing: it removes what it
// finds in listing order, so it is refused something else of the session
// (append comes first) before it reaches labels/. A label is cleared by
// unlinking it, unless the same process was refused removing anything else
// of that session in the last removalWindow.

// Create refuses a new file in f; in a session folder the refusal says
// what to do, for sed -i and editors that save a new file and rename it
// over a control.
func (v *View) Create(f Folder, name string, c Caller) error {
	if p, ok := f.(sessionPart); ok {
		p.session().refused(refuse(ErrReadOnly, "%s: no file can be created in a session folder (sed -i and some editors save a new file and rename it over the old one); write to the control itself, e.g. echo NEW > name", name))
	}
	return ErrReadOnly
}

// Symlink makes a symlink name -> target in f, where f takes one.
func (v *View) Symlink(f Folder, target, name string, c Caller) (Child, error) {
	if s, ok := f.(symlinker); ok {
		if inTrash(f) {
			return Child{}, v.refuseTrashed(f, labelsName+"/"+name)
		}
		return s.symlink(target, name, c)
	}
	return Child{}, ErrReadOnly
}

// Unlink removes name from f, where f takes it. A refusal inside a session
// is remembered for its caller, so that the same process removing the
// whole folder (rm -rf) clears no label on its way.
func (v *View) Unlink(f Folder, name string, c Caller) error {
	if u, ok := f.(unlinker); ok {
		if inTrash(f) {
			return v.refuseTrashed(f, labelsName+"/"+name)
		}
		return u.unlink(name, c)
	}
	v.refuseRemoval(f, c)
	return ErrReadOnly
}

// Rmdir refuses to remove a folder (see Unlink).
func (v *View) Rmdir(f Folder, name string, c Caller) error {
	v.refuseRemoval(f, c)
	if d, ok := f.(*projectDir); ok {
		if _, err := v.meta(d.project, name); err == nil {
			// rm -r ends here, after every file inside was refused.
			newSessionRef(v, d.project, name).refused(refuse(ErrReadOnly, "rm %s/%s: a session is never removed through the mount; to delete it, move it to the trash: mv MOUNT/%s/%s MOUNT/trash/ (mv MOUNT/trash/%s MOUNT/%s/ restores it)", d.project, name, d.project, name, name, d.project))
		}
	}
	return ErrReadOnly
}

func (v *View) refuseRemoval(f Folder, c Caller) {
	if p, ok := f.(sessionPart); ok {
		if s := p.session(); v.removals.refused(c, s.key()) && s.project != trashName {
			// Once per removal (rm -r): how a session is deleted.
			s.refused(refuse(ErrReadOnly, "rm: a session is never removed through the mount; to delete it, move it to the trash: mv MOUNT/%s/%s MOUNT/trash/ (mv MOUNT/trash/%s MOUNT/%s/ restores it)", s.project, s.name, s.name, s.project))
		}
	}
}
