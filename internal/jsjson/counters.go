package jsjson

import (
	"reflect"
	"sync/atomic"
	"unicode"
)

// Counters is a struct's exported integer and atomic.Int64 fields (s is
// the struct or a pointer to one) as a JSON object, each named as the
// field, its first letter lower case, in the fields' order; other fields
// are left out.
func Counters(s any) []byte {
	var o Builder
	rv := reflect.ValueOf(s)
	for rv.Kind() == reflect.Pointer {
		rv = rv.Elem()
	}
	rt := rv.Type()
	for i := range rt.NumField() {
		f := rt.Field(i)
		if !f.IsExported() {
			continue
		}
		name := []rune(f.Name)
		name[0] = unicode.ToLower(name[0])
		fv := rv.Field(i)
		switch {
		case fv.CanInt():
			o.Number(string(name), float64(fv.Int()))
		case f.Type == reflect.TypeFor[atomic.Int64]() && fv.CanAddr():
			o.Number(string(name), float64(fv.Addr().Interface().(*atomic.Int64).Load()))
		}
	}
	return o.Bytes()
}
