package view

import "github.com/pifs/pifs/sessions"

// trashState is the trash as the mount shows it: the listing of the
// trashed sessions, kept until the trash changes (see sessions.TrashList).
type trashState = sessions.TrashList
