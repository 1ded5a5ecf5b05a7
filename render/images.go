package render

import (
	"bytes"
	"encoding/base64"
	"errors"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/pifs/pifs/internal/jsjson"
	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/render/parts"
	"github.com/pifs/pifs/sessions"
)

// An image block ({"type":"image","data":…,"mimeType":…}) holds its
// picture as a base64 JSON string. pifs reads that string as a browser
// reads the base64 of a data: URI (the WHATWG "forgiving base64"): JSON
// escapes decoded first (pi writes none, but "\/" is valid JSON), ASCII
// white space dropped, at most two "=" at the end when the length is a
// multiple of four, nothing else outside the alphabet. The size of the
// picture follows from the count of base64 characters, so that stat knows
// it without decoding; what a browser would refuse is broken, and shows
// as no file.

// ErrBrokenImage tells that an image block's data is not base64 a
// browser would decode.
var ErrBrokenImage = errors.New("image data is not valid base64")

// b64Class classifies the ASCII bytes of base64 text: 1 the alphabet, 2
// white space, 3 the pad; 0 anything else.
var b64Class = func() (t [256]uint8) {
	for _, c := range []byte("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/") {
		t[c] = 1
	}
	for _, c := range []byte("\t\n\f\r ") {
		t[c] = 2
	}
	t['='] = 3
	return t
}()

// b64Chars calls fn with each character of the text of a raw JSON string
// that base64 cares about (the alphabet and "="), white space dropped; it
// reports false when the string holds anything else.
func b64Chars(raw []byte, fn func(c byte)) bool {
	if jsjson.KindOf(raw) != jsjson.String {
		return false
	}
	body := raw[1 : len(raw)-1]
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\\' {
			r, next, ok := jsjson.DecodeRune(body, i)
			if !ok || r >= utf8.RuneSelf {
				return false
			}
			c, i = byte(r), next-1
		}
		switch b64Class[c] {
		case 0:
			return false
		case 2:
			continue
		}
		fn(c)
	}
	return true
}

// imageText is what an image's data holds: n base64 characters, pad "="
// after them; ok false when it is broken.
func imageText(raw []byte) (n, pad int, ok bool) {
	ok = b64Chars(raw, func(c byte) {
		if c == '=' {
			pad++
		} else if pad > 0 {
			pad = 3 // a character after a pad: broken below
		} else {
			n++
		}
	})
	if !ok || pad > 2 || (pad > 0 && (n+pad)%4 != 0) || n%4 == 1 {
		return 0, 0, false
	}
	return n, pad, true
}

// ImageSize is the number of bytes the base64 data of an image block (a
// raw JSON string) decodes to, counted without decoding; ok is false when
// the data is broken.
func ImageSize(data []byte) (int64, bool) {
	n, _, ok := imageText(data)
	if !ok {
		return 0, false
	}
	return int64(n)/4*3 + int64(n%4*3/4), true
}

// DecodeImage decodes the base64 data of an image block (a raw JSON
// string): exactly ImageSize(data) bytes, or ErrBrokenImage.
func DecodeImage(data []byte) ([]byte, error) {
	size, ok := ImageSize(data)
	if !ok {
		return nil, ErrBrokenImage
	}
	text := appendImageText(make([]byte, 0, size/3*4+4), data)
	out := make([]byte, size)
	k, err := base64.StdEncoding.Decode(out, padded(text))
	if err != nil || int64(k) != size {
		return nil, ErrBrokenImage
	}
	return out, nil
}

// padded pads base64 text without its pad to a multiple of four.
func padded(text []byte) []byte {
	for len(text)%4 != 0 {
		text = append(text, '=')
	}
	return text
}

// appendImageText appends the base64 text of valid image data without
// white space, escapes or pad: what a data: URI holds.
func appendImageText(dst, data []byte) []byte {
	if jsjson.KindOf(data) == jsjson.String {
		body := data[1 : len(data)-1]
		plain := true
		for _, c := range body {
			if b64Class[c] != 1 {
				plain = false
				break
			}
		}
		if plain {
			return append(dst, body...)
		}
	}
	b64Chars(data, func(c byte) {
		if c != '=' {
			dst = append(dst, c)
		}
	})
	return dst
}

// ImageExt is the file extension for an image's mimeType (a raw JSON
// value): png, jpg, gif or webp for those formats, bin for any other,
// SVG included, so that no image file opens as a document that runs
// script.
func ImageExt(mime []byte) string {
	m, _ := jsjson.StringValue(mime)
	switch strings.ToLower(strings.TrimSpace(m)) {
	case "image/png":
		return "png"
	case "image/jpeg", "image/jpg":
		return "jpg"
	case "image/gif":
		return "gif"
	case "image/webp":
		return "webp"
	}
	return "bin"
}

// ImageName is the file name of the n-th (from 1) image block of entry
// id: <id>-<n>.<ext>, the id spelled as names.EncodeIn spells it with
// room for the rest.
func ImageName(id string, n int, mime []byte) string {
	tail := "-" + strconv.Itoa(n) + "." + ImageExt(mime)
	return names.EncodeIn(id, len(tail)) + tail
}

// Image is one image block of a session, as images/ lists it.
type Image struct {
	Name  string
	Entry *sessions.Entry
	N     int    // its position among the entry's image blocks, from 1
	Mime  []byte // the block's mimeType, raw JSON
	Data  []byte // the block's data, raw JSON
	Size  int64  // the decoded size
	// Broken tells that the data is not valid base64: the image has no
	// file.
	Broken bool
}

// Images are the image blocks of entries (all of a session's), in file
// order, named. An entry without an id has no image files.
func Images(entries []*sessions.Entry) []Image {
	var out []Image
	for _, e := range entries {
		if e.ID == "" || !mayHoldImage(e.Raw) {
			continue
		}
		n := 0
		for w := parts.Of(e); w.Next(); {
			p := &w.Part
			if p.Kind != parts.Image {
				continue
			}
			n++
			size, ok := ImageSize(p.Data)
			out = append(out, Image{Name: ImageName(e.ID, n, p.Mime), Entry: e, N: n, Mime: p.Mime, Data: p.Data, Size: size, Broken: !ok})
		}
	}
	return out
}

// mayHoldImage tells whether an entry's line may hold an image block: it
// names the block type, plainly or (a \u escape) spelled otherwise. The
// walk of its parts is taken only then.
func mayHoldImage(raw []byte) bool {
	return bytes.Contains(raw, []byte(`"image"`)) || bytes.Contains(raw, []byte(`\u`))
}

// sniffImage is the type an image block is shown inline as: its
// mimeType when that is PNG, JPEG, GIF or WebP and the data's first
// bytes are that format's signature; ok is false for any other (an SVG,
// a type the bytes belie, broken data), which the page never inlines.
func sniffImage(mime, data []byte) (string, bool) {
	var want string
	switch ImageExt(mime) {
	case "png":
		want = "image/png"
	case "jpg":
		want = "image/jpeg"
	case "gif":
		want = "image/gif"
	case "webp":
		want = "image/webp"
	default:
		return "", false
	}
	if _, ok := ImageSize(data); !ok {
		return "", false
	}
	// The first 16 base64 characters are the first 12 bytes.
	var text [16]byte
	n := 0
	b64Chars(data, func(c byte) {
		if n < len(text) && c != '=' {
			text[n] = c
			n++
		}
	})
	var head [12]byte
	k, _ := base64.StdEncoding.Decode(head[:], padded(text[:n:n]))
	h := head[:k]
	var ok bool
	switch want {
	case "image/png":
		ok = bytes.HasPrefix(h, []byte("\x89PNG\r\n\x1a\n"))
	case "image/jpeg":
		ok = bytes.HasPrefix(h, []byte("\xff\xd8\xff"))
	case "image/gif":
		ok = bytes.HasPrefix(h, []byte("GIF87a")) || bytes.HasPrefix(h, []byte("GIF89a"))
	case "image/webp":
		ok = len(h) == 12 && string(h[:4]) == "RIFF" && string(h[8:12]) == "WEBP"
	}
	return want, ok
}
