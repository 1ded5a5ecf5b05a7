package view

// What an append to a session tells the kernel: the views of the session
// that show its whole state (info.json, context.json, the transcripts,
// leaf, current, labels/...), and in the folders of one name per entry
// (entries/, branches/, tree/) their attributes and listing and the names
// the new entries take, never the names the kernel already holds there:
// an entry's file never changes, and the path to an entry stays the same
// while the file only grows. So an append costs what it added, however
// many names of the session the kernel has looked up.

// PerEntry tells whether a name of a session folder is a folder of one name
// per entry (see Grew).
func PerEntry(name string) bool {
	for _, h := range heavyFolders {
		if h == name {
			return true
		}
	}
	return false
}

// What the kernel must be told when the store changes: the view says which
// of its names and nodes a change touches (Notices), as paths from the
// mount's root; the layer that answers the kernel tells it of those it
// holds. The cost follows the changes and what the kernel holds of them,
// never the size of the store.

// Action is what the kernel is told of a node.
type Action int

const (
	// Forget: the kernel forgets the name the path ends in, and the node
	// under it is let go.
	Forget Action = iota + 1
	// ForgetHeld is Forget, when the node under the name is held.
	ForgetHeld
	// Refresh: the node's attributes and content are dropped, and those
	// of every node below it but of the files whose content never changes
	// (Kept); names below it that no longer resolve are forgotten.
	Refresh
	// Reset is Refresh, the files that never change too: their session
	// file was rewritten.
	Reset
	// Attrs: the node's attributes (a folder's listing too) are dropped.
	Attrs
	// Shed: the kernel forgets the name the path ends in, a folder, when
	// it holds names in it; the node stays for whoever uses it (someone's
	// working directory, an open file below it), and a new path to it is
	// looked up again.
	Shed
	// Grew is Refresh of a session folder whose file grew, but that of
	// its folders of one name per entry (PerEntry) only their own
	// attributes and listing are dropped: the names in them that changed
	// come in notices of their own.
	Grew
	// ShedNames: the kernel forgets every name it holds in the folder the
	// path ends in, and so the nodes below them; the folder itself stays.
	ShedNames
)

// Notice is one thing the kernel must be told: Do to the node at Path,
// the names from the mount's root; "*" stands for every name the kernel
// holds there.
type Notice struct {
	Path []string
	Do   Action
}

// heavyFolders are a session folder's folders of one name per entry: a
// walk (grep -r, tar) leaves the kernel holding a node for each name in
// them, and pifs one for each node the kernel holds.
var heavyFolders = []string{entriesName, branchesName, treeName}
