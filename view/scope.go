package view

// inRoot is a value of the store's scope.
type inRoot struct{ v *View }

func (inRoot) scope() Scope { return Scope{} }

// inProject is a value of a project's scope ("": the store's).
type inProject struct {
	v       *View
	project string
}

func (p inProject) scope() Scope { return Scope{project: p.project} }

// sessionPart is a value inside a session folder (or the folder itself).
type sessionPart interface {
	session() sessionRef
}

func (p inSession) session() sessionRef { return p.s }

// inSession is a value of a session's scope.
type inSession struct{ s sessionRef }

func (p inSession) scope() Scope { return p.s.scope() }
