package view

import "sync"

// grower is a File whose open file follows the session: a rendering that,
// while the session grows under it, grows by what the new entries add
// (tail -f). Where the new rendering does not extend the one served (the
// leaf moved elsewhere, the file was rewritten), the open file keeps its
// snapshot to the end, and a new open sees the new rendering.
type grower interface {
	File
	// start gives the content at open and the state to extend it from.
	start() (data []byte, state any, err error)
	// extend gives the bytes the session's current version adds to what
	// state rendered (none when it adds nothing or is no extension).
	extend(state any) (more []byte, next any, err error)
}

// Growing is an open file that follows its session.
type Growing struct {
	src grower

	mu    sync.Mutex
	data  []byte
	state any
}

// Follow opens f to follow its session, when f is a file that does; nil
// when it is not.
func (v *View) Follow(f File) (*Growing, error) {
	g, ok := f.(grower)
	if !ok {
		return nil, nil
	}
	data, state, err := g.start()
	if err != nil {
		return nil, err
	}
	return &Growing{src: g, data: data, state: state}, nil
}

// grow adds what the session added since the last look. g.mu is held.
func (g *Growing) grow() {
	more, next, err := g.src.extend(g.state)
	if err != nil || next == nil {
		return
	}
	g.state = next
	if len(more) > 0 {
		// A new array: earlier reads may still hold slices of the old.
		g.data = append(g.data[:len(g.data):len(g.data)], more...)
	}
}

// Size is the size the file has grown to.
func (g *Growing) Size() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	g.grow()
	return len(g.data)
}

// Read reads n bytes at off, looking for more when the read goes past
// what it has.
func (g *Growing) Read(off int64, n int) []byte {
	g.mu.Lock()
	defer g.mu.Unlock()
	if off+int64(n) > int64(len(g.data)) {
		g.grow()
	}
	return Window(g.data, off, n)
}
