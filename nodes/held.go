package nodes

import (
	"context"

	"github.com/hanwen/go-fuse/v2/fs"
)

// The nodes the kernel holds count against the cache's budget (see
// view.View.NodeAdded).

var (
	_ = (fs.NodeOnAdder)((*dir)(nil))
	_ = (fs.NodeOnForgetter)((*dir)(nil))
	_ = (fs.NodeOnAdder)((*file)(nil))
	_ = (fs.NodeOnForgetter)((*file)(nil))
	_ = (fs.NodeOnAdder)((*link)(nil))
	_ = (fs.NodeOnForgetter)((*link)(nil))
)

func (d *dir) OnAdd(ctx context.Context)  { d.r.v.NodeAdded() }
func (d *dir) OnForget()                  { d.r.v.NodeForgotten() }
func (f *file) OnAdd(ctx context.Context) { f.r.v.NodeAdded() }
func (f *file) OnForget()                 { f.r.v.NodeForgotten() }
func (l *link) OnAdd(ctx context.Context) { l.r.v.NodeAdded() }
func (l *link) OnForget()                 { l.r.v.NodeForgotten() }
