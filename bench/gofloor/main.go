// Command gofloor serves a tree of names from memory through go-fuse,
// mounted with pifs's own options (fs.MountNodes), and does nothing else:
// the floor of a walk for a server built as pifs is, where bench/floor is
// the floor of any FUSE server. It reads the same manifest bench/floor
// reads (find -printf '%y\0%s\0%p\0%l\0' through a pifs mount); each folder
// is a node that makes its children's nodes when the kernel looks them up,
// as pifs's do, files are read with direct I/O (a pattern of the right
// length), links give their targets.
//
// Usage: gofloor MANIFEST MOUNTPOINT (unmount with fusermount3 -u)
package main

import (
	"bytes"
	"context"
	"fmt"
	"hash/fnv"
	"log"
	"log/slog"
	"os"
	"os/signal"
	"runtime/pprof"
	"slices"
	"strconv"
	"strings"
	"syscall"

	gofs "github.com/hanwen/go-fuse/v2/fs"
	"github.com/hanwen/go-fuse/v2/fuse"
	pifs "github.com/pifs/pifs/fs"
)

type entry struct {
	name   string
	kind   byte // 'd', 'f' or 'l'
	size   uint64
	target string
	ino    uint64
	kids   map[string]*entry
	sorted []*entry
}

func (e *entry) mode() uint32 {
	switch e.kind {
	case 'd':
		return syscall.S_IFDIR | 0o555
	case 'l':
		return syscall.S_IFLNK | 0o777
	}
	return syscall.S_IFREG | 0o444
}

func (e *entry) attr(out *fuse.Attr) {
	out.Mode = e.mode()
	out.Size = e.size
	if e.kind == 'l' {
		out.Size = uint64(len(e.target))
	}
	out.Blocks = (out.Size + 511) / 512
	out.Blksize = 4096
	out.Nlink = 1
	out.Ino = e.ino
}

type node struct {
	gofs.Inode
	e *entry
}

var (
	_ = (gofs.NodeLookuper)((*node)(nil))
	_ = (gofs.NodeReaddirer)((*node)(nil))
	_ = (gofs.NodeGetattrer)((*node)(nil))
	_ = (gofs.NodeReadlinker)((*node)(nil))
	_ = (gofs.NodeOpener)((*node)(nil))
	_ = (gofs.NodeReader)((*node)(nil))
)

func (n *node) Lookup(ctx context.Context, name string, out *fuse.EntryOut) (*gofs.Inode, syscall.Errno) {
	c := n.e.kids[name]
	if c == nil {
		return nil, syscall.ENOENT
	}
	c.attr(&out.Attr)
	return n.NewInode(ctx, &node{e: c}, gofs.StableAttr{Mode: c.mode() & syscall.S_IFMT, Ino: c.ino}), 0
}

func (n *node) Readdir(ctx context.Context) (gofs.DirStream, syscall.Errno) {
	out := make([]fuse.DirEntry, 0, len(n.e.sorted))
	for _, c := range n.e.sorted {
		out = append(out, fuse.DirEntry{Name: c.name, Mode: c.mode() & syscall.S_IFMT, Ino: c.ino})
	}
	return gofs.NewListDirStream(out), 0
}

func (n *node) Getattr(ctx context.Context, fh gofs.FileHandle, out *fuse.AttrOut) syscall.Errno {
	n.e.attr(&out.Attr)
	return 0
}

func (n *node) Readlink(ctx context.Context) ([]byte, syscall.Errno) {
	return []byte(n.e.target), 0
}

func (n *node) Open(ctx context.Context, flags uint32) (gofs.FileHandle, uint32, syscall.Errno) {
	return nil, fuse.FOPEN_DIRECT_IO | fuse.FOPEN_NOFLUSH, 0
}

var pattern = func() []byte {
	b := make([]byte, 1<<20)
	for i := range b {
		b[i] = 'a' + byte(i%26)
		if i%64 == 63 {
			b[i] = '\n'
		}
	}
	return b
}()

func (n *node) Read(ctx context.Context, fh gofs.FileHandle, dest []byte, off int64) (fuse.ReadResult, syscall.Errno) {
	if uint64(off) >= n.e.size {
		return fuse.ReadResultData(nil), 0
	}
	size := min(uint64(len(dest)), n.e.size-uint64(off), uint64(len(pattern)))
	return fuse.ReadResultData(pattern[:size]), 0
}

func load(path string) (*entry, int, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, 0, err
	}
	root := &entry{kind: 'd', ino: 1, kids: map[string]*entry{}}
	count := 0
	add := func(parent *entry, name string, kind byte) *entry {
		if c := parent.kids[name]; c != nil {
			return c
		}
		h := fnv.New64a()
		fmt.Fprintf(h, "%d/%s", parent.ino, name)
		c := &entry{name: name, kind: kind, ino: h.Sum64() | 2}
		if kind == 'd' {
			c.kids = map[string]*entry{}
		}
		parent.kids[name] = c
		count++
		return c
	}
	fields := bytes.Split(data, []byte{0})
	for i := 0; i+3 < len(fields); i += 4 {
		kind, size, p, target := fields[i], fields[i+1], string(fields[i+2]), string(fields[i+3])
		p = strings.TrimPrefix(p, "./")
		if p == "." || p == "" {
			continue
		}
		parts := strings.Split(p, "/")
		at := root
		for _, dir := range parts[:len(parts)-1] {
			at = add(at, dir, 'd')
		}
		e := add(at, parts[len(parts)-1], kind[0])
		e.kind = kind[0]
		if e.kind == 'd' && e.kids == nil {
			e.kids = map[string]*entry{}
		}
		e.size, _ = strconv.ParseUint(string(size), 10, 64)
		e.target = target
	}
	var sortAll func(e *entry)
	sortAll = func(e *entry) {
		for _, c := range e.kids {
			e.sorted = append(e.sorted, c)
			sortAll(c)
		}
		slices.SortFunc(e.sorted, func(a, b *entry) int { return strings.Compare(a.name, b.name) })
	}
	sortAll(root)
	return root, count, nil
}

func main() {
	if len(os.Args) != 3 {
		fmt.Fprintln(os.Stderr, "usage: gofloor MANIFEST MOUNTPOINT")
		os.Exit(2)
	}
	root, n, err := load(os.Args[1])
	if err != nil {
		log.Fatal(err)
	}
	server, err := pifs.MountNodes(os.Args[2], &node{e: root}, slog.New(slog.NewTextHandler(os.Stderr, nil)))
	if err != nil {
		log.Fatal(err)
	}
	fmt.Fprintf(os.Stderr, "gofloor: %d names on %s\n", n, os.Args[2])
	if prof := os.Getenv("GOFLOOR_CPUPROFILE"); prof != "" {
		f, err := os.Create(prof)
		if err != nil {
			log.Fatal(err)
		}
		pprof.StartCPUProfile(f)
		defer pprof.StopCPUProfile()
	}
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, syscall.SIGTERM)
	go func() { <-sig; server.Unmount() }()
	server.Wait()
}
