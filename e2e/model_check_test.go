package e2e

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"sort"
	"strings"

	"github.com/pifs/pifs/internal/names"
	"github.com/pifs/pifs/internal/oracle"
	"github.com/pifs/pifs/sessions/schema"
)

// piEntry is what the model needs of one of pi's entries.
type piEntry struct {
	Type       string          `json:"type"`
	ID         any             `json:"id"`
	ParentID   any             `json:"parentId"`
	CustomType string          `json:"customType"`
	TargetID   any             `json:"targetId"`
	Label      any             `json:"label"`
	Message    json.RawMessage `json:"message"`
}

func (e piEntry) isLeafRecord() bool { return e.Type == "custom" && e.CustomType == "pifs.leaf" }

// piModel is pi's view of a session with what the mount derives from it:
// the leaf as pifs reads it and the tips it lists (pifs leaf records are
// never tips: the entry they point at is).
type piModel struct {
	v       *oracle.View
	entries []piEntry
	ids     []string // string ids, file order, once each
	leaf    string
	tips    []string          // sorted
	labels  map[string]string // id → label, as pi's getLabel
	// labelNames maps each label text to the entry labels/ shows for it.
	labelNames map[string]string
}

func newPiModel(v *oracle.View) (*piModel, error) {
	p := &piModel{v: v, labels: map[string]string{}}
	if !v.Valid {
		return nil, fmt.Errorf("pi cannot read the session: %v", v.Error)
	}
	if len(v.Errors) > 0 {
		return nil, fmt.Errorf("pi failed on parts of the session: %v", v.Errors)
	}
	seen := map[string]bool{}
	records := map[string]bool{}
	for _, raw := range v.Entries {
		var e piEntry
		if err := json.Unmarshal(raw, &e); err != nil {
			return nil, err
		}
		p.entries = append(p.entries, e)
		if id, ok := e.ID.(string); ok && !seen[id] {
			seen[id] = true
			p.ids = append(p.ids, id)
		}
		if id, ok := e.ID.(string); ok && e.isLeafRecord() {
			records[id] = true
		}
	}
	if n := len(p.entries); n > 0 {
		last := p.entries[n-1]
		if last.isLeafRecord() {
			if s, ok := last.ParentID.(string); ok {
				p.leaf = s
			}
		} else if s, ok := v.LeafID.(string); ok {
			p.leaf = s
		}
	}
	// A tip: not a record, and every child is a childless record.
	for id := range v.Paths {
		if records[id] {
			continue
		}
		tip := true
		for _, c := range v.Children[id] {
			cs, _ := c.(string)
			if !records[cs] || len(v.Children[cs]) > 0 {
				tip = false
			}
		}
		if tip {
			p.tips = append(p.tips, id)
		}
	}
	sort.Strings(p.tips)
	for id, raw := range v.Labels {
		var s string
		json.Unmarshal(raw, &s)
		p.labels[id] = s
	}
	// labels/ names each text once: the entry that got it last (README,
	// "Names"), not the last in pi's label Map, where an entry relabelled
	// keeps its place.
	setAt := map[string]int{} // id → index of the label entry that set its label
	for i, e := range p.entries {
		if id, ok := e.TargetID.(string); ok && e.Type == "label" {
			setAt[id] = i
		}
	}
	p.labelNames = map[string]string{}
	for id, l := range p.labels {
		if other, ok := p.labelNames[l]; !ok || setAt[id] > setAt[other] {
			p.labelNames[l] = id
		}
	}
	return p, nil
}

// contextAt is pi's context with id as the leaf: its own, or that of a
// record child of it (a record adds nothing to the context).
func (p *piModel) contextAt(id string) (json.RawMessage, bool) {
	if c, ok := p.v.Contexts[id]; ok {
		return c, true
	}
	for _, c := range p.v.Children[id] {
		if cs, ok := c.(string); ok {
			if ctx, ok := p.v.Contexts[cs]; ok && p.isRecord(cs) {
				return ctx, true
			}
		}
	}
	return nil, false
}

func (p *piModel) isRecord(id string) bool {
	for _, e := range p.entries {
		if e.ID == id {
			return e.isLeafRecord()
		}
	}
	return false
}

// viewDiff collects the differences between a session's views in the mount
// and pi's view of its file.
type viewDiff []string

func (d *viewDiff) add(format string, args ...any) { *d = append(*d, fmt.Sprintf(format, args...)) }

func jsonEqual(a, b []byte) bool {
	var x, y any
	if json.Unmarshal(a, &x) != nil || json.Unmarshal(b, &y) != nil {
		return false
	}
	return reflect.DeepEqual(x, y)
}

func readDirNames(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	var names []string
	for _, e := range ents {
		names = append(names, e.Name())
	}
	return names, err
}

// pathIDs turns a branch folder's NNNN-<kind>-<id>.json names into ids.
func pathIDs(names []string) []string {
	var ids []string
	for _, n := range names {
		if m := entryFileName.FindStringSubmatch(n); m != nil {
			ids = append(ids, m[1])
		}
	}
	return ids
}

// entryFileName matches a path's entry file, NNNN-<kind>-<id>.json, and
// captures the id; the other names of a branch folder are its views.
var entryFileName = regexp.MustCompile(`^[0-9]{4,}-[^-]+-(.+)\.json$`)

// compareViews compares every view of the session folder dir with pi's view
// of file (whose bytes were data when pi read them); with deep, every
// entries/<id>.json too (else only the leaf's).
func compareViews(dir string, data []byte, p *piModel, deep bool) viewDiff {
	var d viewDiff
	read := func(name string) []byte {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			d.add("read %s: %v", name, err)
		}
		return b
	}
	if got := read("session.jsonl"); !bytes.Equal(got, data) {
		d.add("session.jsonl: %d bytes, the file %d", len(got), len(data))
	}
	if got := string(read("leaf")); got != p.leaf+"\n" {
		d.add("leaf reads %q, pi's leaf (record mapped) %q", got, p.leaf)
	}
	name := strings.TrimSuffix(string(read("name")), "\n")
	if p.v.Name != nil && name != *p.v.Name || p.v.Name == nil && name != "" {
		d.add("name %q, pi %v", name, p.v.Name)
	}
	if got := read("context.json"); !jsonEqual(got, p.v.ContextAtLeaf) {
		d.add("context.json differs from pi's buildSessionContext at the leaf:\n got %.400s\nwant %.400s", got, p.v.ContextAtLeaf)
	}
	// entries/: every id.
	got, err := readDirNames(filepath.Join(dir, "entries"))
	if err != nil {
		d.add("entries/: %v", err)
	}
	var want []string
	for _, id := range p.ids {
		want = append(want, names.Encode(id)+".json")
	}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		d.add("entries/ lists %d names, pi has %d ids: %v vs %v", len(got), len(want), tail(got, 5), tail(want, 5))
	}
	// The entry files are pi's entries.
	for i := len(p.entries) - 1; i >= 0; i-- {
		if id, ok := p.entries[i].ID.(string); ok {
			if b := read("entries/" + names.Encode(id) + ".json"); !jsonEqual(b, p.v.Entries[i]) {
				d.add("entries/%s.json is not pi's entry:\n got %.300s\nwant %.300s", id, b, p.v.Entries[i])
			}
		}
		if !deep {
			break
		}
	}
	// branches/: the tips, each with pi's path and context.
	got, err = readDirNames(filepath.Join(dir, "branches"))
	if err != nil {
		d.add("branches/: %v", err)
	}
	want = nil
	for _, tip := range p.tips {
		want = append(want, names.Encode(tip))
	}
	sort.Strings(want)
	if !reflect.DeepEqual(got, want) {
		d.add("branches/ lists %v, pi's tips (records mapped) %v", got, want)
	}
	check := append([]string(nil), p.tips...)
	if p.leaf != "" {
		check = append(check, p.leaf)
	}
	for _, id := range check {
		bdir := "branches/" + names.Encode(id)
		if ctx, ok := p.contextAt(id); ok {
			if b := read(bdir + "/context.json"); !jsonEqual(b, ctx) {
				d.add("%s/context.json differs from pi's context there", bdir)
			}
		}
		listed, err := readDirNames(filepath.Join(dir, bdir))
		if err != nil {
			d.add("%s: %v", bdir, err)
		}
		var path []string
		for _, x := range p.v.Paths[id] {
			path = append(path, names.Encode(fmt.Sprint(x)))
		}
		if got := pathIDs(listed); !reflect.DeepEqual(got, path) {
			d.add("%s holds %v, pi's path %v", bdir, tail(got, 6), tail(path, 6))
		}
	}
	// tree/: every entry once, childless records left out.
	var inTree []string
	filepath.WalkDir(filepath.Join(dir, "tree"), func(path string, e os.DirEntry, err error) error {
		if err != nil {
			d.add("tree/: %v", err)
			return err
		}
		if !e.IsDir() {
			inTree = append(inTree, pathIDs([]string{e.Name()})...)
		}
		return nil
	})
	want = nil
	for id := range p.v.Paths {
		if p.isRecord(id) && len(p.v.Children[id]) == 0 {
			continue
		}
		want = append(want, names.Encode(id))
	}
	sort.Strings(inTree)
	sort.Strings(want)
	if !reflect.DeepEqual(inTree, want) {
		d.add("tree/ holds %d entries, pi's tree %d (records left out)", len(inTree), len(want))
	}
	// labels/.
	links := map[string]string{}
	labelNames, err := readDirNames(filepath.Join(dir, "labels"))
	if err != nil {
		d.add("labels/: %v", err)
	}
	for _, l := range labelNames {
		target, err := os.Readlink(filepath.Join(dir, "labels", l))
		if err != nil {
			d.add("labels/%s: %v", l, err)
			continue
		}
		links[strings.TrimSuffix(filepath.Base(target), ".json")] = l
	}
	wantLinks := map[string]string{}
	for l, id := range p.labelNames {
		wantLinks[names.Encode(id)] = names.Encode(l)
	}
	if !reflect.DeepEqual(links, wantLinks) {
		d.add("labels/ %v, pi's labels %v", links, wantLinks)
	}
	// info.json.
	var info struct {
		ID, Cwd, FirstMessage, Created, Modified, Leaf string
		Name                                           *string
		ParentSession                                  any
		MessageCount, EntryCount                       int
		Tips                                           []string
		Usage                                          schema.Usage
	}
	if err := json.Unmarshal(read("info.json"), &info); err != nil {
		d.add("info.json: %v", err)
	}
	if pi := p.v.Info; pi != nil {
		if info.ID != fmt.Sprint(pi.ID) || info.Cwd != pi.Cwd || info.MessageCount != pi.MessageCount ||
			info.FirstMessage != pi.FirstMessage || (pi.Created != nil && info.Created != *pi.Created) ||
			(pi.Modified != nil && info.Modified != *pi.Modified) || !reflect.DeepEqual(info.Name, pi.Name) ||
			fmt.Sprint(info.ParentSession) != fmt.Sprint(pi.ParentSessionPath) {
			d.add("info.json %+v\npi's list %+v", info, *pi)
		}
	} else {
		d.add("pi does not list the session")
	}
	if p.v.Usage != nil && info.Usage != *p.v.Usage {
		d.add("info.json usage %+v, pi %+v", info.Usage, *p.v.Usage)
	}
	if info.EntryCount != len(p.v.Entries) {
		d.add("info.json entryCount %d, pi %d", info.EntryCount, len(p.v.Entries))
	}
	if info.Leaf != p.leaf {
		d.add("info.json leaf %q, pi %q", info.Leaf, p.leaf)
	}
	tips := append([]string(nil), info.Tips...)
	sort.Strings(tips)
	if !reflect.DeepEqual(tips, p.tips) && !(len(tips) == 0 && len(p.tips) == 0) {
		d.add("info.json tips %v, pi %v", tips, p.tips)
	}
	return d
}
