package nodes

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// The node types: one for each kind of value the view gives (a folder, a
// file, a symlink, a file served from the store's file), each serving any
// value of its kind through the view, so that Lookup, Readdir, Getattr,
// Open and the refusals of writes are written once.

// newNode makes the node that serves a view value.
func (r *Root) newNode(n view.Node) fs.InodeEmbedder {
	switch n := n.(type) {
	case view.Folder:
		return &dir{r: r, f: n}
	case view.Link:
		return &link{r: r, l: n}
	case view.Raw:
		return &rawFile{r: r, f: n}
	case view.Streamer:
		return &streamFile{r: r, f: n}
	case view.File:
		return &file{r: r, f: n, kept: view.Kept(n)}
	}
	panic("nodes: a view value of no kind")
}

// setAttr copies what the view says of a node into out.
func setAttr(out *fuse.Attr, a view.Attr) {
	out.Mode = a.Mode
	out.Size = a.Size
	out.Blocks = (a.Size + 511) / 512
	// A view is direct I/O: each read(2) is a READ round trip. st_blksize
	// is what one READ carries (max_read, go-fuse's 128 KiB), for readers
	// that size their reads by it: glibc's stdio (sed, jq) takes it up to
	// its BUFSIZ, 8 KiB, where a page would halve its reads' size.
	out.Blksize = 128 << 10
	out.Nlink = 1
	if a.Mode&syscall.S_IFMT == syscall.S_IFDIR {
		out.Nlink = 2
	}
	out.Owner = fuse.Owner{Uid: a.Uid, Gid: a.Gid}
	out.SetTimes(&a.Mtime, &a.Mtime, &a.Mtime)
}

// attr fills out with n's attributes; o, when not nil, is its owner,
// found once for a listing.
func (r *Root) attr(n view.Node, o *view.Owner, out *fuse.Attr) syscall.Errno {
	a, err := r.v.Attr(n, o)
	if err != nil {
		return r.errno(err)
	}
	setAttr(out, a)
	return 0
}

// caller is who sends a request.
func caller(ctx context.Context) view.Caller {
	c, ok := fuse.FromContext(ctx)
	if !ok || c == nil {
		return view.Caller{}
	}
	return view.Caller{Pid: c.Pid, Uid: c.Uid, Gid: c.Gid}
}

// dir is a folder.
type dir struct {
	fs.Inode
	r *Root
	f view.Folder
	// alone: its last listing gave its files by name alone (see
	// view.ListsNamesOnly), so a lookup of one of them says the walk stats
	// them.
	alone atomic.Bool
}

var (
	_ = (fs.NodeLookuper)((*dir)(nil))
	_ = (fs.NodeReaddirer)((*dir)(nil))
	_ = (fs.NodeGetattrer)((*dir)(nil))
	_ = (fs.NodeSetattrer)((*dir)(nil))
	_ = (fs.NodeMkdirer)((*dir)(nil))
	_ = (fs.NodeMknoder)((*dir)(nil))
	_ = (fs.NodeCreater)((*dir)(nil))
	_ = (fs.NodeUnlinker)((*dir)(nil))
	_ = (fs.NodeRmdirer)((*dir)(nil))
	_ = (fs.NodeRenamer)((*dir)(nil))
	_ = (fs.NodeSymlinker)((*dir)(nil))
	_ = (fs.NodeLinker)((*dir)(nil))
)

// resolve finds a child by name without the kernel, as Lookup would: the
// notices use it to tell which names went away.
func (d *dir) resolve(name string) (uint64, bool) {
	c, err := d.r.v.Lookup(d.f, name)
	if err != nil {
		return 0, false
	}
	return c.Ino, true
}

func (d *dir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if d.r.v.PerCaller(d.f) {
		out.SetTimeout(AttrNever) // another caller, or a listing since changed
	}
	return d.r.attr(d.f, nil, &out.Attr)
}

func (d *dir) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (d *dir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, err := d.r.v.LookupFor(d.f, name, caller(ctx))
	if err != nil {
		return nil, d.r.errno(err)
	}
	n := c.Node()
	if d.alone.Load() && c.Mode&syscall.S_IFMT == syscall.S_IFREG && !view.Costly(n) {
		d.r.v.LookedUpNameOnly()
	}
	in, errno := d.newInode(ctx, c, n, nil, out)
	d.r.forCaller(n, out)
	return in, errno
}

// newInode makes the inode of a child that Lookup (or a Symlink that
// creates it) hands the kernel, with its attributes filled in; o, when not
// nil, is its owner.
func (d *dir) newInode(ctx context.Context, c view.Child, n view.Node, o *view.Owner, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := d.r.attr(n, o, &out.Attr); errno != 0 {
		return nil, errno
	}
	out.Attr.Ino = c.Ino
	if _, ok := n.(view.Streamer); ok {
		out.SetAttrTimeout(AttrNever)
	}
	return d.NewInode(ctx, d.r.newNode(n), fs.StableAttr{Mode: c.Mode, Ino: c.Ino}), 0
}

// OpendirHandle opens a folder. The kernel keeps what a listing gave
// (FOPEN_CACHE_DIR) until the notices say the folder changed (Refresh or
// Attrs of it, or Forget of a name in it), so a listing repeated costs one
// OPENDIR, and the handle lists the folder only when the kernel reads it;
// it then answers the lookups of READDIRPLUS itself, from the children it
// listed (see dirHandle.Lookup).
func (d *dir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	h := &dirHandle{d: d, caller: caller(ctx)}
	if d.r.v.ListsPerCaller(d.f) {
		return h, 0, 0 // another caller may be shown another listing
	}
	return h, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// dirHandle is an open folder: its entries as listed at the first read.
type dirHandle struct {
	d      *dir
	caller view.Caller // who opened it
	mu     sync.Mutex
	// dots and kids are the listing: "." and "..", then the children
	// sorted by name (see entry).
	dots   [2]fuse.DirEntry
	kids   []view.Child
	listed bool
	// alone: the listing gives files by name alone (see
	// view.ListsNamesOnly); many: it gives every name alone (see
	// view.ManyNames); withheld: it did give one so.
	alone, many, withheld bool
	pos                   int
	ends                  int // reads that found the end
	// de is the entry Readdirent gives last: go-fuse copies it before
	// asking for the next.
	de fuse.DirEntry
	// gen is the store's count of changes when the listing was made.
	gen uint64
	// scope and owner are the owner of the folder's scope, once found:
	// the owner of its children of the same scope.
	scope view.Scope
	owner *view.Owner
}

var (
	_ = (fs.NodeOpendirHandler)((*dir)(nil))
	_ = (fs.FileReaddirenter)((*dirHandle)(nil))
	_ = (fs.FileSeekdirer)((*dirHandle)(nil))
	_ = (fs.FileLookuper)((*dirHandle)(nil))
	_ = (fs.FileReleasedirer)((*dirHandle)(nil))
)

// list lists the folder once per open. h.mu is held.
func (h *dirHandle) list() syscall.Errno {
	if h.listed {
		return 0
	}
	h.gen = h.d.r.v.Changed()
	kids, err := h.d.r.v.ListFor(h.d.f, h.caller)
	if err != nil {
		return h.d.r.errno(err)
	}
	h.dots, h.kids, h.listed = h.d.dots(), kids, true
	h.alone = h.d.r.v.ListsNamesOnly(h.d.f)
	h.many = h.d.r.v.ManyNames(len(kids))
	h.d.alone.Store(h.alone)
	return 0
}

// child is the listed child of a name, with the owner its folder's scope
// gives, while the store is as it was when listed: READDIRPLUS looks up
// each name just after reading it, and a listing of N names then costs one
// listing, not N lookups more (the lookup of a name in branches/<id>/ or
// entries/ finds its entry again, and the owner of a project's folder
// takes a stat).
func (h *dirHandle) child(name string) (view.Child, *view.Owner, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.listed || h.d.r.v.Changed() != h.gen {
		return view.Child{}, nil, false
	}
	i := h.pos - 3 // the entry read last, past "." and ".."
	if i < 0 || i >= len(h.kids) || h.kids[i].Name != name {
		var found bool
		i, found = slices.BinarySearchFunc(h.kids, name, func(c view.Child, name string) int { return strings.Compare(c.Name, name) })
		if !found {
			return view.Child{}, nil, false
		}
	}
	if h.owner == nil {
		h.scope = view.ScopeOf(h.d.f)
		o := h.d.r.v.Owner(h.scope)
		h.owner = &o
	}
	return h.kids[i], h.owner, true
}

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if errno := h.list(); errno != 0 {
		return nil, errno
	}
	if h.pos >= len(h.kids)+2 {
		// The end is met twice: while the last names are sent, and when
		// the kernel asks for more and is told there is none, after it
		// took in those names. Only then does it keep the listing.
		h.ends++
		if h.withheld && h.ends >= 2 {
			// The kernel would keep the listing without attributes, and
			// a later `ls -l` would look up every name: the next listing
			// is asked of the mount again.
			h.withheld = false
			h.d.r.putStale(h.d.EmbeddedInode())
		}
		return nil, 0
	}
	h.de = h.entry(h.pos)
	h.pos++
	return &h.de, 0
}

// Releasedir closes the folder. When the store changed while the listing
// was made and read, the kernel may have kept a listing older than the
// change's notice: it is told again.
func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listed && h.d.r.v.Changed() != h.gen {
		h.d.r.putStale(h.d.EmbeddedInode())
	}
}

// Seekdir goes to an offset Readdirent's entries were given: the number of
// entries before it.
func (h *dirHandle) Seekdir(ctx context.Context, off uint64) syscall.Errno {
	h.mu.Lock()
	defer h.mu.Unlock()
	if errno := h.list(); errno != 0 {
		return errno
	}
	h.pos = int(min(off, uint64(len(h.kids)+2)))
	return 0
}

// Lookup answers READDIRPLUS for one name: as a lookup, but for a costly
// file, whose name goes to the kernel without attributes unless its size
// is known.
func (h *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, n, errno := h.lookup(name, out)
	if errno != 0 {
		return nil, errno
	}
	return h.d.NewInode(ctx, h.d.r.newNode(n), fs.StableAttr{Mode: c.Mode, Ino: c.Ino}), 0
}

// lookup is Lookup but for the inode: the child of a name and its value,
// with its attributes filled in.
func (h *dirHandle) lookup(name string, out *fuse.EntryOut) (view.Child, view.Node, syscall.Errno) {
	c, owner, ok := h.child(name)
	if !ok {
		var err error
		if c, err = h.d.r.v.LookupFor(h.d.f, name, h.caller); err != nil {
			return c, nil, h.d.r.errno(err)
		}
	}
	if h.withhold(c) {
		return c, nil, syscall.ENOENT // the kernel keeps the plain name
	}
	n := c.Node()
	if owner != nil && view.ScopeOf(n) != h.scope {
		owner = nil // its own scope's
	}
	if view.Costly(n) {
		a, ok := h.d.r.v.KnownAttr(n, owner)
		if !ok {
			return c, nil, syscall.ENOENT // the kernel keeps the plain name
		}
		setAttr(&out.Attr, a)
	} else if errno := h.d.r.attr(n, owner, &out.Attr); errno != 0 {
		return c, n, errno
	}
	if _, ok := n.(view.Streamer); ok {
		out.SetAttrTimeout(AttrNever)
	}
	out.Attr.Ino = c.Ino
	h.d.r.forCaller(n, out)
	return c, n, 0
}

// withhold tells whether c, a name of the listing, goes to the kernel
// without attributes: because the folder has more names than the budget
// holds nodes for (see view.ManyNames), or because a walk is listing (see
// view.ListsNamesOnly).
func (h *dirHandle) withhold(c view.Child) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.many {
		h.withheld = true
		return true
	}
	if !h.alone || c.Mode&syscall.S_IFMT != syscall.S_IFREG {
		return false
	}
	h.withheld = true
	h.d.r.v.ListedNamesOnly()
	return true
}

func (d *dir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	kids, err := d.r.v.ListFor(d.f, caller(ctx))
	if err != nil {
		return nil, d.r.errno(err)
	}
	dots := d.dots()
	out := make([]fuse.DirEntry, 0, len(kids)+2)
	out = append(out, dots[:]...)
	for _, c := range kids {
		out = append(out, dirEntry(c))
	}
	return fs.NewListDirStream(out), 0
}

// dots are the listing's "." and "..", which go-fuse leaves to the file
// system.
func (d *dir) dots() [2]fuse.DirEntry {
	up := d.StableAttr().Ino
	if _, p := d.Parent(); p != nil {
		up = p.StableAttr().Ino
	}
	return [2]fuse.DirEntry{{Name: ".", Mode: syscall.S_IFDIR, Ino: d.StableAttr().Ino},
		{Name: "..", Mode: syscall.S_IFDIR, Ino: up}}
}

func dirEntry(c view.Child) fuse.DirEntry {
	return fuse.DirEntry{Name: c.Name, Mode: c.Mode, Ino: c.Ino}
}

// entry is the listing's i-th name: ".", "..", then the children sorted
// by name, made as it is read rather than kept beside the children.
func (h *dirHandle) entry(i int) fuse.DirEntry {
	if i < 2 {
		return h.dots[i]
	}
	return dirEntry(h.kids[i-2])
}

func (d *dir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (d *dir) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (d *dir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if n, fh, errno, ok := d.importFile(ctx, name, out); ok {
		return n, fh, fuse.FOPEN_DIRECT_IO, errno
	}
	return nil, nil, 0, d.r.errno(d.r.v.Create(d.f, name, caller(ctx)))
}

func (d *dir) Unlink(ctx context.Context, name string) syscall.Errno {
	return d.r.errno(d.r.v.Unlink(d.f, name, caller(ctx)))
}

func (d *dir) Rmdir(ctx context.Context, name string) syscall.Errno {
	return d.r.errno(d.r.v.Rmdir(d.f, name, caller(ctx)))
}

func (d *dir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return d.rename(ctx, name, newParent, newName, flags)
}

func (d *dir) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, err := d.r.v.Symlink(d.f, target, name, caller(ctx))
	if err != nil {
		return nil, d.r.errno(err)
	}
	return d.newInode(ctx, c, c.Node(), nil, out)
}

func (d *dir) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// file is a file whose content is computed. Changing files are served
// with direct I/O, so a read never stops at a size the kernel cached
// earlier; entry files never change and keep the page cache.
type file struct {
	fs.Inode
	r    *Root
	f    view.File
	kept bool
}

var (
	_ = (fs.NodeGetattrer)((*file)(nil))
	_ = (fs.NodeSetattrer)((*file)(nil))
	_ = (fs.NodeOpener)((*file)(nil))
	_ = (fs.NodeReader)((*file)(nil))
)

func (f *file) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if errno := f.r.attr(f.f, nil, &out.Attr); errno != 0 {
		return openAttr(fh, errno, &out.Attr)
	}
	if h, ok := fh.(*growing); ok {
		// fstat of a followed file: the size it has grown to.
		out.Attr.Size = uint64(h.g.Size())
		out.Attr.Blocks = (out.Attr.Size + 511) / 512
	}
	return 0
}

// Setattr accepts on a control what opening it with O_TRUNC asks
// (`echo x > leaf` works like `>>`) and what touch asks; anything else is
// refused.
func (f *file) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !f.r.v.Writable(f.f) {
		return f.r.errno(view.ErrReadOnly)
	}
	_, mode := in.GetMode()
	_, uid := in.GetUID()
	_, gid := in.GetGID()
	if mode || uid || gid {
		return f.r.errno(view.ErrNotPermitted)
	}
	if size, ok := in.GetSize(); ok && size != 0 {
		return f.r.errno(view.ErrInvalid)
	}
	return f.r.attr(f.f, nil, &out.Attr)
}

// wantsWrite tells whether open flags ask for writing.
func wantsWrite(flags uint32) bool {
	return flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&(syscall.O_TRUNC|syscall.O_APPEND) != 0
}

func (f *file) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		t, err := f.r.v.Write(f.f, caller(ctx))
		if err != nil {
			return nil, 0, f.r.errno(err)
		}
		// Direct I/O: every write(2) reaches the control as it was made,
		// and reads are never served from a stale cache.
		return &controlHandle{r: f.r, t: t}, fuse.FOPEN_DIRECT_IO, 0
	}
	g, err := f.r.v.Follow(f.f)
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	if g != nil {
		return &growing{g, f.r.v.Opened(f.f), &f.r.files.ViewReads}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
	}
	gen := f.r.v.Changed()
	data, a, err := f.r.v.Snapshot(f.f)
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	if f.kept {
		return &keptSnapshot{snapshot{data, a, &f.r.files.ViewReads}, f.r, f.EmbeddedInode(), gen}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
	}
	// Read only: a close needs no FLUSH round trip (tar closes 90,000).
	return &snapshot{data, a, &f.r.files.ViewReads}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

// keptSnapshot is an open file whose pages the kernel keeps (an entry
// file). When the store changed while it was read, the pages may be older
// than the change's notice: the kernel is told again at release.
type keptSnapshot struct {
	snapshot
	r   *Root
	n   *fs.Inode
	gen uint64
}

var _ = (fs.FileReleaser)((*keptSnapshot)(nil))

func (k *keptSnapshot) Release(ctx context.Context) syscall.Errno {
	if k.r.v.Changed() != k.gen {
		k.r.putStale(k.n)
	}
	return 0
}

func (f *file) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if r, ok := fh.(fs.FileReader); ok {
		return r.Read(ctx, dest, off)
	}
	data, err := f.r.v.Content(f.f)
	if err != nil {
		return nil, f.r.errno(err)
	}
	return (&snapshot{data: data, reads: &f.r.files.ViewReads}).Read(ctx, dest, off)
}

// snapshot is an open file's content as it was at open, so that a reader
// sees one version even while the session changes, and its attributes
// then (see openAttr); reads counts the reads that reached it.
type snapshot struct {
	data  []byte
	attr  view.Attr
	reads *atomic.Int64
}

var _ = (fs.FileReader)((*snapshot)(nil))

func (s *snapshot) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	s.reads.Add(1)
	return fuse.ReadResultData(view.Window(s.data, off, len(dest))), 0
}

// growing is an open file that follows its session (tail -f), its
// attributes when opened (see openAttr) and the count of reads.
type growing struct {
	g     *view.Growing
	attr  view.Attr
	reads *atomic.Int64
}

var _ = (fs.FileReader)((*growing)(nil))

func (h *growing) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.reads.Add(1)
	return fuse.ReadResultData(h.g.Read(off, len(dest))), 0
}

// link is a symlink whose target is computed.
type link struct {
	fs.Inode
	r *Root
	l view.Link
}

var (
	_ = (fs.NodeGetattrer)((*link)(nil))
	_ = (fs.NodeReadlinker)((*link)(nil))
	_ = (fs.NodeSetattrer)((*link)(nil))
)

func (l *link) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	return l.r.attr(l.l, nil, &out.Attr)
}

func (l *link) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (l *link) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, err := l.r.v.Target(l.l)
	if err != nil {
		return nil, l.r.errno(err)
	}
	return []byte(t), 0
}
