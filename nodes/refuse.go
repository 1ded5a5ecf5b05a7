package nodes

// refusal is a refused write: the sentence that says why and what to do
// instead (for the session's errors file and the log), and the sentinel
// that gives the errno.
type refusal struct {
	kind error
	msg  string
}

func (e *refusal) Error() string { return e.msg }
func (e *refusal) Unwrap() error { return e.kind }
