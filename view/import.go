package view

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"strings"
	"sync"
	"syscall"
	"time"

	"github.com/pifs/pifs/internal/access"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/sessions"
)

// Import: creating NAME.jsonl in a project folder (cp x.jsonl
// MOUNT/<project>/) stores the file as pi's /import does: at close it is
// checked as pi would open it and renamed into the project's folder as
// NAME.jsonl, or NAME-1.jsonl… when that is taken (see
// sessions.Index.ImportFile). What is written goes straight to a hidden
// temporary file next to where the session will be, never into memory; a
// file pi could not open, or whose session id is in the store already, is
// refused whole at close (EINVAL, EEXIST), with the reason in the log and
// in the project's errors file, and the temporary file is removed: nothing
// is left. The name NAME.jsonl itself never shows in the folder: the
// session shows as the folder NAME (or NAME-1…).

// Import is one file being copied into a project folder.
type Import struct {
	v       *View
	project string
	name    string
	caller  Caller

	mu   sync.Mutex
	tmp  *os.File
	size int64
	// done tells that the import was stored or refused (err) at a close;
	// path is where it was stored.
	done bool
	err  error
	path string
}

// Import starts an import of name into folder f for caller c: nil, with no
// error, when f takes no imports (only a project folder does, and only
// files named NAME.jsonl), so that the caller refuses the create as it
// would any other.
func (v *View) Import(f Folder, name string, c Caller) (*Import, Child, error) {
	d, ok := f.(*projectDir)
	if !ok || v.opts.ReadOnly || !strings.HasSuffix(name, ".jsonl") {
		return nil, Child{}, nil
	}
	fail := func(err error) (*Import, Child, error) {
		v.refused.Add(projectErrorsKey(d.project), err.Error())
		v.log.Warn(fmt.Sprintf("%s: import refused: %v", d.project, err))
		return nil, Child{}, err
	}
	if stem := strings.TrimSuffix(name, ".jsonl"); stem == "" || strings.HasPrefix(name, ".") {
		return fail(refuse(ErrInvalid, "import %s: pi lists only files named NAME.jsonl, and no hidden ones", name))
	} else if !validSessionName(stem) {
		return fail(refuse(ErrInvalid, "import %s: a project folder's own file is named %s, so the session would not show; copy it under another name", name, stem))
	}
	x := v.x
	dir := x.Dir()
	if p, ok := x.ProjectFolder(d.project); ok && !v.opts.Flat {
		dir = p
	}
	if err := access.MayChangeIn(c, dir, ""); err != nil {
		return fail(err)
	}
	tmp, err := x.ImportTemp(v.opts.Flat, d.project)
	if err != nil {
		return fail(fmt.Errorf("import %s: %w", name, err))
	}
	if err := sessions.ChownImport(tmp, c.Uid, c.Gid); err != nil {
		tmp.Close()
		os.Remove(tmp.Name())
		return fail(fmt.Errorf("import %s: %w", name, err))
	}
	im := &Import{v: v, project: d.project, name: name, caller: c, tmp: tmp}
	ino := names.Ino("p", d.project, "import", tmp.Name())
	return im, Child{name, syscall.S_IFREG, ino, func() Node { return &importFile{inProject{v, d.project}, im} }}, nil
}

// WriteAt writes data at off of the file being imported.
func (im *Import) WriteAt(data []byte, off int64) (int, error) {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.done {
		return 0, refuse(ErrInvalid, "import %s: the file was stored or refused at its first close; copy it again", im.name)
	}
	n, err := im.tmp.WriteAt(data, off)
	im.size = max(im.size, off+int64(n))
	return n, err
}

// Size is how much was written.
func (im *Import) Size() int64 {
	im.mu.Lock()
	defer im.mu.Unlock()
	return im.size
}

// Flush stores the import at its first close (a later close says the
// same): checked, renamed into place, or refused and removed.
func (im *Import) Flush() error {
	im.mu.Lock()
	defer im.mu.Unlock()
	if im.done {
		return im.err
	}
	im.done = true
	v := im.v
	err := im.tmp.Close()
	if err == nil {
		im.path, err = v.x.ImportFile(v.opts.Flat, im.project, im.name, im.tmp.Name())
	}
	if err != nil {
		os.Remove(im.tmp.Name())
		im.err = importRefusal(im.name, err)
		v.refused.Add(projectErrorsKey(im.project), im.err.Error())
		v.log.Warn(fmt.Sprintf("%s: import refused: %v", im.project, im.err))
	} else {
		v.log.Info(fmt.Sprintf("%s: imported %s as %s", im.project, im.name, im.path))
		v.update(im.path)
	}
	// The name written to never shows in the folder: the kernel forgets
	// it, and sees the new session folder.
	v.out.putNotices(Notice{[]string{im.project, im.name}, Forget})
	v.settle()
	return im.err
}

// importRefusal is why an import was refused, with the errno it gives.
func importRefusal(name string, err error) error {
	switch {
	case errors.Is(err, sessions.ErrDuplicate):
		return refuse(ErrExists, "import %s: refused, nothing stored: %v", name, err)
	case errors.Is(err, sessions.ErrNotSession), errors.Is(err, sessions.ErrImportName), errors.Is(err, sessions.ErrOtherProject),
		errors.Is(err, fs.ErrNotExist):
		return refuse(ErrInvalid, "import %s: refused, nothing stored: %v", name, err)
	}
	return fmt.Errorf("import %s: nothing stored: %w", name, err)
}

// Release ends the import: a file never closed (the writer was killed
// before its close reached pifs) is removed.
func (im *Import) Release() {
	im.mu.Lock()
	defer im.mu.Unlock()
	if !im.done {
		im.done = true
		im.err = refuse(ErrInvalid, "import %s: never closed", im.name)
		im.tmp.Close()
		os.Remove(im.tmp.Name())
	}
}

// importFile is the file an import writes to, while it is open.
type importFile struct {
	inProject
	im *Import
}

func (f *importFile) content() ([]byte, time.Time, error) { return nil, time.Now(), nil }

func (f *importFile) size() (int64, time.Time, error) { return f.im.Size(), time.Now(), nil }
