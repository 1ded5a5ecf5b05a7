package search

import (
	"context"
	"path/filepath"
	"sort"
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
