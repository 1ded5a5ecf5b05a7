package sessions

import (
	"bytes"
	"hash/crc32"
	"io"
	"math"
)

// MaxLine is the length from which a line is one pi cannot read. Its
// readers hold a line, or more, in one JavaScript string, and V8's strings
// stop at 536,870,888 UTF-16 code units: on a longer line pi's session
// list and SessionManager.open throw RangeError ("Invalid string length").
// Every reader here skips such a line, as pi skips a malformed one, and
// never holds it: a session is shown with the lines pi could read.
const MaxLine = 512 << 20

// scanChunk is how much of a file a streaming look reads at a time.
const scanChunk = 1 << 20

// longLine is a line of at least the maximum length, found by findLong:
// [start, end) in the file, end just past its newline (or at the end of
// what was looked at, when it has none).
type longLine struct {
	start, end int64
	newline    bool
	// sum is the running checksum (castagnoli) of the file up to end, from
	// the sum findLong was given at its start; tail is the last bytes
	// before end (at most 32), lineSum the checksum of the line alone.
	sum, lineSum uint32
	tail         []byte
}

// findLong looks at f from from to to, which starts a line, and returns
// its lines of limit bytes or more (newline excluded), without holding
// them. sum is the checksum of the file up to from.
func findLong(f io.ReaderAt, from, to, limit int64, sum uint32) ([]longLine, error) {
	var out []longLine
	buf := make([]byte, scanChunk)
	var prev []byte // the end of the previous chunk, for a tail across chunks
	lineStart := from
	var lineSum uint32
	for off := from; off < to; {
		n, err := f.ReadAt(buf[:min(int64(len(buf)), to-off)], off)
		if n == 0 && err != nil {
			return nil, err
		}
		data := buf[:n]
		for pos := 0; pos < len(data); {
			nl := bytes.IndexByte(data[pos:], '\n')
			if nl < 0 {
				sum = crc32.Update(sum, castagnoli, data[pos:])
				lineSum = crc32.Update(lineSum, castagnoli, data[pos:])
				break
			}
			end := pos + nl + 1
			sum = crc32.Update(sum, castagnoli, data[pos:end])
			lineSum = crc32.Update(lineSum, castagnoli, data[pos:end])
			if at := off + int64(end); at-1-lineStart >= limit {
				out = append(out, longLine{start: lineStart, end: at, newline: true, sum: sum, lineSum: lineSum, tail: tailOf(prev, data[:end])})
			}
			lineStart, lineSum = off+int64(end), 0
			pos = end
		}
		prev = append(prev[:0], data[max(0, len(data)-32):]...)
		off += int64(n)
	}
	if to-lineStart >= limit {
		out = append(out, longLine{start: lineStart, end: to, sum: sum, lineSum: lineSum})
	}
	return out, nil
}

// tailOf is the last 32 bytes of prev followed by data.
func tailOf(prev, data []byte) []byte {
	if len(data) >= 32 {
		return append([]byte(nil), data[len(data)-32:]...)
	}
	t := append(append([]byte(nil), prev...), data...)
	return t[max(0, len(t)-32):]
}

// lineEnd finds the end of the line that starts at from in f: the offset
// just past its newline (nl true), or that of the end of f. It reads f in
// chunks it does not keep, and stops once the line is limit bytes long (end
// is from+limit then, nl false): such a line is skipped, and where it ends
// is found by skipLine. has tells whether the line holds sub, when sub is
// given.
func lineEnd(f io.ReaderAt, from, limit int64, sub []byte) (end int64, nl, has bool, err error) {
	buf := make([]byte, scanChunk+len(sub))
	keep := 0 // the end of the previous chunk, for sub across chunks
	for off := from; off-from < limit; {
		n, err := f.ReadAt(buf[keep:keep+int(min(scanChunk, limit-(off-from)))], off)
		data := buf[:keep+n]
		i := bytes.IndexByte(data[keep:], '\n')
		if i >= 0 {
			data = data[:keep+i]
		}
		has = has || (sub != nil && bytes.Contains(data, sub))
		if i >= 0 {
			return off + int64(i) + 1, true, has, nil
		}
		if n == 0 || err != nil {
			if err != nil && err != io.EOF {
				return 0, false, false, err
			}
			return off + int64(n), false, has, nil
		}
		off += int64(n)
		if len(sub) > 0 {
			keep = copy(buf, data[max(0, len(data)-len(sub)+1):])
		}
	}
	return from + limit, false, has, nil
}

// skipLine is where the line through at ends: just past its next newline,
// or the end of f (nl false).
func skipLine(f io.ReaderAt, at int64) (end int64, nl bool, err error) {
	end, nl, _, err = lineEnd(f, at, math.MaxInt64/2, nil)
	return end, nl, err
}
