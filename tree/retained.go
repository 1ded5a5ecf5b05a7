package tree

import (
	"strings"

	"github.com/pifs/pifs/internal/jsjson"
)

// retainedTail checks a compaction's retainedTail: the messages that stand
// for everything before the compaction when the context is built from it
// (a self-contained checkpoint), an array of messages, each a JSON object
// with one of the roles a message has. They are kept as given
// (canonical): they are copies of messages, and a timestamp missing from
// one is not made up.
func retainedTail(o *object) ([]byte, error) {
	rt := o.get("retainedTail")
	if jsjson.KindOf(rt) != jsjson.Array {
		return nil, o.bad("retainedTail", `an array of messages such as [{"role":"user","content":"TEXT"}]`)
	}
	var err error
	i := 0
	jsjson.Elements(rt, func(m []byte) bool {
		role, ok := jsjson.Str(m, "role")
		switch {
		case jsjson.KindOf(m) != jsjson.Object:
			err = refuse(ErrInvalid, `%s: retainedTail[%d] must be a message, a JSON object with "role"`, o.what, i)
		case !ok || !contains(MessageRoles, role):
			got := "none"
			if v := jsjson.Get(m, "role"); v != nil {
				got = string(jsjson.AppendCanonical(nil, v))
			}
			err = refuse(ErrInvalid, `%s: retainedTail[%d]: role %s; use one of: %s`, o.what, i, got, strings.Join(MessageRoles, ", "))
		}
		i++
		return err == nil
	})
	if err != nil {
		return nil, err
	}
	return jsjson.AppendCanonical(nil, rt), nil
}
