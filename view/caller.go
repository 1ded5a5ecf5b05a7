package view

import "github.com/pifs/pifs/internal/access"

// Who asks, and what the store's files let them do, are package access's:
// the view checks every change it makes for a caller against the caller's
// rights (see access.go) and shows each thing with its owner (node.go).

// Caller is who asks for a change: the process, and the user and group it
// runs as.
type Caller = access.Caller

// Owner is the owner and permission bits of a file or folder of the store.
type Owner = access.Owner
