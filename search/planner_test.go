package search

import (
	"context"
	"database/sql"
	"testing"
)

// TestStablePlans: every connection of an index has the planner's
// stability guarantee (planner.go): the driver's connection is as pifs
// reads it, and SQLite reports the setting on. It fails when the driver
// changes its connection (the index then works a third slower on a
// project's search) or when the setting is not applied.
func TestStablePlans(t *testing.T) {
	store := oracleStore(t)
	x := openIndex(t, store, Options{})
	build(t, x, store)
	if got := find(t, x, "NEEDLE-7f3a9c"); len(got) == 0 {
		t.Fatal("no hits for the planted needle")
	}
	if n := x.unstable.Load(); n != 0 {
		t.Fatalf("%d connections without the planner's stability guarantee", n)
	}
	for name, db := range map[string]*sql.DB{"writer": x.w, "readers": x.r, "files": x.rf} {
		conn, err := db.Conn(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		var stable bool
		if err := conn.Raw(func(dc any) error { stable = stablePlans(dc); return nil }); err != nil {
			t.Fatal(err)
		}
		conn.Close()
		if !stable {
			t.Errorf("%s: a connection without the planner's stability guarantee", name)
		}
	}
	// Something that is not the driver's connection is left alone.
	if stablePlans(struct{ db uintptr }{1}) || stablePlans(&struct{ db, tls uintptr }{1, 2}) {
		t.Error("stablePlans took another type for the driver's connection")
	}
}
