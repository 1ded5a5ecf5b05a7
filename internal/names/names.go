// Package names spells ids and labels as file names, and numbers the
// mount's files and folders: what a name or an inode number is depends only
// on what it shows, the same in every mount.
package names

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"unicode/utf8"
)

// How ids and labels become file names.
//
// An id (entry id, session id) or a label is spelled as a file name thus:
//
//  1. '%' becomes "%25", '/' becomes "%2F" and NUL becomes "%00"; every other
//     byte is kept as it is.
//  2. If the result is made only of dots ("." or ".." or "..."), every dot
//     becomes "%2E".
//  3. If the result is empty, or the whole file name holding it would be over
//     255 bytes, it is spelled instead as its first bytes (at most 64, cut so
//     that no %XX escape and no UTF-8 sequence is split), then "%~", then the
//     first 16 hex digits of the SHA-256 of the original id.
//
// A name without "%~" decodes by undoing step 1 and 2, and only the
// canonical spelling of an id is accepted, so each name means exactly one id.
// A "%~" name cannot appear otherwise (a '%' of the id is always "%25"), and
// is resolved by comparing it with the spelling of the candidate ids.
const (
	// MaxLen is the longest file name.
	MaxLen       = 255
	hashedPrefix = 64
	hashMark     = "%~"
)

// EncodeIn spells s as a file name that leaves room bytes for what the
// containing file name adds (a suffix such as ".json").
func EncodeIn(s string, room int) string {
	e := escape(s)
	if e != "" && len(e)+room <= MaxLen {
		return e
	}
	return hashedName(s, e)
}

// Encode spells an id or label as a file name of its own.
func Encode(s string) string { return EncodeIn(s, 0) }

func escape(s string) string {
	if s != "" && strings.Trim(s, ".") == "" {
		return strings.Repeat("%2E", len(s))
	}
	if !strings.ContainsAny(s, "%/\x00") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '%':
			b.WriteString("%25")
		case '/':
			b.WriteString("%2F")
		case 0:
			b.WriteString("%00")
		default:
			b.WriteByte(c)
		}
	}
	return b.String()
}

func hashedName(s, escaped string) string {
	sum := sha256.Sum256([]byte(s))
	cut := min(len(escaped), hashedPrefix)
	// Do not split a %XX escape.
	if i := strings.LastIndexByte(escaped[:cut], '%'); i >= 0 && i+3 > cut {
		cut = i
	}
	// Do not split a UTF-8 sequence.
	for cut > 0 && cut < len(escaped) && !utf8.RuneStart(escaped[cut]) {
		cut--
	}
	return escaped[:cut] + hashMark + hex.EncodeToString(sum[:8])
}

// isHashed tells that a name is the hashed spelling of a long or empty id.
func isHashed(name string) bool { return strings.Contains(name, hashMark) }

// Decode returns the id a name spells, when it is the canonical,
// non-hashed spelling of one.
func Decode(name string) (string, bool) {
	if name == "" || isHashed(name) {
		return "", false
	}
	var s string
	if strings.Trim(strings.ReplaceAll(name, "%2E", "."), ".") == "" {
		s = strings.ReplaceAll(name, "%2E", ".")
	} else if strings.IndexByte(name, '%') < 0 {
		s = name
	} else {
		var b strings.Builder
		for i := 0; i < len(name); i++ {
			c := name[i]
			if c != '%' {
				b.WriteByte(c)
				continue
			}
			if i+3 > len(name) {
				return "", false
			}
			switch name[i+1 : i+3] {
			case "25":
				b.WriteByte('%')
			case "2F":
				b.WriteByte('/')
			case "00":
				b.WriteByte(0)
			default:
				return "", false
			}
			i += 2
		}
		s = b.String()
	}
	if escape(s) != name {
		return "", false
	}
	return s, true
}

// Match resolves name, spelled with room bytes left, to one of the ids
// given by each (which calls fn for every candidate until it returns true).
// direct looks an id up by itself.
func Match(name string, room int, direct func(id string) bool, each func(fn func(id string) bool)) (string, bool) {
	if !isHashed(name) {
		id, ok := Decode(name)
		if !ok || EncodeIn(id, room) != name || !direct(id) {
			return "", false
		}
		return id, true
	}
	var found string
	each(func(id string) bool {
		if EncodeIn(id, room) == name {
			found = id
			return true
		}
		return false
	})
	return found, found != ""
}
