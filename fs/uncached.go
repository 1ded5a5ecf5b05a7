package fs

import (
	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/nodes"
)

// A node whose attributes the kernel must never keep (an events file,
// whose size is each reader's own) answers with a timeout of
// nodes.AttrNever, since go-fuse takes 0 for the mount's default; the
// kernel is told 0 here. It would keep 1 ns for a clock tick. Likewise
// the name of a value per caller.

func (w *noOpendir) Lookup(cancel <-chan struct{}, header *fuse.InHeader, name string, out *fuse.EntryOut) fuse.Status {
	st := w.RawFileSystem.Lookup(cancel, header, name, out)
	if out.AttrValid == 0 && out.AttrValidNsec == uint32(nodes.AttrNever) {
		out.AttrValidNsec = 0
	}
	// A name whose showing depends on who asks (view.PerCaller), kept
	// for a tick, would be given to the next caller within it.
	if out.EntryValid == 0 && out.EntryValidNsec == uint32(nodes.AttrNever) {
		out.EntryValidNsec = 0
	}
	return st
}

func (w *noOpendir) GetAttr(cancel <-chan struct{}, in *fuse.GetAttrIn, out *fuse.AttrOut) fuse.Status {
	st := w.RawFileSystem.GetAttr(cancel, in, out)
	if out.AttrValid == 0 && out.AttrValidNsec == uint32(nodes.AttrNever) {
		out.AttrValidNsec = 0
	}
	return st
}
