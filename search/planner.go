package search

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"reflect"
	"unsafe"

	"modernc.org/libc"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// FTS5 finds a word's pages in a segment with a statement of its own
// ("SELECT pgno FROM %_idx WHERE segid=? AND term<=? ..."), stepped once
// for every word in every segment at the start of every query. This
// SQLite lets its planner read the words bound to such a statement, and
// then compiles the statement again each time another word is bound:
// 70-85% of the cost of finding a word in a segment, about a third of a
// project's search of a common word (its 200 sessions are 200 such
// starts). The planner's stability guarantee (SQLITE_DBCONFIG_ENABLE_QPSG)
// turns that off: a plan no longer depends on a bound value, which none
// of the index's statements needs (no LIKE, no partial index).

// stableDB opens dsn as sql.Open("sqlite", dsn) does, on a driver of its
// own whose connections have the planner's stability guarantee; opened is
// told of each connection whether it has it.
func stableDB(dsn string, opened func(stable bool)) *sql.DB {
	d := &sqlite.Driver{}
	d.RegisterConnectionHook(func(c sqlite.ExecQuerierContext, _ string) error {
		opened(stablePlans(c))
		return nil
	})
	return sql.OpenDB(connector{d, dsn})
}

type connector struct {
	d   *sqlite.Driver
	dsn string
}

func (c connector) Connect(context.Context) (driver.Conn, error) { return c.d.Open(c.dsn) }
func (c connector) Driver() driver.Driver                        { return c.d }

// stablePlans turns on the planner's stability guarantee of a connection
// of the driver and tells whether it is on. The driver gives no call for
// sqlite3_db_config but for its own options: its connection's handle and
// thread state are read by name and type, so that a driver whose
// connection is made otherwise is left as it is (false) rather than
// misread, and the index only slower (TestStablePlans fails then).
func stablePlans(c any) bool {
	v := reflect.ValueOf(c)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return false
	}
	db, tls := v.Elem().FieldByName("db"), v.Elem().FieldByName("tls")
	if !db.IsValid() || db.Kind() != reflect.Uintptr || db.Uint() == 0 ||
		!tls.IsValid() || tls.Type() != reflect.TypeFor[*libc.TLS]() || tls.IsNil() {
		return false
	}
	t := (*libc.TLS)(tls.UnsafePointer())
	// sqlite3_db_config(db, op, int onoff, int *pRes): the arguments in a
	// list of 8-byte slots, as the driver passes its own options.
	va := libc.Xmalloc(t, 16)
	res := libc.Xmalloc(t, 4)
	if va == 0 || res == 0 {
		libc.Xfree(t, va)
		libc.Xfree(t, res)
		return false
	}
	defer libc.Xfree(t, va)
	defer libc.Xfree(t, res)
	*cInt32(res) = 0
	rc := sqlite3.Xsqlite3_db_config(t, uintptr(db.Uint()), sqlite3.SQLITE_DBCONFIG_ENABLE_QPSG, libc.VaList(va, int32(1), res))
	return rc == sqlite3.SQLITE_OK && *cInt32(res) == 1
}

// cInt32 is the int32 at p, in memory of the C library's heap (not Go's).
func cInt32(p uintptr) *int32 { return (*int32)(unsafe.Add(nil, p)) }
