package names

import (
	"strconv"
	"strings"
)

// PathName names an entry of a root→entry path by its position on the
// path (1 for the root), its kind and its id: NNNN-<kind>-<id><ext>, the
// position zero-padded to at least four digits. A kind over 32 bytes is
// hashed like a long id.
func PathName(pos int, kind, id, ext string) string {
	var buf [20]byte
	num := strconv.AppendInt(buf[:0], int64(pos), 10)
	pad := max(0, 4-len(num))
	kind = EncodeIn(kind, MaxLen-32)
	room := pad + len(num) + 1 + len(kind) + 1 + len(ext)
	id = EncodeIn(id, room)
	var b strings.Builder
	b.Grow(room + len(id))
	b.WriteString("0000"[:pad])
	b.Write(num)
	b.WriteByte('-')
	b.WriteString(kind)
	b.WriteByte('-')
	b.WriteString(id)
	b.WriteString(ext)
	return b.String()
}

// PathPos reads the position at the start of a PathName.
func PathPos(name string) (int, bool) {
	i := strings.IndexByte(name, '-')
	if i < 4 {
		return 0, false
	}
	n, err := strconv.Atoi(name[:i])
	if err != nil || n < 1 {
		return 0, false
	}
	return n, true
}

// PathOrder calls fn with the positions 1 to n in the order their
// PathNames sort in: those below 1000, padded to four digits, in order;
// then each of four digits, each followed by the longer numbers it begins
// ("1000-" sorts before "10000-", which sorts before "1001-"). A folder of
// a path's entries is listed in this order and needs no sorting.
func PathOrder(n int, fn func(pos int)) {
	for p := 1; p <= min(n, 999); p++ {
		fn(p)
	}
	var from func(p int)
	from = func(p int) {
		fn(p)
		for q := p * 10; q <= min(n, p*10+9); q++ {
			from(q)
		}
	}
	for p := 1000; p <= min(n, 9999); p++ {
		from(p)
	}
}
