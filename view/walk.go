package view

import (
	"time"
)

// entryFolder is a folder of entry files within one session; a walk lists
// its files by name alone (see walkGuess).
type entryFolder interface {
	sessionPart
	entryFiles()
}

// ListsNamesOnly is told that a listing of f starts now; it says whether the
// listing gives f's files by name alone, with no attributes, because a
// walk is listing (see walkGuess).
func (v *View) ListsNamesOnly(f Folder) bool {
	e, ok := f.(entryFolder)
	return ok && v.walk.Listing(e.session().key(), time.Now())
}

// LookedUpNameOnly is told that a file listed by name alone was looked up:
// the walk stats what it lists.
func (v *View) LookedUpNameOnly() { v.walk.LookedUp(time.Now()) }

// ListedNamesOnly is told that a name was listed without attributes.
func (v *View) ListedNamesOnly() { v.walk.Alone.Add(1) }
