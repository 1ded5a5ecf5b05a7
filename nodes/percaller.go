package nodes

import (
	"time"

	"github.com/hanwen/go-fuse/v2/fuse"
	"github.com/pifs/pifs/view"
)

// forCaller keeps the kernel from giving a name whose showing depends on
// who asks (see view.PerCaller) to another caller: it keeps the name and
// its attributes for no longer than a clock tick (go-fuse reads a zero
// timeout as "the default"), so the next lookup comes back here with
// its caller.
func (r *Root) forCaller(n view.Node, out *fuse.EntryOut) {
	if n != nil && r.v.PerCaller(n) {
		out.SetEntryTimeout(time.Nanosecond)
		out.SetAttrTimeout(time.Nanosecond)
	}
}
