package usage

// What only the tests of package usage_test read: the reports take a
// Collector's records and totals through Facts and Report.

// Label names the record's model as "provider/model" (Unknown when the
// entry names neither).
func (r *Record) Label() string { return label(r.Provider, r.Model) }

// Records returns the records so far, in file order. The slice is shared:
// later Adds only append to it, so it may be kept and read while the
// Collector grows, but not modified.
func (c *Collector) Records() []Record { return c.records[:len(c.records):len(c.records)] }

// Totals returns pi's /session totals of the entries added so far.
func (c *Collector) Totals() Totals {
	t := c.totals
	t.finish()
	return t
}
