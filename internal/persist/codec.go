package persist

import (
	"encoding/binary"
	"errors"
	"math"
)

// Encoder lays out a fact's fields: numbers as varints, strings and bytes
// preceded by their length. The zero value is ready to use.
type Encoder struct{ b []byte }

func (e *Encoder) Uvarint(v uint64) { e.b = binary.AppendUvarint(e.b, v) }
func (e *Encoder) Varint(v int64)   { e.b = binary.AppendVarint(e.b, v) }
func (e *Encoder) Bool(v bool) {
	if v {
		e.b = append(e.b, 1)
	} else {
		e.b = append(e.b, 0)
	}
}

// Float64 writes an integral value that fits as a varint, anything else
// as its 8 bytes: token counts and times are integers.
func (e *Encoder) Float64(v float64) {
	if i := int64(v); float64(i) == v && !(v == 0 && math.Signbit(v)) && i > -1<<52 && i < 1<<52 {
		e.b = append(e.b, 0)
		e.b = binary.AppendVarint(e.b, i)
		return
	}
	e.b = append(e.b, 1)
	e.b = binary.LittleEndian.AppendUint64(e.b, math.Float64bits(v))
}

func (e *Encoder) Bytes(v []byte) {
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

func (e *Encoder) String(v string) {
	e.b = binary.AppendUvarint(e.b, uint64(len(v)))
	e.b = append(e.b, v...)
}

// Data is what was written.
func (e *Encoder) Data() []byte { return e.b }

// Decoder reads what an Encoder wrote; after the first error every read
// gives zero and Err tells.
type Decoder struct {
	b   []byte
	err error
}

// NewDecoder reads b.
func NewDecoder(b []byte) *Decoder { return &Decoder{b: b} }

var errShort = errors.New("persist: a fact does not decode")

func (d *Decoder) Err() error { return d.err }
func (d *Decoder) Len() int   { return len(d.b) }

func (d *Decoder) Uvarint() uint64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Uvarint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *Decoder) Varint() int64 {
	if d.err != nil {
		return 0
	}
	v, n := binary.Varint(d.b)
	if n <= 0 {
		d.err = errShort
		return 0
	}
	d.b = d.b[n:]
	return v
}

func (d *Decoder) Bool() bool {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShort
		return false
	}
	v := d.b[0]
	d.b = d.b[1:]
	if v > 1 {
		d.err = errShort
	}
	return v == 1
}

func (d *Decoder) Float64() float64 {
	if d.err != nil || len(d.b) == 0 {
		d.err = errShort
		return 0
	}
	kind := d.b[0]
	d.b = d.b[1:]
	switch kind {
	case 0:
		return float64(d.Varint())
	case 1:
		if len(d.b) < 8 {
			d.err = errShort
			return 0
		}
		v := math.Float64frombits(binary.LittleEndian.Uint64(d.b))
		d.b = d.b[8:]
		return v
	}
	d.err = errShort
	return 0
}

// Bytes returns the next byte string; it aliases the decoded buffer.
func (d *Decoder) Bytes() []byte {
	n := d.Uvarint()
	if d.err != nil {
		return nil
	}
	if n > uint64(len(d.b)) {
		d.err = errShort
		return nil
	}
	v := d.b[:n:n]
	d.b = d.b[n:]
	return v
}

func (d *Decoder) Text() string { return string(d.Bytes()) }
