package nodes

import (
	"context"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// This file holds what every folder, file and symlink of the mount shares.
// Each kind of node is its own type that embeds one of dir, file or link and
// gives it its content through a small interface (dirSource, fileSource,
// linkSource), so that Lookup, Readdir, Getattr and the refusals of writes
// are written once.

// child is one name in a folder: what it is, its inode number, and how to
// make its node.
type child struct {
	name string
	mode uint32 // S_IFDIR, S_IFREG or S_IFLNK
	ino  uint64
	make func() fs.InodeEmbedder
}

// dirSource gives a folder its children.
type dirSource interface {
	// list returns the children; the order does not matter.
	list() ([]child, error)
	// lookup finds one child by name (view.ErrNotFound when there is none).
	lookup(name string) (child, error)
	// mtime is the folder's modification time.
	mtime() (time.Time, error)
}

// attrFiller fills the attributes of a node, for Getattr and Lookup.
type attrFiller interface {
	fillAttr(out *fuse.Attr) error
}

// dir is a read-only folder.
type dir struct {
	fs.Inode
	r   *Root
	src dirSource
	// alone: its last listing gave its files by name alone (see
	// walkGuess), so a lookup of one of them says the walk stats them.
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

func (d *dir) fillAttr(out *fuse.Attr) error {
	mt, err := d.src.mtime()
	if err != nil {
		return err
	}
	d.r.fill(out, syscall.S_IFDIR|0o555, 0, mt)
	out.Nlink = 2
	return nil
}

// resolve finds a child by name without the kernel, as Lookup would: the
// watcher uses it to tell which names went away.
func (d *dir) resolve(name string) (uint64, bool) {
	c, err := d.lookup(name)
	if err != nil {
		return 0, false
	}
	return c.ino, true
}

func (d *dir) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if err := d.fillAttr(&out.Attr); err != nil {
		return d.r.errno(err)
	}
	n := d.EmbeddedInode()
	own(&out.Attr, d.r.ownerFor(n.Operations(), parentOf(n)))
	return 0
}

func (d *dir) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

// lookup finds a child by name, from the folder's source.
func (d *dir) lookup(name string) (child, error) {
	d.r.lookups.Add(1)
	return d.src.lookup(name)
}

func (d *dir) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, err := d.lookup(name)
	if err != nil {
		return nil, d.r.errno(err)
	}
	node := c.make()
	if d.alone.Load() && c.mode&syscall.S_IFMT == syscall.S_IFREG {
		if _, ok := node.(costly); !ok {
			d.r.walk.lookedUp(time.Now())
		}
	}
	return d.newInode(ctx, c, node, out)
}

// newChild makes the inode of a child that Lookup (or a Symlink that
// creates it) hands the kernel, with its attributes filled in.
func (d *dir) newChild(ctx context.Context, c child, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return d.newInode(ctx, c, c.make(), out)
}

func (d *dir) newInode(ctx context.Context, c child, node fs.InodeEmbedder, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	if errno := d.fill(c, node, nil, out); errno != 0 {
		return nil, errno
	}
	return d.NewInode(ctx, node, fs.StableAttr{Mode: c.mode, Ino: c.ino}), 0
}

// fill fills in the attributes of child c, whose node is made. inherited,
// when not nil, is the owner the folder passes on to its children (see
// ownerFor), found once for a listing.
func (d *dir) fill(c child, node fs.InodeEmbedder, inherited *owner, out *fuse.EntryOut) syscall.Errno {
	if a, ok := node.(attrFiller); ok {
		if err := a.fillAttr(&out.Attr); err != nil {
			return d.r.errno(err)
		}
		d.own(node, inherited, out)
	}
	out.Attr.Ino = c.ino
	return 0
}

// own sets the owner of a child whose other attributes are filled in.
func (d *dir) own(node fs.InodeEmbedder, inherited *owner, out *fuse.EntryOut) {
	o, ok := ownOwner(node)
	if !ok && inherited != nil {
		o = *inherited
	} else if !ok {
		o = d.r.inheritedOwner(d.EmbeddedInode())
	}
	own(&out.Attr, o)
}

// OpendirHandle opens a folder. The kernel keeps what a listing gave
// (FOPEN_CACHE_DIR) until the watcher says the folder changed (Apply's
// NotifyContent, or NotifyEntry of a name in it), so a listing repeated
// costs one OPENDIR, and the handle lists the folder only when the kernel
// reads it; it then answers the lookups of READDIRPLUS itself, from the
// children it listed (see costly and dirHandle.Lookup).
func (d *dir) OpendirHandle(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	return &dirHandle{d: d}, fuse.FOPEN_CACHE_DIR | fuse.FOPEN_KEEP_CACHE, 0
}

// dirHandle is an open folder: its entries as listed at the first read.
type dirHandle struct {
	d       *dir
	mu      sync.Mutex
	entries []fuse.DirEntry
	// kids are the children behind entries[2:], in the same order.
	kids   []child
	listed bool
	// alone: the listing gives files by name alone (see walkGuess);
	// withheld: it did give one so.
	alone, withheld bool
	pos             int
	ends            int // reads that found the end
	// gen is the index's count of changes when the listing was made.
	gen uint64
	// inherited is the owner the folder passes on, once found.
	inherited *owner
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
	h.gen = h.d.r.st.x.Changed()
	entries, kids, errno := h.d.entries()
	if errno != 0 {
		return errno
	}
	h.entries, h.kids, h.listed = entries, kids, true
	if f, ok := h.d.src.(entryFolder); ok {
		h.alone = h.d.r.walk.listing(f.session().key(), time.Now())
		h.d.alone.Store(h.alone)
	}
	return 0
}

// child is the listed child of a name, with the owner the folder passes
// on, while the store is as it was when listed: READDIRPLUS looks up each
// name just after reading it, and a listing of N names then costs one
// listing, not N lookups more (the lookup of a name in branches/<id>/ or
// entries/ finds its entry again, and the owner takes a stat).
func (h *dirHandle) child(name string) (child, *owner, bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.listed || h.d.r.st.x.Changed() != h.gen {
		return child{}, nil, false
	}
	i := h.pos - 3 // the entry read last, past "." and ".."
	if i < 0 || i >= len(h.kids) || h.kids[i].name != name {
		var found bool
		i, found = slices.BinarySearchFunc(h.kids, name, func(c child, name string) int { return strings.Compare(c.name, name) })
		if !found {
			return child{}, nil, false
		}
	}
	if h.inherited == nil {
		o := h.d.r.inheritedOwner(h.d.EmbeddedInode())
		h.inherited = &o
	}
	return h.kids[i], h.inherited, true
}

func (h *dirHandle) Readdirent(ctx context.Context) (*fuse.DirEntry, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if errno := h.list(); errno != 0 {
		return nil, errno
	}
	if h.pos >= len(h.entries) {
		// The end is met twice: while the last names are sent, and when
		// the kernel asks for more and is told there is none, after it
		// took in those names. Only then does it keep the listing.
		h.ends++
		if h.withheld && h.ends >= 2 {
			// The kernel would keep the listing without attributes, and
			// a later `ls -l` would look up every name: the next listing
			// is asked of the mount again.
			h.withheld = false
			h.d.r.st.out.putStale(h.d.EmbeddedInode())
		}
		return nil, 0
	}
	de := h.entries[h.pos]
	h.pos++
	return &de, 0
}

// Releasedir closes the folder. When the store changed while the listing
// was made and read, the kernel may have kept a listing older than the
// change's notification: it is told again.
func (h *dirHandle) Releasedir(ctx context.Context, flags uint32) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.listed && h.d.r.st.x.Changed() != h.gen {
		h.d.r.st.out.putStale(h.d.EmbeddedInode())
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
	h.pos = int(min(off, uint64(len(h.entries))))
	return 0
}

// Lookup answers READDIRPLUS for one name: as a lookup, but for a costly
// file, whose name goes to the kernel without attributes.
func (h *dirHandle) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	c, node, errno := h.lookup(name, out)
	if errno != 0 {
		return nil, errno
	}
	return h.d.NewInode(ctx, node, fs.StableAttr{Mode: c.mode, Ino: c.ino}), 0
}

// lookup is Lookup but for the inode: the child of a name and its node,
// with its attributes filled in.
func (h *dirHandle) lookup(name string, out *fuse.EntryOut) (child, fs.InodeEmbedder, syscall.Errno) {
	c, inherited, ok := h.child(name)
	if !ok {
		var err error
		if c, err = h.d.lookup(name); err != nil {
			return c, nil, h.d.r.errno(err)
		}
	}
	if h.withhold(c) {
		return c, nil, syscall.ENOENT // the kernel keeps the plain name
	}
	node := c.make()
	if _, ok := node.(costly); ok {
		if k, ok := node.(knownAttrFiller); !ok || !k.knownAttr(&out.Attr) {
			return c, nil, syscall.ENOENT // the kernel keeps the plain name
		}
		h.d.own(node, inherited, out)
		out.Attr.Ino = c.ino
		return c, node, 0
	}
	return c, node, h.d.fill(c, node, inherited, out)
}

// withhold tells whether c, a name of the listing, goes to the kernel
// without attributes because a walk is listing (see walkGuess).
func (h *dirHandle) withhold(c child) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if !h.alone || c.mode&syscall.S_IFMT != syscall.S_IFREG {
		return false
	}
	h.withheld = true
	h.d.r.walk.alone.Add(1)
	return true
}

func (d *dir) Readdir(ctx context.Context) (fs.DirStream, syscall.Errno) {
	entries, _, errno := d.entries()
	if errno != 0 {
		return nil, errno
	}
	return fs.NewListDirStream(entries), 0
}

// entries is the listing: ".", "..", then the children sorted by name,
// and the children behind it.
func (d *dir) entries() ([]fuse.DirEntry, []child, syscall.Errno) {
	d.r.listings.Add(1)
	list, err := d.src.list()
	if err != nil {
		return nil, nil, d.r.errno(err)
	}
	sortChildren(list)
	out := make([]fuse.DirEntry, 0, len(list)+2)
	// go-fuse leaves "." and ".." to the file system.
	up := d.StableAttr().Ino
	if _, p := d.Parent(); p != nil {
		up = p.StableAttr().Ino
	}
	out = append(out, fuse.DirEntry{Name: ".", Mode: syscall.S_IFDIR, Ino: d.StableAttr().Ino},
		fuse.DirEntry{Name: "..", Mode: syscall.S_IFDIR, Ino: up})
	kids := list[:0]
	for _, c := range list {
		if len(kids) > 0 && kids[len(kids)-1].name == c.name {
			continue // the first of a name wins, as in lookup
		}
		kids = append(kids, c)
		out = append(out, fuse.DirEntry{Name: c.name, Mode: c.mode, Ino: c.ino})
	}
	return out, kids, 0
}

// sortChildren sorts a listing by name; of children with one name, the
// first listed stays first. Names are almost always unique: the stable
// sort, which costs a few times more on a big folder, is taken only then.
func sortChildren(list []child) {
	byName := func(a, b child) int { return strings.Compare(a.name, b.name) }
	listed := slices.Clone(list)
	slices.SortFunc(list, byName)
	for i := 1; i < len(list); i++ {
		if list[i-1].name == list[i].name {
			copy(list, listed)
			slices.SortStableFunc(list, byName)
			return
		}
	}
}

func (d *dir) Mkdir(ctx context.Context, name string, mode uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (d *dir) Mknod(ctx context.Context, name string, mode uint32, dev uint32, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// Create is refused; in a session folder the refusal says what to do, for
// sed -i and editors that save a new file and rename it over a control.
func (d *dir) Create(ctx context.Context, name string, flags uint32, mode uint32, out *fuse.EntryOut) (*fs.Inode, fs.FileHandle, uint32, syscall.Errno) {
	if p, ok := d.src.(sessionPart); ok {
		p.session().refused(refuse(view.ErrReadOnly, "%s: no file can be created in a session folder (sed -i and some editors save a new file and rename it over the old one); write to the control itself, e.g. echo NEW > name", name))
	}
	return nil, nil, 0, syscall.EROFS
}

// Unlink and Rmdir are refused: the mount only reads, but for labels/. A
// refusal inside a session is remembered for its caller, so that the same
// process removing the whole folder (rm -rf) clears no label on its way.
func (d *dir) Unlink(ctx context.Context, name string) syscall.Errno {
	d.refuseRemoval(ctx)
	return syscall.EROFS
}

func (d *dir) Rmdir(ctx context.Context, name string) syscall.Errno {
	d.refuseRemoval(ctx)
	return syscall.EROFS
}

func (d *dir) refuseRemoval(ctx context.Context) {
	if p, ok := d.src.(sessionPart); ok {
		d.r.removals.refused(ctx, p.session())
	}
}

func (d *dir) Rename(ctx context.Context, name string, newParent fs.InodeEmbedder, newName string, flags uint32) syscall.Errno {
	return syscall.EROFS
}

func (d *dir) Symlink(ctx context.Context, target, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

func (d *dir) Link(ctx context.Context, target fs.InodeEmbedder, name string, out *fuse.EntryOut) (*fs.Inode, syscall.Errno) {
	return nil, syscall.EROFS
}

// fileSource gives a file its content: the whole of it, computed from the
// session's current version, and its mtime.
type fileSource interface {
	content() ([]byte, time.Time, error)
}

// sizer is a fileSource that knows its size without rendering it again.
type sizer interface {
	size() (int64, time.Time, error)
}

// costly is a file whose size takes parsing or rendering the session.
// READDIRPLUS looks up every name a listing gives; for these the listing
// gives the name alone (the kernel looks it up when someone asks), so that
// a walk renders nothing it does not open, unless its size was counted
// already (knownAttrFiller).
type costly interface {
	costly()
}

// knownSizer is a costly file that can tell a size counted already.
type knownSizer interface {
	knownSize() (int64, time.Time, bool)
}

// knownAttrFiller fills in a costly file's attributes when its size was
// counted already, and only then.
type knownAttrFiller interface {
	knownAttr(out *fuse.Attr) bool
}

func (f *file) knownAttr(out *fuse.Attr) bool {
	k, ok := f.src.(knownSizer)
	if !ok {
		return false
	}
	n, mt, ok := k.knownSize()
	if !ok {
		return false
	}
	f.r.fill(out, syscall.S_IFREG|f.perm(), uint64(n), mt)
	return true
}

// file is a read-only file whose content is computed. Changing files are
// served with direct I/O, so a read never stops at a size the kernel cached
// earlier; entry files never change and keep the page cache.
type file struct {
	fs.Inode
	r   *Root
	src fileSource
	// ctl carries out what is written to a control (nil for files that
	// are only read). Controls are writable (0644) unless the mount is
	// read-only.
	ctl       control
	immutable bool
}

var (
	_ = (fs.NodeGetattrer)((*file)(nil))
	_ = (fs.NodeSetattrer)((*file)(nil))
	_ = (fs.NodeOpener)((*file)(nil))
	_ = (fs.NodeReader)((*file)(nil))
)

func (f *file) perm() uint32 {
	if f.writable() {
		return 0o644
	}
	return 0o444
}

func (f *file) writable() bool { return f.ctl != nil && !f.r.opts.ReadOnly }

func (f *file) fillAttr(out *fuse.Attr) error {
	if sz, ok := f.src.(sizer); ok {
		n, mt, err := sz.size()
		if err != nil {
			return err
		}
		f.r.fill(out, syscall.S_IFREG|f.perm(), uint64(n), mt)
		return nil
	}
	data, mt, err := f.src.content()
	if err != nil {
		return err
	}
	f.r.fill(out, syscall.S_IFREG|f.perm(), uint64(len(data)), mt)
	return nil
}

func (f *file) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if err := f.fillAttr(&out.Attr); err != nil {
		return f.r.errno(err)
	}
	if h, ok := fh.(*growing); ok {
		// fstat of a followed file: the size it has grown to.
		out.Attr.Size = uint64(h.size())
		out.Attr.Blocks = (out.Attr.Size + 511) / 512
	}
	n := f.EmbeddedInode()
	own(&out.Attr, f.r.ownerFor(n.Operations(), parentOf(n)))
	return 0
}

// Setattr accepts on a control what opening it with O_TRUNC asks
// (`echo x > leaf` works like `>>`) and what touch asks; anything else is
// refused.
func (f *file) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	if !f.writable() {
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
	return f.r.errno(f.fillAttr(&out.Attr))
}

// wantsWrite tells whether open flags ask for writing.
func wantsWrite(flags uint32) bool {
	return flags&syscall.O_ACCMODE != syscall.O_RDONLY || flags&(syscall.O_TRUNC|syscall.O_APPEND) != 0
}

func (f *file) Open(ctx context.Context, flags uint32) (fs.FileHandle, uint32, syscall.Errno) {
	if wantsWrite(flags) {
		if !f.writable() {
			return nil, 0, f.r.errno(view.ErrReadOnly)
		}
		// Direct I/O: every write(2) reaches the control as it was made,
		// and reads are never served from a stale cache.
		return &controlHandle{f: f}, fuse.FOPEN_DIRECT_IO, 0
	}
	if g, ok := f.src.(grower); ok {
		data, state, err := g.start()
		if err != nil {
			return nil, 0, f.r.errno(err)
		}
		return &growing{src: g, data: data, state: state}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
	}
	gen := f.r.st.x.Changed()
	data, _, err := f.src.content()
	if err != nil {
		return nil, 0, f.r.errno(err)
	}
	if f.immutable {
		return &keptSnapshot{snapshot{data}, f.r, f.EmbeddedInode(), gen}, fuse.FOPEN_KEEP_CACHE | fuse.FOPEN_NOFLUSH, 0
	}
	// Read only: a close needs no FLUSH round trip (tar closes 90,000).
	return &snapshot{data}, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

// keptSnapshot is an open file whose pages the kernel keeps (an entry
// file). When the store changed while it was read, the pages may be older
// than the change's notification: the kernel is told again at release.
type keptSnapshot struct {
	snapshot
	r   *Root
	n   *fs.Inode
	gen uint64
}

var _ = (fs.FileReleaser)((*keptSnapshot)(nil))

func (k *keptSnapshot) Release(ctx context.Context) syscall.Errno {
	if k.r.st.x.Changed() != k.gen {
		k.r.st.out.putStale(k.n)
	}
	return 0
}

func (f *file) Read(ctx context.Context, fh fs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	switch h := fh.(type) {
	case *snapshot:
		return h.Read(ctx, dest, off)
	case *keptSnapshot:
		return h.Read(ctx, dest, off)
	case *growing:
		return h.Read(ctx, dest, off)
	case *controlHandle:
		return h.Read(ctx, dest, off)
	}
	data, _, err := f.src.content()
	if err != nil {
		return nil, f.r.errno(err)
	}
	return (&snapshot{data}).Read(ctx, dest, off)
}

// snapshot is an open file's content as it was at open, so that a reader
// sees one version even while the session changes.
type snapshot struct{ data []byte }

var _ = (fs.FileReader)((*snapshot)(nil))

func (s *snapshot) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if off >= int64(len(s.data)) {
		return fuse.ReadResultData(nil), 0
	}
	end := min(int64(len(s.data)), off+int64(len(dest)))
	return fuse.ReadResultData(s.data[off:end]), 0
}

// grower is a fileSource whose open file follows the session: a rendering
// that, while the session grows under it, grows by what the new entries
// add (tail -f). Where the new rendering does not extend the one served
// (the leaf moved elsewhere, the file was rewritten), the open file keeps
// its snapshot to the end, and a new open sees the new rendering.
type grower interface {
	fileSource
	// start gives the content at open and the state to extend it from.
	start() (data []byte, state any, err error)
	// extend gives the bytes the session's current version adds to what
	// state rendered (none when it adds nothing or is no extension).
	extend(state any) (more []byte, next any, err error)
}

// growing is an open file of a grower.
type growing struct {
	src grower

	mu    sync.Mutex
	data  []byte
	state any
}

var _ = (fs.FileReader)((*growing)(nil))

// grow adds what the session added since the last look. h.mu is held.
func (h *growing) grow() {
	more, next, err := h.src.extend(h.state)
	if err != nil || next == nil {
		return
	}
	h.state = next
	if len(more) > 0 {
		// A new array: earlier reads may still hold slices of the old.
		h.data = append(h.data[:len(h.data):len(h.data)], more...)
	}
}

func (h *growing) size() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.grow()
	return len(h.data)
}

func (h *growing) Read(ctx context.Context, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	h.mu.Lock()
	defer h.mu.Unlock()
	if off+int64(len(dest)) > int64(len(h.data)) {
		h.grow()
	}
	return (&snapshot{h.data}).Read(ctx, dest, off)
}

// linkSource gives a symlink its target.
type linkSource interface {
	target() (string, time.Time, error)
}

// link is a symlink whose target is computed.
type link struct {
	fs.Inode
	r   *Root
	src linkSource
}

var (
	_ = (fs.NodeGetattrer)((*link)(nil))
	_ = (fs.NodeReadlinker)((*link)(nil))
	_ = (fs.NodeSetattrer)((*link)(nil))
)

func (l *link) fillAttr(out *fuse.Attr) error {
	t, mt, err := l.src.target()
	if err != nil {
		return err
	}
	l.r.fill(out, syscall.S_IFLNK|0o777, uint64(len(t)), mt)
	return nil
}

func (l *link) Getattr(ctx context.Context, fh fs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	if err := l.fillAttr(&out.Attr); err != nil {
		return l.r.errno(err)
	}
	n := l.EmbeddedInode()
	own(&out.Attr, l.r.ownerFor(n.Operations(), parentOf(n)))
	return 0
}

func (l *link) Setattr(ctx context.Context, fh fs.FileHandle, in *fuse.SetAttrIn, out *fuse.AttrOut) syscall.Errno {
	return syscall.EROFS
}

func (l *link) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	t, _, err := l.src.target()
	if err != nil {
		return nil, l.r.errno(err)
	}
	return []byte(t), 0
}
