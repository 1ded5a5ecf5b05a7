package search

import (
	"context"
	"path/filepath"
	"sort"

	"github.com/pifs/pifs/internal/recent"
)

// What the mount's by-file/ shows of a path (see Folder): the folders
// below it that lead to touched files, its modified/ folder, and links to
// the sessions that touched the file, each session name once (the
// newest), none that a folder's name takes.

// ModifiedName names the folder of a file's sessions that changed it.
const ModifiedName = "modified"

// FileFolder is by-file/'s folder of a path.
type FileFolder struct {
	// Names are the folders in it, sorted: the names below the path that
	// lead to touched files, and ModifiedName.
	Names []string
	// Modified tells that ModifiedName among Names is the modified/
	// folder (a session changed the file), not a name below the path.
	Modified bool
	// Touches are the sessions to link, the last touched first.
	Touches []FileTouch
}

// Folder is by-file/'s folder of path (absolute), in scope; modified: its
// modified/ folder, which holds the sessions that changed the file alone.
func (x *Index) Folder(ctx context.Context, path string, scope Scope, modified bool) (*FileFolder, error) {
	ts, err := x.TouchedBy(ctx, path, scope)
	if err != nil {
		return nil, err
	}
	f := &FileFolder{}
	taken := map[string]bool{}
	if !modified {
		if f.Names, err = x.TouchedUnder(ctx, path, scope); err != nil {
			return nil, err
		}
		for _, n := range f.Names {
			taken[n] = true
		}
		if f.Modified = anyModified(ts); f.Modified && !taken[ModifiedName] {
			taken[ModifiedName] = true
			f.Names = append(f.Names, ModifiedName)
			sort.Strings(f.Names)
		}
	}
	for _, t := range ts {
		if (t.Modified || !modified) && !taken[t.Session] {
			taken[t.Session] = true
			f.Touches = append(f.Touches, t)
		}
	}
	return f, nil
}

// What a name in a folder of by-file/ is (see FolderLookup).
const (
	NoName       = iota
	NameBelow    // a folder below the path
	NameModified // the file's modified/
	NameSession  // a session that touched the file
)

// FolderLookup finds name in by-file/'s folder of path as Folder lists
// it, without listing the folder: what it is, and for a session its
// touch. It costs the file's touches and Leads of the name.
func (x *Index) FolderLookup(ctx context.Context, path, name string, scope Scope, modified bool) (int, FileTouch, error) {
	ts, err := x.TouchedBy(ctx, path, scope)
	if err != nil {
		return NoName, FileTouch{}, err
	}
	if !modified {
		if name == ModifiedName && anyModified(ts) {
			return NameModified, FileTouch{}, nil
		}
		if ok, err := x.Leads(ctx, filepath.Join(path, name), scope); err != nil || ok {
			return NameBelow, FileTouch{}, err
		}
	}
	for _, t := range ts {
		if t.Session == name && (t.Modified || !modified) {
			return NameSession, t, nil
		}
	}
	return NoName, FileTouch{}, nil
}

// Lookup is what FolderLookup gives for name in this folder.
func (f *FileFolder) Lookup(name string) (int, FileTouch) {
	for _, n := range f.Names {
		switch {
		case n != name:
		case f.Modified && n == ModifiedName:
			return NameModified, FileTouch{}
		default:
			return NameBelow, FileTouch{}
		}
	}
	for _, t := range f.Touches {
		if t.Session == name {
			return NameSession, t
		}
	}
	return NoName, FileTouch{}
}

func anyModified(ts []FileTouch) bool {
	for _, t := range ts {
		if t.Modified {
			return true
		}
	}
	return false
}

// Folders keeps the last folders of by-file/ listed and the last names
// looked up in folders not listed, for the index's version they were
// made at: by-file/ is live (the kernel keeps none of its names), so
// ls -l of a folder looks each name up after the listing, and the
// folder's path again for each.
type Folders struct {
	listed recent.Cache[FolderKey, *FileFolder]
	looked recent.Cache[folderName, folderFound]
}

// FolderKey is what a folder depends on besides the index: its path,
// modified/ or not, and whose sight (Scope's Visible, told apart by the
// caller: equal Sights see the same sessions) in which project.
type FolderKey struct {
	Path, Project string
	Modified      bool
	Sight         uint64
	gen           uint64
}

type folderName struct {
	in   FolderKey
	name string
}

type folderFound struct {
	kind  int
	touch FileTouch
}

// Folder is x.Folder(k.Path, scope, k.Modified), kept.
func (fs *Folders) Folder(ctx context.Context, x *Index, k FolderKey, scope Scope) (*FileFolder, error) {
	k.gen = x.Gen()
	return fs.listed.Get(k, func() (*FileFolder, error) { return x.Folder(ctx, k.Path, scope, k.Modified) })
}

// Lookup is x.FolderLookup of name, from the folder's listing when it is
// kept, else kept itself.
func (fs *Folders) Lookup(ctx context.Context, x *Index, k FolderKey, name string, scope Scope) (int, FileTouch, error) {
	k.gen = x.Gen()
	if f, ok := fs.listed.Peek(k); ok {
		kind, t := f.Lookup(name)
		return kind, t, nil
	}
	found, err := fs.looked.Get(folderName{k, name}, func() (folderFound, error) {
		kind, t, err := x.FolderLookup(ctx, k.Path, name, scope, k.Modified)
		return folderFound{kind, t}, err
	})
	return found.kind, found.touch, err
}
